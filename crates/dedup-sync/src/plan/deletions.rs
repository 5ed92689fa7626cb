//! What the destination has that the source does not: the entries `--delete` removes (each
//! counted with everything below it, for `--max-delete`), the directories standing where the
//! source has another kind of entry, and the files a moved source file may be renamed (or
//! cloned) from.

use std::path::Path;

use dedup_scan::{EntryKind, Metadata};

use super::dir_renames::within;
use super::merge::Merged;
use super::{Before, Context, Deletion, Plan, Refused};
use crate::tree::{join, under, Walked};

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
    let delete = cx.options.delete;
    let consumed = std::mem::take(&mut m.consumed);
    let mut found = Found::default();
    let extras = std::mem::take(&mut m.extras);
    for extra in extras {
        if consumed.contains(&extra.orig) {
            continue;
        }
        let deletion = delete.then_some(found.deletions.len());
        let entries = if extra.excluded {
            count_tree(&under(cx.dst_root, &extra.orig))
        } else {
            subtree(walked, &extra.orig, &extra.at, &consumed, deletion, &mut found.sources)
        };
        if extra.entry.kind == EntryKind::File && !extra.excluded {
            if let Some(meta) = extra.entry.meta {
                found.sources.push(Source {
                    at: extra.at.clone(),
                    orig: extra.orig,
                    meta,
                    deletion,
                });
            }
        }
        if delete {
            found.deletions.push(Deletion {
                rel: extra.at,
                kind: (!extra.excluded).then_some(extra.entry.kind),
                entries,
            });
        }
    }
    for over in std::mem::take(&mut m.over_dirs) {
        let (i, a) = over.at;
        let at = join(&m.plan.dirs[i].rel, m.plan.dirs[i].actions[a].name());
        let before = if consumed.contains(&over.orig) {
            Before::Nothing
        } else if walked
            .dst
            .dir(&over.orig)
            .is_some_and(|d| d.entries.is_empty() && d.excluded.is_empty() && d.strays.is_empty())
        {
            Before::EmptyDir
        } else if delete {
            let deletion = Some(found.deletions.len());
            let entries = subtree(walked, &over.orig, &at, &consumed, deletion, &mut found.sources);
            found.deletions.push(Deletion { rel: at, kind: Some(EntryKind::Dir), entries });
            Before::DeletedDir
        } else {
            let reason = "a non-empty directory stands where the source has another kind of \
                          entry; --delete replaces it";
            m.plan.refused.push(Refused { rel: at, reason });
            m.drop.push((i, a));
            continue;
        };
        m.plan.dirs[i].actions[a].before = before;
        if before != Before::DeletedDir && m.plan.dirs[i].actions[a].src.kind == EntryKind::File {
            m.new_files.push((i, a));
        }
    }
    m.consumed = consumed;
    found
}

/// Entries in the destination subtree at `orig` (itself included), less renamed-away parts;
/// its files are added to `sources` at their path below `at`.
fn subtree(
    walked: &Walked,
    orig: &[u8],
    at: &[u8],
    consumed: &[Vec<u8>],
    deletion: Option<usize>,
    sources: &mut Vec<Source>,
) -> u64 {
    let Some(dir) = walked.dst.dir(orig) else { return 1 };
    let mut count = 1 + dir.strays.len() as u64 + dir.excluded.len() as u64;
    for e in &dir.entries {
        let (o, a) = (join(orig, &e.name), join(at, &e.name));
        if consumed.iter().any(|c| within(&o, c)) {
            continue;
        }
        match e.kind {
            EntryKind::Dir => count += subtree(walked, &o, &a, consumed, deletion, sources),
            _ => {
                count += 1;
                if let (EntryKind::File, Some(meta)) = (e.kind, e.meta) {
                    sources.push(Source { at: a, orig: o, meta, deletion });
                }
            }
        }
    }
    count
}

/// Entries in a tree the walk did not list (an excluded one), itself included.
fn count_tree(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 1 };
    if !meta.is_dir() {
        return 1;
    }
    let Ok(list) = std::fs::read_dir(path) else { return 1 };
    1 + list.flatten().map(|e| count_tree(&path.join(e.file_name()))).sum::<u64>()
}
