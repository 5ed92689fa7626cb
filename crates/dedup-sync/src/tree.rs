//! The two trees as the walk found them: every directory's entries by path below its root,
//! sorted by name so that a source directory and its destination counterpart are merged in one
//! pass. Both trees are walked by one call of the engine's walker (two roots), in parallel
//! across directories.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use dedup_core::{Observer, Problem, ProblemKind, Progress, Severity};
use dedup_scan::io::IoScheduler;
use dedup_scan::{walk, Entry, EntryKind, Listing, Metadata, RootVisit, Visitor, WalkOptions};

use crate::rel_path::join;
use crate::select::Selection;
use crate::unread::Unread;

/// One listed directory.
#[derive(Debug, Clone)]
pub struct Dir {
    /// The directory itself.
    pub meta: Metadata,
    /// Its extended attributes (sorted by name).
    pub xattrs: Vec<dedup_scan::Xattr>,
    /// Its entries, sorted by name, less those the filter rules left out and our own temporary
    /// names.
    pub entries: Vec<Entry>,
    /// Names the filter rules left out.
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

/// What the walk of both trees found.
pub struct Walked {
    /// The source tree.
    pub src: Tree,
    /// The destination tree (empty when it does not exist yet).
    pub dst: Tree,
    /// The source parts that could not be read.
    pub unread: Unread,
    /// Problems met reading the source (each reported).
    pub src_errors: u64,
    /// Problems met reading the destination (each reported).
    pub dst_errors: u64,
}

/// What the walk needs to know besides the walker's options.
pub struct Scope<'a> {
    /// Our own temporary names, never mirrored.
    pub is_temp: &'a (dyn Fn(&[u8]) -> bool + Sync),
    /// What the run leaves out, and which directories it enters.
    pub selection: Option<&'a Selection>,
}

/// Walk `src` and (when given) `dst` at once.
pub fn walk_both(
    src: &Path,
    dst: Option<&Path>,
    options: &WalkOptions,
    scope: &Scope<'_>,
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
        scope,
        observer,
        progress,
    };
    let watch = Watch {
        inner: observer,
        src: src.to_path_buf(),
        dst: dst.map(Path::to_path_buf),
        unread: Mutex::default(),
        src_errors: AtomicU64::new(0),
        dst_errors: AtomicU64::new(0),
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
        unread: Unread::new(watch.unread.into_inner().unwrap_or_default()),
        src_errors: watch.src_errors.into_inner(),
        dst_errors: watch.dst_errors.into_inner(),
    }
}

/// Records whose side a problem of the walk was on, and which source paths it left unread, and
/// passes it on.
struct Watch<'a> {
    inner: &'a dyn Observer,
    src: PathBuf,
    dst: Option<PathBuf>,
    unread: Mutex<Vec<Vec<u8>>>,
    src_errors: AtomicU64,
    dst_errors: AtomicU64,
}

impl Observer for Watch<'_> {
    fn problem(&self, problem: Problem) {
        if problem.severity == Severity::Error {
            // The destination may lie inside the source's parent but never inside the source
            // (refused before the walk), so the longer matching prefix tells the side.
            let in_dst = self.dst.as_ref().is_some_and(|d| problem.path.starts_with(d));
            if in_dst {
                self.dst_errors.fetch_add(1, Ordering::Relaxed);
            } else {
                self.src_errors.fetch_add(1, Ordering::Relaxed);
                // A path the walk names outside both roots would be a surprise: then nothing of
                // the source is known for sure.
                let rel = problem
                    .path
                    .strip_prefix(&self.src)
                    .map_or(Vec::new(), |rest| rest.as_os_str().as_bytes().to_vec());
                self.unread.lock().unwrap_or_else(|e| e.into_inner()).push(rel);
            }
        }
        self.inner.problem(problem);
    }
}

/// Entries listed (both trees) after which the walk is given a second worker at once, instead of
/// after the I/O scheduler's first window: a tree of a few thousand entries is walked by one
/// worker sooner than a second starts, while a tree ten times larger is walked sooner with two
/// from the start than with one until the window closes
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
    scope: &'a Scope<'a>,
    observer: &'a dyn Observer,
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
        let is_temp = self.scope.is_temp;
        // Indices in listing order (the walker's), taken before entries are moved out and the
        // rest sorted.
        let subdirs = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == EntryKind::Dir && !is_temp(&e.name))
            .filter(|(_, e)| boundary.is_none_or(|dev| e.meta.is_none_or(|m| m.dev == dev)))
            .filter(|(_, e)| {
                let selection = self.scope.selection;
                selection.is_none_or(|s| s.enters(side == 1, &join(listing.relative, &e.name)))
            })
            .map(|(i, _)| (i, ()))
            .collect();
        let excluded = listing.excluded.to_vec();
        let mut strays = Vec::new();
        if entries.iter().any(|e| is_temp(&e.name)) {
            let (temp, kept): (Vec<Entry>, Vec<Entry>) =
                entries.into_iter().partition(|e| is_temp(&e.name));
            strays = temp.into_iter().map(|e| e.name).collect();
            entries = kept;
            if side == 0 {
                for name in &strays {
                    let why = "named like dedup's temporary files: not mirrored";
                    let path = listing.path.join(OsStr::from_bytes(name));
                    let e = std::io::Error::other(why);
                    self.observer.problem(Problem::note(path, ProblemKind::Io(e)));
                }
            }
        }
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        if side == 0 {
            for e in &entries {
                self.progress.found_file(e.meta.map_or(0, |m| m.size));
            }
        }
        let dir = Dir { meta: *listing.meta, xattrs: Vec::new(), entries, excluded, strays };
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
