//! The parallel walk, for every job: each directory is one task for a crew of threads, as many as
//! the I/O scheduler lets list at once ([`crate::crew`]), listed with `getdents` through an open
//! descriptor and its entries `stat`ed relative to it (no path lookups per entry). Each listing
//! goes to the consumer's [`Visitor`] as soon as it is read, in parallel across directories, so a
//! consumer streams instead of waiting for the whole tree; the visitor also hears when a
//! directory and everything below it are done ([`Visitor::leave`]), which is when a backup can
//! seal a directory's tree or a mirror set a directory's times.
//!
//! Symlinks are not followed below the roots unless asked; a directory that is its own ancestor
//! (symlink or bind-mount loop) is not entered again; no entry is ever opened except directories.

mod deep;
mod entry;
mod list;
mod options;
#[cfg(test)]
mod tests;
mod xattr;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dedup_core::{FileId, Observer, Problem, ProblemKind};
use rustix::fs::{fstat, FileType};

use crate::crew::{work_off, Staffing};
use crate::io::IoScheduler;

pub use entry::{Entry, EntryKind, Metadata, Xattr};
pub use options::{Detail, EntryFilter, WalkOptions, WalkOptionsError};

/// A path argument as the walk found it.
#[derive(Debug)]
pub struct RootVisit<'a> {
    /// Index of the argument, in the order given.
    pub index: u32,
    /// The path as given, with trailing slashes removed.
    pub path: &'a Path,
    /// What it is (a symlink given as an argument is followed, as every peer does), with its
    /// metadata always; `None` when it could not be examined (the problem was reported) or names
    /// the same place as an earlier argument, which is walked once.
    pub entry: Option<&'a Entry>,
}

/// One directory's entries, handed to [`Visitor::dir`].
#[derive(Debug, Clone, Copy)]
pub struct Listing<'a> {
    /// Index of the root argument the directory was found under.
    pub root: u32,
    /// Its path: the root as given joined with the names below it.
    pub path: &'a Path,
    /// Its path below the root (empty for the root itself).
    pub relative: &'a [u8],
    /// Levels below the root (0 for the root itself).
    pub depth: u32,
    /// The open directory, for calls relative to it (`openat` without following links).
    pub fd: BorrowedFd<'a>,
    /// The directory itself, from `fstat` of the open descriptor.
    pub meta: &'a Metadata,
    /// The entries, in listing order, less those the exclusion globs left out.
    pub entries: &'a [Entry],
    /// Names the exclusion globs left out, with their kind as the listing gave it (`None` when
    /// the file system did not say).
    pub excluded: &'a [(Vec<u8>, Option<EntryKind>)],
}

/// What a job does with the walk's findings. Called from the walk's threads, in parallel.
pub trait Visitor: Sync {
    /// What the job keeps about a directory until its subdirectories are listed, e.g. its node
    /// in the job's own tree, or a handle to the backup's pending directory.
    type Dir: Send;

    /// A root argument. Returns the state of a directory root to walk it; `None` skips it.
    fn root(&self, root: &RootVisit<'_>) -> Option<Self::Dir>;

    /// One directory's entries. Returns the subdirectories to walk: the index of each in
    /// `listing.entries` (an entry of kind [`EntryKind::Dir`]) and its state.
    fn dir(&self, dir: &Self::Dir, listing: &Listing<'_>) -> Vec<(usize, Self::Dir)>;

    /// True for a visitor that keeps the entries it is given (a mirror's tree): the walk then
    /// calls [`Visitor::dir_owned`] instead of [`Visitor::dir`], handing each listing's entries
    /// over by value rather than lending them, so that they are neither copied nor freed twice.
    const OWNS_ENTRIES: bool = false;

    /// One directory's entries by value, in listing order, for a visitor with
    /// [`Visitor::OWNS_ENTRIES`]; `listing.entries` is empty here. Returns what
    /// [`Visitor::dir`] returns, with indices into `entries`. The default lends them to
    /// [`Visitor::dir`].
    fn dir_owned(
        &self,
        dir: &Self::Dir,
        listing: &Listing<'_>,
        entries: Vec<Entry>,
    ) -> Vec<(usize, Self::Dir)> {
        self.dir(dir, &Listing { entries: &entries, ..*listing })
    }

    /// A directory and everything below it have been visited (or could not be: the problem was
    /// reported). Called once for every state [`Visitor::root`] and [`Visitor::dir`] returned,
    /// children before their parent.
    fn leave(&self, _dir: Self::Dir) {}
}

/// Walk every root on threads of the walk's own, handing what it finds to `visitor`; `io`
/// decides how many directories are listed at once on each device. Problems (unreadable
/// directories, entries that vanished) go to `observer` and the walk carries on.
pub fn walk<V: Visitor>(
    roots: &[PathBuf],
    options: &WalkOptions,
    io: &IoScheduler,
    observer: &dyn Observer,
    visitor: &V,
) {
    let shared = Shared { options, io, observer, visitor };
    let mut seen = HashSet::new();
    let mut tasks = Vec::new();
    for (index, raw) in roots.iter().enumerate() {
        let path = normalize_root(raw);
        let entry = examine_root(&shared, raw, &path, &mut seen);
        let visit = RootVisit { index: index as u32, path: &path, entry: entry.as_ref() };
        let Some(state) = visitor.root(&visit) else { continue };
        let pending = Pending::new(state, None);
        match entry {
            Some(Entry { kind: EntryKind::Dir, meta: Some(meta), .. }) => tasks.push(DirTask {
                pending,
                root: index as u32,
                path,
                relative: Vec::new(),
                depth: 0,
                follow: true,
                dev: meta.dev,
                root_dev: options.one_file_system.then_some(meta.dev),
                ancestors: None,
                parent: None,
            }),
            _ => pending.finish(visitor),
        }
    }
    let staff =
        Staffing { most: io.threads(), wanted: &|| io.workers_wanted(), name: "dedup-walk" };
    work_off(tasks, staff, &|task| walk_dir(&shared, task));
}

struct Shared<'a, V: Visitor> {
    options: &'a WalkOptions,
    io: &'a IoScheduler,
    observer: &'a dyn Observer,
    visitor: &'a V,
}

/// A directory's state from its listing until everything below it was visited: then the
/// visitor's [`Visitor::leave`] gets it back, and the parent counts one child fewer.
struct Pending<D> {
    state: Mutex<Option<D>>,
    /// The directory's own listing, plus its subdirectories not yet finished.
    remaining: AtomicUsize,
    parent: Option<Arc<Pending<D>>>,
}

impl<D: Send> Pending<D> {
    fn new(state: D, parent: Option<Arc<Pending<D>>>) -> Arc<Pending<D>> {
        Arc::new(Pending { state: Mutex::new(Some(state)), remaining: AtomicUsize::new(1), parent })
    }

    /// One of the things this directory waited for is done; the last one leaves it.
    fn finish<V: Visitor<Dir = D>>(self: Arc<Self>, visitor: &V) {
        let mut cur = Some(self);
        while let Some(node) = cur {
            if node.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            let state = node.state.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(state) = state {
                visitor.leave(state);
            }
            cur = node.parent.clone();
        }
    }
}

/// The directories above a directory in this walk, to recognise loops.
struct Ancestors {
    id: FileId,
    parent: Option<Arc<Ancestors>>,
}

impl Ancestors {
    fn contains(self: &Arc<Self>, id: FileId) -> bool {
        let mut cur = Some(self);
        while let Some(a) = cur {
            if a.id == id {
                return true;
            }
            cur = a.parent.as_ref();
        }
        false
    }
}

struct DirTask<D> {
    pending: Arc<Pending<D>>,
    root: u32,
    path: PathBuf,
    relative: Vec<u8>,
    depth: u32,
    follow: bool,
    /// Device of the directory holding this one: where listing it most likely reads.
    dev: u64,
    root_dev: Option<u64>,
    ancestors: Option<Arc<Ancestors>>,
    /// The parent directory, held open when this one is deep ([`deep`]).
    parent: Option<Arc<deep::HeldDir>>,
}

/// Trailing slashes carry no meaning and would print as `dir//file`.
fn normalize_root(raw: &Path) -> PathBuf {
    let bytes = raw.as_os_str().as_bytes();
    let mut end = bytes.len();
    while end > 1 && bytes[end - 1] == b'/' {
        end -= 1;
    }
    PathBuf::from(OsStr::from_bytes(&bytes[..end]))
}

/// Stat a root (following a symlink) into an entry with full metadata; `None` after reporting a
/// problem, or for a root naming the same place as an earlier one (`a`, `./a`, a link to it).
fn examine_root<V: Visitor>(
    shared: &Shared<V>,
    raw: &Path,
    path: &Path,
    seen: &mut HashSet<PathBuf>,
) -> Option<Entry> {
    let st = match rustix::fs::stat(raw) {
        Ok(st) => st,
        Err(e) => {
            shared.observer.problem(Problem::error(path, ProblemKind::Io(e.into())));
            return None;
        }
    };
    let canonical = std::fs::canonicalize(raw).unwrap_or_else(|_| path.to_path_buf());
    if !seen.insert(canonical) {
        return None;
    }
    let meta = entry::Metadata::from_stat(&st)?;
    let followed = rustix::fs::lstat(raw)
        .is_ok_and(|l| FileType::from_raw_mode(l.st_mode) == FileType::Symlink);
    let mut entry = Entry {
        name: path.as_os_str().as_bytes().to_vec(),
        kind: meta.kind,
        followed,
        meta: Some(meta),
        target: None,
        xattrs: Vec::new(),
    };
    if shared.options.xattrs {
        entry.xattrs = xattr::of_path(path, true).unwrap_or_else(|e| {
            shared.observer.problem(Problem::warning(path, ProblemKind::Io(e)));
            Vec::new()
        });
    }
    Some(entry)
}

/// The extended attributes of `path` (following a final symlink when `follow`), sorted by name,
/// as a walk with [`WalkOptions::xattrs`] reads them: for a consumer that reads them only for
/// the entries it cannot prove unchanged.
pub fn read_xattrs(path: &Path, follow: bool) -> std::io::Result<Vec<Xattr>> {
    xattr::of_path(path, follow)
}

/// [`read_xattrs`] of the entry `name` in the open directory `dir` (`path` is its full path):
/// without a path lookup where the kernel has `listxattrat` and the entry has no attributes.
pub fn read_xattrs_at(
    dir: BorrowedFd<'_>,
    name: &std::ffi::CStr,
    path: impl FnOnce() -> PathBuf,
    follow: bool,
) -> std::io::Result<Vec<Xattr>> {
    xattr::of_entry(dir, name, path, follow)
}

/// [`read_xattrs`] of an open file: no path lookup at all.
pub fn read_xattrs_fd(fd: BorrowedFd<'_>) -> std::io::Result<Vec<Xattr>> {
    xattr::of_fd(fd)
}

/// What listing and statting one entry is worth in the scheduler's throughput measure (an inode
/// and its share of a directory block).
const ENTRY_COST: u64 = 512;

/// List one directory, hand it to the visitor; returns its subdirectories to walk.
fn walk_dir<V: Visitor>(shared: &Shared<V>, task: DirTask<V::Dir>) -> Vec<DirTask<V::Dir>> {
    let visitor = shared.visitor;
    let leave = |task: DirTask<V::Dir>| {
        task.pending.finish(visitor);
        Vec::new()
    };
    let options = shared.options;
    let child_depth = task.depth + 1;
    if !options.depth_wanted(child_depth) {
        return leave(task);
    }
    let failed = |path: &Path, e: std::io::Error| {
        shared.observer.problem(Problem::error(path, ProblemKind::Io(e)));
    };
    let permit = shared.io.acquire(task.dev);
    let fd = match deep::open(&task.path, task.parent.as_deref(), task.follow) {
        Ok(fd) => fd,
        Err(e) => {
            failed(&task.path, e);
            return leave(task);
        }
    };
    let meta = match fstat(&fd) {
        Ok(st) => Metadata::from_stat(&st),
        Err(e) => {
            failed(&task.path, e.into());
            return leave(task);
        }
    };
    let Some(meta) = meta else { return leave(task) };
    let id = meta.id();
    if task.root_dev.is_some_and(|dev| dev != id.dev) {
        return leave(task);
    }
    if task.ancestors.as_ref().is_some_and(|a| a.contains(id)) {
        shared.observer.problem(Problem::note(&task.path, ProblemKind::Loop));
        return leave(task);
    }

    let mut found =
        list::list(&fd, &task.path, (task.root, &task.relative), options, shared.observer);
    let inos = std::mem::take(&mut found.inos);
    permit.done(found.entries.len() as u64 * ENTRY_COST);
    // What a subdirectory's task needs of its entry, taken before a visitor that owns the
    // entries is given them: by index, whether it was followed, its path below the root, its path.
    type Candidate = (usize, Option<(bool, Vec<u8>, PathBuf)>);
    let mut candidates: Vec<Candidate> = if V::OWNS_ENTRIES {
        let dir_entries =
            found.entries.iter().enumerate().filter(|(_, e)| e.kind == EntryKind::Dir);
        dir_entries.map(|(i, e)| (i, Some(child_of(&task, e)))).collect()
    } else {
        Vec::new()
    };
    let mut listing = Listing {
        root: task.root,
        path: &task.path,
        relative: &task.relative,
        depth: task.depth,
        fd: std::os::fd::AsFd::as_fd(&fd),
        meta: &meta,
        entries: &[],
        excluded: &found.excluded,
    };
    let state = task.pending.state.lock().unwrap_or_else(PoisonError::into_inner);
    let (children, entries) = match state.as_ref() {
        Some(state) if V::OWNS_ENTRIES => {
            (visitor.dir_owned(state, &listing, found.entries), Vec::new())
        }
        Some(state) => {
            listing.entries = &found.entries;
            (visitor.dir(state, &listing), found.entries)
        }
        None => (Vec::new(), found.entries),
    };
    drop(state);
    let held = if children.is_empty() { None } else { deep::hold_for_children(fd, &task.path) };

    let ancestors = Arc::new(Ancestors { id, parent: task.ancestors.clone() });
    let mut subdirs = Vec::with_capacity(children.len());
    task.pending.remaining.fetch_add(children.len(), Ordering::AcqRel);
    for (i, child_state) in children {
        let found = if V::OWNS_ENTRIES {
            match candidates.binary_search_by_key(&i, |c| c.0) {
                Ok(at) => candidates[at].1.take(),
                Err(_) => None,
            }
        } else {
            entries.get(i).filter(|e| e.kind == EntryKind::Dir).map(|e| child_of(&task, e))
        };
        let Some((follow, relative, path)) = found else {
            // The visitor named an entry that is not a directory: leave it at once.
            Pending::new(child_state, Some(task.pending.clone())).finish(visitor);
            continue;
        };
        let ino = inos.get(i).copied().unwrap_or(0);
        subdirs.push((
            ino,
            DirTask {
                pending: Pending::new(child_state, Some(task.pending.clone())),
                root: task.root,
                path,
                relative,
                depth: child_depth,
                follow,
                dev: id.dev,
                root_dev: task.root_dev,
                ancestors: Some(ancestors.clone()),
                parent: held.clone(),
            },
        ));
    }
    list::give_back(entries);
    task.pending.finish(visitor);
    if options.inode_order {
        // The crew takes the tasks added last first: the lowest inode goes last.
        subdirs.sort_by_key(|&(ino, _)| std::cmp::Reverse(ino));
    }
    subdirs.into_iter().map(|(_, task)| task).collect()
}

/// Whether the subdirectory `entry` of `task` was reached through a followed link, its path
/// below the root, and its path.
fn child_of<D>(task: &DirTask<D>, entry: &Entry) -> (bool, Vec<u8>, PathBuf) {
    let mut relative = Vec::with_capacity(task.relative.len() + 1 + entry.name.len());
    if !task.relative.is_empty() {
        relative.extend_from_slice(&task.relative);
        relative.push(b'/');
    }
    relative.extend_from_slice(&entry.name);
    (entry.followed, relative, task.path.join(OsStr::from_bytes(&entry.name)))
}
