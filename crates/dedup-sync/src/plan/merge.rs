//! The first planning pass: each listed source directory, in path order (parents first), merged
//! by name with its destination counterpart. Decides every directory's state and every
//! entry's action, and collects what the global steps need: the destination entries the source
//! does not have, the new files a moved destination file could provide, and the names where a
//! destination directory stands in the way.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use dedup_scan::{Entry, EntryKind};

use super::dir_renames::Candidates;
use super::links::Leaders;
use super::{Action, Before, Context, DirPlan, DirState, HardLink, Op, Plan, Refused};
use crate::compare::Verdict;
use crate::rel_path::join;
use crate::tree::Walked;

/// A destination entry at a name the source does not have.
#[derive(Debug, Clone)]
pub struct Extra {
    /// Its path below DST once directories are renamed.
    pub at: Vec<u8>,
    /// Its path below DST as walked.
    pub orig: Vec<u8>,
    /// The entry.
    pub entry: Entry,
    /// Left out by an exclusion glob (kind and metadata unknown).
    pub excluded: bool,
}

/// An action whose name holds a destination directory: made once that directory is renamed
/// away or deleted.
#[derive(Debug, Clone)]
pub struct OverDir {
    /// Index of the directory plan and of the action.
    pub at: (usize, usize),
    /// The directory's path below DST as walked.
    pub orig: Vec<u8>,
}

/// The first pass's result.
#[derive(Debug, Default)]
pub struct Merged {
    /// The plan so far.
    pub plan: Plan,
    /// Destination entries the source does not have, directories among them.
    pub extras: Vec<Extra>,
    /// New source files (directory plan index, action index), in plan order.
    pub new_files: Vec<(usize, usize)>,
    /// Actions waiting on a directory standing at their name.
    pub over_dirs: Vec<OverDir>,
    /// Files whose stamps cannot settle it: (directory index, action index, metadata
    /// differs, the destination file's path below DST as walked).
    pub verify: Vec<(usize, usize, bool, Vec<u8>)>,
    /// Destination directories renamed, by path below DST as walked.
    pub consumed: Vec<Vec<u8>>,
    /// Hard links already right, to make again if their leader is found to need a copy.
    pub held_links: Vec<HardLink>,
    /// Actions found to need nothing after all: (directory index, action index).
    pub drop: Vec<(usize, usize)>,
    /// Destination directories (paths as walked) holding excluded entries: kept, never renamed.
    pub kept: HashSet<Vec<u8>>,
}

/// Where a source directory's destination counterpart is, as walked.
#[derive(Debug, Clone)]
enum Counterpart {
    /// At this path below DST.
    At(Vec<u8>),
    /// Nowhere: everything inside is new.
    New,
}

/// The first pass.
pub fn merge(cx: &Context<'_>, walked: &Walked, kept: HashSet<Vec<u8>>) -> Merged {
    let mut rels: Vec<&Vec<u8>> = walked.src.dirs.keys().collect();
    rels.sort();
    let mut m = Merger {
        cx,
        walked,
        out: Merged { kept, ..Merged::default() },
        pairs: HashMap::new(),
        leaders: Leaders::default(),
        index: HashMap::new(),
        renames: None,
    };
    let root = Vec::new();
    let Some(src_root) = walked.src.dir(&root) else { return m.out };
    let root_entry = dir_entry(b"", src_root);
    match walked.dst.dir(&root) {
        Some(dst_root) => {
            let old = dir_entry(b"", dst_root);
            let set_meta = cx.rules.compare(&root_entry, &old) != Verdict::Same;
            m.push_dir(&root, root_entry, Some(old), DirState::Exists, Before::Nothing, set_meta);
            m.pairs.insert(root.clone(), Counterpart::At(root.clone()));
        }
        None => {
            m.push_dir(&root, root_entry, None, DirState::Create, Before::Nothing, true);
            m.pairs.insert(root.clone(), Counterpart::New);
        }
    }
    for rel in rels {
        let Some(pair) = m.pairs.get(rel).cloned() else { continue };
        m.merge_dir(rel, pair);
    }
    if let Some(r) = &m.renames {
        m.out.consumed = r.consumed().to_vec();
    }
    m.out
}

/// A directory as an entry, for comparing and setting its metadata like any entry's.
pub fn dir_entry(name: &[u8], dir: &crate::tree::Dir) -> Entry {
    Entry {
        name: name.to_vec(),
        kind: EntryKind::Dir,
        followed: false,
        meta: Some(dir.meta),
        target: None,
        xattrs: dir.xattrs.clone(),
    }
}

struct Merger<'a> {
    cx: &'a Context<'a>,
    walked: &'a Walked,
    out: Merged,
    pairs: HashMap<Vec<u8>, Counterpart>,
    leaders: Leaders,
    /// Plan index of each directory by path.
    index: HashMap<Vec<u8>, usize>,
    /// Built on first need: most runs have no new directory.
    renames: Option<Candidates>,
}

impl Merger<'_> {
    fn push_dir(
        &mut self,
        rel: &[u8],
        src: Entry,
        old: Option<Entry>,
        state: DirState,
        before: Before,
        set_meta: bool,
    ) -> usize {
        let listed = self.walked.src.dir(rel).is_some();
        self.index.insert(rel.to_vec(), self.out.plan.dirs.len());
        self.out.plan.dirs.push(DirPlan {
            rel: rel.to_vec(),
            src,
            old,
            state,
            before,
            set_meta,
            listed,
            actions: Vec::new(),
        });
        self.out.plan.dirs.len() - 1
    }

    fn merge_dir(&mut self, rel: &[u8], pair: Counterpart) {
        let walked = self.walked;
        let src = &walked.src.dirs[rel];
        let dst_rel = match &pair {
            Counterpart::At(p) => Some(p.clone()),
            Counterpart::New => None,
        };
        let dst = dst_rel.as_ref().and_then(|p| walked.dst.dir(p));
        let index = self.index[rel];
        let empty = Vec::new();
        let dst_entries = dst.map_or(&empty, |d| &d.entries);
        if dst.is_none() {
            // Everything here is new: one action per entry (less the subdirectories).
            self.out.plan.dirs[index].actions.reserve(src.entries.len());
        }
        // Names the exclusions leave out on one side only (a pattern for directories, an entry of
        // another kind on the other side): what stands in DST there is left as it is.
        let out_in = |excluded: &[(Vec<u8>, Option<EntryKind>)]| -> HashSet<Vec<u8>> {
            excluded.iter().map(|(n, _)| n.clone()).collect()
        };
        let src_out = out_in(&src.excluded);
        let dst_out = dst.map(|d| out_in(&d.excluded)).unwrap_or_default();
        let left_out = |set: &HashSet<Vec<u8>>, name: &[u8]| !set.is_empty() && set.contains(name);
        // With `--files-from`, what SRC lacks goes only where its whole contents are mirrored.
        let complete = self.cx.files.is_none_or(|f| f.complete(rel));
        let (mut i, mut j) = (0, 0);
        while i < src.entries.len() || j < dst_entries.len() {
            let order = match (src.entries.get(i), dst_entries.get(j)) {
                (Some(s), Some(d)) => s.name.cmp(&d.name),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => {
                    let name = &src.entries[i].name;
                    if left_out(&dst_out, name) {
                        let reason = "an entry the exclusions leave out stands here in DST; left \
                                      as it is";
                        self.out.plan.refused.push(Refused { rel: join(rel, name), reason });
                    } else {
                        self.entry(index, rel, dst_rel.as_deref(), &src.entries[i], None);
                    }
                    i += 1;
                }
                Ordering::Greater if !complete || left_out(&src_out, &dst_entries[j].name) => {
                    j += 1
                }
                Ordering::Greater if self.is_backup(dst_rel.as_deref(), &dst_entries[j].name) => {
                    j += 1
                }
                Ordering::Greater => {
                    let d = &dst_entries[j];
                    let orig = join(dst_rel.as_deref().unwrap_or_default(), &d.name);
                    self.out.extras.push(Extra {
                        at: join(rel, &d.name),
                        orig,
                        entry: d.clone(),
                        excluded: false,
                    });
                    j += 1;
                }
                Ordering::Equal => {
                    let d = &dst_entries[j];
                    self.entry(index, rel, dst_rel.as_deref(), &src.entries[i], Some(d));
                    i += 1;
                    j += 1;
                }
            }
        }
        if let (Some(d), true) = (dst, self.cx.options.delete_excluded && complete) {
            for (name, kind) in &d.excluded {
                let orig = join(dst_rel.as_deref().unwrap_or_default(), name);
                if self.cx.is_backup(&orig, name) {
                    continue;
                }
                self.out.extras.push(Extra {
                    at: join(rel, name),
                    orig,
                    entry: Entry {
                        name: name.clone(),
                        kind: kind.unwrap_or(EntryKind::File),
                        followed: false,
                        meta: None,
                        target: None,
                        xattrs: Vec::new(),
                    },
                    excluded: true,
                });
            }
        }
    }

    /// One name: `src` in the source, `dst` the destination entry of that name, if any.
    fn entry(
        &mut self,
        index: usize,
        rel: &[u8],
        dst_rel: Option<&[u8]>,
        src: &Entry,
        dst: Option<&Entry>,
    ) {
        // Not read whole (its attributes, a listing cut short above it): left as it is.
        let unread = &self.walked.unread;
        if !unread.is_empty() && unread.covers(&join(rel, &src.name)) {
            return;
        }
        if src.kind == EntryKind::Dir {
            let dst_path = dst_rel.map(|p| join(p, &src.name));
            return self.subdir(&join(rel, &src.name), dst_path, src, dst);
        }
        let Some(meta) = src.meta else { return };
        // Paths are joined only where they are kept: most files are up to date and need none.
        let dst_path = || dst_rel.map(|p| join(p, &src.name));
        let before = match dst {
            None => Before::Nothing,
            Some(d) if d.kind == EntryKind::Dir => {
                let orig = dst_path().unwrap_or_default();
                let act = self.add(index, src, dst, Op::Create, Before::EmptyDir);
                self.out.over_dirs.push(OverDir { at: (index, act), orig });
                return;
            }
            Some(d) => Before::Entry(d.kind),
        };
        let verdict = dst.map(|d| (d, self.verdict(src, d, rel)));
        // Only an entry of several links can be in a hard-link group (`Leaders::follow`): files,
        // and symlinks, FIFOs, sockets and devices linked as they are (`ln` of a symlink).
        if meta.nlink > 1 {
            let keeps = verdict.and_then(|(d, v)| {
                let kept = matches!(v, Verdict::Same | Verdict::Meta | Verdict::Verify { .. });
                kept.then(|| d.meta.map(|m| m.id()))
            });
            let path = join(rel, &src.name);
            if let Some(leader) = self.leaders.follow(&meta, &path, keeps.flatten()) {
                let linked = dst.and_then(|d| d.meta).map(|m| m.id());
                let link = HardLink { rel: path, leader: leader.rel, before, kind: src.kind };
                if leader.dst.is_none() || linked != leader.dst {
                    self.out.plan.links.push(link);
                } else {
                    // Linked right, unless the leader's bytes turn out to differ.
                    self.out.held_links.push(link);
                }
                return;
            }
        }
        let Some((_, verdict)) = verdict else {
            let act = self.add(index, src, None, Op::Create, before);
            if src.kind == EntryKind::File {
                self.out.new_files.push((index, act));
            }
            return;
        };
        match verdict {
            Verdict::Same => {}
            Verdict::Meta => {
                self.add(index, src, dst, Op::Meta, before);
            }
            Verdict::Verify { meta } => {
                let act = self.add(index, src, dst, Op::Meta, before);
                let walked_at = dst_path().unwrap_or_else(|| join(rel, &src.name));
                self.out.verify.push((index, act, meta, walked_at));
            }
            Verdict::Content | Verdict::Replace => {
                self.add(index, src, dst, Op::Create, before);
            }
        }
    }

    /// The up-to-date verdict, and a destination file linked elsewhere where the source's is
    /// not is written anew (a metadata change would reach the other names too). With
    /// `--dedup=hardlink` an up-to-date one stays: those links are that option's own doing; and
    /// so does one that is the `--link-dest` copy at its path (an earlier run linked it), as
    /// long as nothing of it must be set: its bytes are compared where the stamps cannot tell,
    /// and a copy is written instead where its metadata differs.
    fn verdict(&self, src: &Entry, dst: &Entry, dir: &[u8]) -> Verdict {
        let v = self.cx.rules.compare(src, dst);
        let shared = |e: &Entry| e.meta.is_some_and(|m| m.kind != EntryKind::Dir && m.nlink > 1);
        let linked_by_dedup = self.cx.options.dedup == Some(crate::DedupMode::Hardlink);
        if linked_by_dedup && v == Verdict::Same {
            return v;
        }
        if v != Verdict::Replace && shared(dst) && !shared(src) {
            let linked_dest = self.cx.link_dest.is_some_and(|base| {
                let theirs = base.file(&join(dir, &src.name));
                theirs.is_some_and(|t| dst.meta.is_some_and(|d| d.id() == t.id()))
            });
            return match v {
                Verdict::Same | Verdict::Verify { meta: false } if linked_dest => v,
                _ => Verdict::Content,
            };
        }
        v
    }

    /// The DST entry `name` in the DST directory at `dir` is a backup (never deleted).
    fn is_backup(&self, dir: Option<&[u8]>, name: &[u8]) -> bool {
        self.cx.backup.is_some() && self.cx.is_backup(&join(dir.unwrap_or_default(), name), name)
    }

    fn add(
        &mut self,
        index: usize,
        src: &Entry,
        dst: Option<&Entry>,
        op: Op,
        before: Before,
    ) -> usize {
        let actions = &mut self.out.plan.dirs[index].actions;
        actions.push(Action { src: src.clone(), old: dst.cloned(), op, before });
        actions.len() - 1
    }

    fn subdir(&mut self, path: &[u8], dst_path: Option<Vec<u8>>, src: &Entry, dst: Option<&Entry>) {
        let walked = self.walked;
        let src_dir = walked.src.dir(path);
        let src_entry = match src_dir {
            Some(d) => dir_entry(&src.name, d),
            None => src.clone(),
        };
        match dst {
            Some(d) if d.kind == EntryKind::Dir => {
                let dst_path = dst_path.unwrap_or_default();
                // With `--files-from`, a listed directory whose contents are not mirrored is
                // entered on neither side: only its own metadata is made right.
                let not_entered = self.cx.files.is_some_and(|f| !f.enters(true, &dst_path));
                let old = match walked.dst.dir(&dst_path) {
                    Some(dst_dir) => dir_entry(&src.name, dst_dir),
                    None if not_entered && src_dir.is_none() => {
                        Entry { name: src.name.clone(), ..d.clone() }
                    }
                    None => {
                        // Listing it failed (reported by the walk): what is inside is unknown.
                        let why = "destination directory could not be listed; left as it is";
                        self.out.plan.refused.push(Refused { rel: path.to_vec(), reason: why });
                        return;
                    }
                };
                let set_meta = self.cx.rules.compare(&src_entry, &old) != Verdict::Same;
                self.push_dir(
                    path,
                    src_entry,
                    Some(old),
                    DirState::Exists,
                    Before::Nothing,
                    set_meta,
                );
                if src_dir.is_some() {
                    self.pairs.insert(path.to_vec(), Counterpart::At(dst_path));
                }
            }
            _ => {
                let before = dst.map_or(Before::Nothing, |d| Before::Entry(d.kind));
                let from = match (src_dir, self.cx.deleting) {
                    (Some(s), true) => {
                        let kept = &self.out.kept;
                        let renames = self
                            .renames
                            .get_or_insert_with(|| Candidates::new(walked, kept, self.cx.files));
                        renames.take(s)
                    }
                    _ => None,
                };
                match from {
                    Some(from) => {
                        let old = walked.dst.dir(&from).map(|d| dir_entry(&src.name, d));
                        let set_meta = old
                            .as_ref()
                            .is_none_or(|o| self.cx.rules.compare(&src_entry, o) != Verdict::Same);
                        let state = DirState::Renamed { from: from.clone() };
                        self.push_dir(path, src_entry, old, state, before, set_meta);
                        self.pairs.insert(path.to_vec(), Counterpart::At(from));
                    }
                    None => {
                        self.push_dir(path, src_entry, None, DirState::Create, before, true);
                        if src_dir.is_some() {
                            self.pairs.insert(path.to_vec(), Counterpart::New);
                        }
                    }
                }
            }
        }
    }
}
