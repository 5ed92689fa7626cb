//! What the destination has that the source does not: the entries `--delete` removes (each
//! counted with everything below it, for `--max-delete`), the directories standing where the
//! source has another kind of entry, and the files a moved source file may be renamed (or
//! cloned) from. Entries the exclusion patterns left out of DST are never deleted without
//! `--delete-excluded`: a directory holding some is emptied of the rest and kept. Nothing is
//! deleted when some source part could not be read (the plan is then made as without
//! `--delete`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_core::{Problem, ProblemKind};
use dedup_fs::{open_dir_at, open_dir_beneath};
use dedup_scan::{Entry, EntryKind, Metadata};
use rustix::fs::{statat, AtFlags, FileType, RawDir};

use super::merge::Merged;
use super::{Before, Context, Deletion, Plan, Refused};
use crate::rel_path::{join, split, under};
use crate::tree::Walked;

/// A destination file a moved source file may come from.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its path below DST once directories are renamed.
    pub at: Vec<u8>,
    /// Its path below DST as walked.
    pub orig: Vec<u8>,
    /// Its metadata.
    pub meta: Metadata,
    /// The deletion that removes it (itself, or a directory above it), with `--delete`.
    pub deletion: Option<usize>,
}

/// The deletions and move sources found.
#[derive(Debug, Default)]
pub struct Found {
    /// Destination files the source does not have.
    pub sources: Vec<Source>,
    /// The deletions (with `--delete`).
    pub deletions: Vec<Deletion>,
}

impl Found {
    /// Source `i` was renamed: it is no longer deleted.
    pub fn taken(&mut self, i: usize) {
        let s = &self.sources[i];
        if let Some(d) = s.deletion {
            let del = &mut self.deletions[d];
            del.entries = del.entries.saturating_sub(1);
            if del.rel == s.at {
                del.entries = 0;
            }
        }
    }

    /// Put the deletions into the plan.
    pub fn finish(self, plan: &mut Plan) {
        plan.deletions = self.deletions.into_iter().filter(|d| d.entries > 0).collect();
    }
}

/// Settle the extras and the directories in the way.
pub fn settle(cx: &Context<'_>, walked: &Walked, m: &mut Merged) -> Found {
    let consumed = std::mem::take(&mut m.consumed);
    let kept = std::mem::take(&mut m.kept);
    let mut r = Removals { cx, walked, consumed: &consumed, kept: &kept, found: Found::default() };
    for extra in std::mem::take(&mut m.extras) {
        if consumed.contains(&extra.orig) {
            continue;
        }
        if extra.excluded {
            // Only with --delete-excluded: the walk did not list it, so it is counted here.
            if cx.deleting {
                let entries = count_tree(cx.dst_root, &extra.orig);
                r.found.deletions.push(Deletion { rel: extra.at, kind: None, entries });
            }
            continue;
        }
        r.remove(&extra.orig, &extra.at, &extra.entry);
    }
    for over in std::mem::take(&mut m.over_dirs) {
        let (i, a) = over.at;
        let at = join(&m.plan.dirs[i].rel, m.plan.dirs[i].actions[a].name());
        let refusal = if !cx.options.delete {
            "a non-empty directory stands where the source has another kind of entry; --delete \
             replaces it"
        } else if !cx.deleting {
            "a non-empty directory stands where the source has another kind of entry; not \
             replaced, since some source entries could not be read"
        } else {
            "a directory holding excluded entries stands where the source has another kind of \
             entry; left as it is"
        };
        let before =
            if consumed.contains(&over.orig) {
                Before::Nothing
            } else if walked.dst.dir(&over.orig).is_some_and(|d| {
                d.entries.is_empty() && d.excluded.is_empty() && d.strays.is_empty()
            }) {
                Before::EmptyDir
            } else if cx.deleting && !r.kept.contains(&over.orig) {
                let deletion = Some(r.found.deletions.len());
                let entries = r.subtree(&over.orig, &at, deletion);
                r.found.deletions.push(Deletion { rel: at, kind: Some(EntryKind::Dir), entries });
                Before::DeletedDir
            } else {
                m.plan.refused.push(Refused { rel: at, reason: refusal });
                m.drop.push((i, a));
                continue;
            };
        m.plan.dirs[i].actions[a].before = before;
        if before != Before::DeletedDir && m.plan.dirs[i].actions[a].src.kind == EntryKind::File {
            m.new_files.push((i, a));
        }
    }
    let found = r.found;
    m.consumed = consumed;
    m.kept = kept;
    found
}

/// Destination directories (paths as walked) that hold entries the exclusion patterns left out
/// (but with `--delete-excluded`), or backups ([`crate::backup::Backup::protects`]), at any
/// depth: with `--delete` they are emptied of everything else but kept, and never renamed (the
/// excluded entries would move with them).
pub fn holding_excluded(cx: &Context<'_>, walked: &Walked) -> HashSet<Vec<u8>> {
    let mut kept = HashSet::new();
    let holds_backups = |rel: &[u8], dir: &crate::tree::Dir| {
        cx.backup.is_some_and(|b| {
            let names =
                dir.entries.iter().map(|e| &e.name).chain(dir.excluded.iter().map(|x| &x.0));
            names.into_iter().any(|n| b.protects(&join(rel, n), n))
        })
    };
    for (rel, dir) in &walked.dst.dirs {
        let holds_excluded = !dir.excluded.is_empty() && !cx.options.delete_excluded;
        if !holds_excluded && !holds_backups(rel, dir) {
            continue;
        }
        let mut p = rel.as_slice();
        while kept.insert(p.to_vec()) && !p.is_empty() {
            p = split(p).0;
        }
    }
    kept
}

/// The deletions and move sources of the destination's extra entries.
struct Removals<'a> {
    cx: &'a Context<'a>,
    walked: &'a Walked,
    /// Destination directories renamed, by path as walked: not deleted.
    consumed: &'a [Vec<u8>],
    /// Destination directories that hold excluded entries.
    kept: &'a HashSet<Vec<u8>>,
    found: Found,
}

impl Removals<'_> {
    /// The destination entry `entry` at `orig` (at `at` once directories are renamed), which
    /// the source does not have: its files may be renamed or cloned from, and with `--delete`
    /// it is deleted, whole unless it holds excluded entries.
    fn remove(&mut self, orig: &[u8], at: &[u8], entry: &Entry) {
        let deleting = self.cx.deleting;
        if entry.kind == EntryKind::Dir && deleting && self.kept.contains(orig) {
            // Emptied of all but the excluded entries (and the directories leading to them),
            // as rsync does: its parts are removed one by one.
            let why = "holds entries excluded from the run: kept, with them";
            let e = std::io::Error::other(why);
            self.cx
                .observer
                .problem(Problem::note(under(self.cx.dst_root, orig), ProblemKind::Io(e)));
            let Some(dir) = self.walked.dst.dir(orig) else { return };
            for e in &dir.entries {
                let (o, a) = (join(orig, &e.name), join(at, &e.name));
                if !self.consumed.contains(&o) && !self.cx.is_backup(&o, &e.name) {
                    self.remove(&o, &a, e);
                }
            }
            return;
        }
        let deletion = deleting.then_some(self.found.deletions.len());
        let entries = self.subtree(orig, at, deletion);
        if entry.kind == EntryKind::File {
            if let Some(meta) = entry.meta {
                let source = Source { at: at.to_vec(), orig: orig.to_vec(), meta, deletion };
                self.found.sources.push(source);
            }
        }
        if deleting {
            let kind = Some(entry.kind);
            self.found.deletions.push(Deletion { rel: at.to_vec(), kind, entries });
        }
    }

    /// Entries in the destination subtree at `orig` (itself included), less renamed-away parts
    /// and our own temporary names (removed before, as strays); its files are added to the
    /// sources at their path below `at`. A directory renamed away is skipped whole; `orig` may
    /// itself lie below a renamed one (an entry of a renamed directory the source lacks).
    fn subtree(&mut self, orig: &[u8], at: &[u8], deletion: Option<usize>) -> u64 {
        let Some(dir) = self.walked.dst.dir(orig) else { return 1 };
        let mut count = 1;
        for (name, _) in &dir.excluded {
            count += count_tree(self.cx.dst_root, &join(orig, name));
        }
        for e in &dir.entries {
            let (o, a) = (join(orig, &e.name), join(at, &e.name));
            if self.consumed.contains(&o) {
                continue;
            }
            match e.kind {
                EntryKind::Dir => count += self.subtree(&o, &a, deletion),
                _ => {
                    count += 1;
                    if let (EntryKind::File, Some(meta)) = (e.kind, e.meta) {
                        self.found.sources.push(Source { at: a, orig: o, meta, deletion });
                    }
                }
            }
        }
        count
    }
}

/// Entries in the destination tree at `rel` that the walk did not list (an excluded one),
/// itself included: reached from DST's root without following a symlink, as the deletion will.
fn count_tree(dst_root: &Path, rel: &[u8]) -> u64 {
    let (parent, name) = split(rel);
    let Ok(root) = dedup_scan::open_dir(dst_root, true) else { return 1 };
    let Ok(dir) = open_dir_beneath(&root, parent) else { return 1 };
    count_at(&dir, OsStr::from_bytes(name))
}

fn count_at(dir: &OwnedFd, name: &OsStr) -> u64 {
    let is_dir = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
    if !is_dir {
        return 1;
    }
    let Ok(sub) = open_dir_at(dir, name) else { return 1 };
    let mut names = Vec::new();
    let mut buf = Vec::with_capacity(8 << 10);
    let mut raw = RawDir::new(&sub, buf.spare_capacity_mut());
    while let Some(Ok(entry)) = raw.next() {
        let n = entry.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push(n.to_vec());
        }
    }
    1 + names.iter().map(|n| count_at(&sub, OsStr::from_bytes(n))).sum::<u64>()
}
