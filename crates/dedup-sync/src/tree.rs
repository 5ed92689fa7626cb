//! The two trees as the walk found them: every directory's entries by path below its root,
//! sorted by name so that a source directory and its destination counterpart are merged in one
//! pass. Both trees are walked by one call of the engine's walker (two roots), in parallel
//! across directories.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use dedup_core::{Observer, Problem, Progress, Severity};
use dedup_scan::io::IoScheduler;
use dedup_scan::{walk, Entry, EntryKind, Listing, Metadata, RootVisit, Visitor, WalkOptions};

/// One listed directory.
#[derive(Debug, Clone)]
pub struct Dir {
    /// The directory itself.
    pub meta: Metadata,
    /// Its extended attributes (sorted by name).
    pub xattrs: Vec<dedup_scan::Xattr>,
    /// Its entries, sorted by name, less the exclusion globs' and our own temporary names.
    pub entries: Vec<Entry>,
    /// Names the exclusion globs left out.
    pub excluded: Vec<(Vec<u8>, Option<EntryKind>)>,
    /// Our own temporary names found here (left by an interrupted run).
    pub strays: Vec<Vec<u8>>,
}

impl Dir {
    /// The entry called `name`, by binary search.
    pub fn entry(&self, name: &[u8]) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.name.as_slice().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }
}

/// A walked tree: its listed directories by path below the root (the root is the empty path).
/// A directory that is an entry of a listed one but missing here was not listed: it could not
/// be read (a problem was reported) or lies beyond a boundary the walk was told not to cross.
#[derive(Debug, Default)]
pub struct Tree {
    /// Listed directories by path below the root.
    pub dirs: HashMap<Vec<u8>, Dir>,
}

impl Tree {
    /// The listed directory at `rel`.
    pub fn dir(&self, rel: &[u8]) -> Option<&Dir> {
        self.dirs.get(rel)
    }

    /// Entries in the tree, the root not counted.
    pub fn entry_count(&self) -> u64 {
        self.dirs.values().map(|d| d.entries.len() as u64).sum()
    }
}

/// `parent/name`, or `name` at the root.
pub fn join(parent: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(parent.len() + 1 + name.len());
    if !parent.is_empty() {
        p.extend_from_slice(parent);
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// `root/rel` as a path.
pub fn under(root: &Path, rel: &[u8]) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(OsStr::from_bytes(rel))
    }
}

/// The parent part and the last name of a relative path.
pub fn split(rel: &[u8]) -> (&[u8], &[u8]) {
    match rel.iter().rposition(|&b| b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (&[], rel),
    }
}

/// What the walk of both trees found.
pub struct Walked {
    /// The source tree.
    pub src: Tree,
    /// The destination tree (empty when it does not exist yet).
    pub dst: Tree,
    /// Some source entry could not be examined or listed.
    pub src_failed: bool,
    /// Some destination entry could not be examined or listed.
    pub dst_failed: bool,
}

/// Walk `src` and (when given) `dst` at once.
pub fn walk_both(
    src: &Path,
    dst: Option<&Path>,
    options: &WalkOptions,
    is_temp: &(dyn Fn(&[u8]) -> bool + Sync),
    io: &IoScheduler,
    observer: &dyn Observer,
    progress: &Progress,
) -> Walked {
    let mut roots = vec![src.to_path_buf()];
    roots.extend(dst.map(Path::to_path_buf));
    let collector = Collector {
        io,
        listed: AtomicUsize::new(0),
        trees: [Mutex::default(), Mutex::default()],
        src_dev: Mutex::new(None),
        root_xattrs: [Mutex::default(), Mutex::default()],
        one_file_system: options.one_file_system,
        is_temp,
        progress,
    };
    let watch = Watch {
        inner: observer,
        src: src.to_path_buf(),
        dst: dst.map(Path::to_path_buf),
        src_failed: AtomicBool::new(false),
        dst_failed: AtomicBool::new(false),
    };
    // -x is the source's boundary only: the walker's own check would apply it to both roots.
    let mut options = options.clone();
    options.one_file_system = false;
    walk(&roots, &options, io, &watch, &collector);
    let [s, d] = collector.trees;
    let [sx, dx] = collector.root_xattrs.map(|m| m.into_inner().unwrap_or_default());
    let mut src = Tree { dirs: s.into_inner().unwrap_or_default() };
    let mut dst = Tree { dirs: d.into_inner().unwrap_or_default() };
    adopt_dir_xattrs(&mut src, sx);
    adopt_dir_xattrs(&mut dst, dx);
    Walked {
        src,
        dst,
        src_failed: watch.src_failed.into_inner(),
        dst_failed: watch.dst_failed.into_inner(),
    }
}

/// Records whose side a problem of the walk was on, and passes it on.
struct Watch<'a> {
    inner: &'a dyn Observer,
    src: PathBuf,
    dst: Option<PathBuf>,
    src_failed: AtomicBool,
    dst_failed: AtomicBool,
}

impl Observer for Watch<'_> {
    fn problem(&self, problem: Problem) {
        if problem.severity == Severity::Error {
            // The destination may lie inside the source's parent but never inside the source
            // (refused before the walk), so the longer matching prefix tells the side.
            let in_dst = self.dst.as_ref().is_some_and(|d| problem.path.starts_with(d));
            if in_dst {
                self.dst_failed.store(true, Ordering::Relaxed);
            } else if problem.path.starts_with(&self.src) {
                self.src_failed.store(true, Ordering::Relaxed);
            }
        }
        self.inner.problem(problem);
    }
}

/// Entries listed (both trees) after which the walk is given a second worker at once, instead of
/// after the I/O scheduler's first window (10 ms at one worker): the walk of the medium seed tree
/// (2,000 entries) is done by one worker sooner than a second starts, the big one's (20,000)
/// took 27 ms with one worker until the window closed and 18 ms with two from the start
/// (docs/benchmarks/journal.md, "Sync per-entry costs (issue 27)").
const HURRY_AFTER: usize = 4096;

struct Collector<'a> {
    io: &'a IoScheduler,
    /// Entries listed so far, both trees.
    listed: AtomicUsize,
    trees: [Mutex<HashMap<Vec<u8>, Dir>>; 2],
    src_dev: Mutex<Option<u64>>,
    root_xattrs: [Mutex<Vec<dedup_scan::Xattr>>; 2],
    one_file_system: bool,
    is_temp: &'a (dyn Fn(&[u8]) -> bool + Sync),
    progress: &'a Progress,
}

impl Visitor for Collector<'_> {
    type Dir = ();

    fn root(&self, root: &RootVisit<'_>) -> Option<()> {
        let entry = root.entry?;
        if entry.kind != EntryKind::Dir {
            return None;
        }
        *self.root_xattrs[root.index as usize].lock().unwrap_or_else(|e| e.into_inner()) =
            entry.xattrs.clone();
        if root.index == 0 {
            *self.src_dev.lock().unwrap_or_else(|e| e.into_inner()) = entry.meta.map(|m| m.dev);
        }
        Some(())
    }

    const OWNS_ENTRIES: bool = true;

    fn dir(&self, state: &(), listing: &Listing<'_>) -> Vec<(usize, ())> {
        self.dir_owned(state, listing, listing.entries.to_vec())
    }

    fn dir_owned(
        &self,
        _: &(),
        listing: &Listing<'_>,
        mut entries: Vec<Entry>,
    ) -> Vec<(usize, ())> {
        let side = listing.root as usize;
        let before = self.listed.fetch_add(entries.len(), Ordering::Relaxed);
        if before < HURRY_AFTER && before + entries.len() >= HURRY_AFTER {
            let cores = std::thread::available_parallelism().map_or(2, usize::from);
            self.io.hurry(2, cores);
        }
        let boundary = if side == 0 && self.one_file_system {
            *self.src_dev.lock().unwrap_or_else(|e| e.into_inner())
        } else {
            None
        };
        // Indices in listing order: taken before strays are moved out and the rest sorted.
        let subdirs = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == EntryKind::Dir && !(self.is_temp)(&e.name))
            .filter(|(_, e)| boundary.is_none_or(|dev| e.meta.is_none_or(|m| m.dev == dev)))
            .map(|(i, _)| (i, ()))
            .collect();
        let mut strays = Vec::new();
        if entries.iter().any(|e| (self.is_temp)(&e.name)) {
            let (temp, kept): (Vec<Entry>, Vec<Entry>) =
                entries.into_iter().partition(|e| (self.is_temp)(&e.name));
            strays = temp.into_iter().map(|e| e.name).collect();
            entries = kept;
        }
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        if side == 0 {
            for e in &entries {
                self.progress.found_file(e.meta.map_or(0, |m| m.size));
            }
        }
        let dir = Dir {
            meta: *listing.meta,
            xattrs: Vec::new(),
            entries,
            excluded: listing.excluded.to_vec(),
            strays,
        };
        self.trees[side]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(listing.relative.to_vec(), dir);
        subdirs
    }
}

/// Fill in each listed directory's own extended attributes from its entry in its parent's
/// listing (the root's from `root_xattrs`), so a directory is described in one place.
fn adopt_dir_xattrs(tree: &mut Tree, root_xattrs: Vec<dedup_scan::Xattr>) {
    let mut found: Vec<(Vec<u8>, Vec<dedup_scan::Xattr>)> = Vec::new();
    for (rel, dir) in &tree.dirs {
        for e in &dir.entries {
            if e.kind == EntryKind::Dir && !e.xattrs.is_empty() {
                found.push((join(rel, &e.name), e.xattrs.clone()));
            }
        }
    }
    for (rel, x) in found {
        if let Some(d) = tree.dirs.get_mut(&rel) {
            d.xattrs = x;
        }
    }
    if let Some(root) = tree.dirs.get_mut(&Vec::new()) {
        root.xattrs = root_xattrs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_split() {
        assert_eq!(join(b"", b"a"), b"a");
        assert_eq!(join(b"a/b", b"c"), b"a/b/c");
        assert_eq!(split(b"a/b/c"), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(split(b"c"), (&b""[..], &b"c"[..]));
    }
}
