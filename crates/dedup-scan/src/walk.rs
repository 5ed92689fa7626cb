//! The parallel walk: every directory is one task for a crew of threads, as many as the I/O
//! scheduler lets list at once ([`crate::crew`]), listed with `getdents` through an open
//! descriptor and its entries `stat`ed relative to it (no path lookups per file). Each task adds
//! its whole directory to the shared arena under one lock, so the lock is taken once per
//! directory, not once per file.
//!
//! Symlinks are not followed below the roots unless asked; a directory that is its own ancestor
//! (symlink or bind-mount loop) is not entered again; special files are never opened.

use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dedup_core::{FileId, FileMeta, Observer, Problem, ProblemKind, Progress};
use rustix::fd::OwnedFd;
use rustix::fs::{fstat, statat, AtFlags, FileType, RawDir};
use rustix::io::Errno;

use crate::crew::{work_off, Staffing};
use crate::io::IoScheduler;
use crate::open::{meta_from_stat, open_dir};
use crate::paths::{NodeId, PathArena};
use crate::select::Selection;

/// One regular file found by the walk: where it is, which root it came from, what it looked like.
#[derive(Debug, Clone, Copy)]
pub struct FileEntry {
    /// Its path in the tree's arena.
    pub node: NodeId,
    /// Index of the root argument it was found under.
    pub root: u32,
    /// Identity, size and timestamps at the time of the walk.
    pub meta: FileMeta,
}

/// A path argument.
#[derive(Debug, Clone)]
pub struct Root {
    /// The path as given, with trailing slashes removed.
    pub path: PathBuf,
    /// Its node in the arena, when it could be walked.
    pub node: Option<NodeId>,
}

/// Everything a walk found.
#[derive(Debug, Default)]
pub struct Tree {
    /// Paths of every file and directory kept.
    pub arena: PathArena,
    /// Regular files kept by the selection, in no particular order.
    pub files: Vec<FileEntry>,
    /// The path arguments, in the order given.
    pub roots: Vec<Root>,
    /// Identity of each directory walked, by node.
    dir_ids: HashMap<NodeId, FileId>,
    /// Identity of the directory holding each root that is a file.
    root_parent_ids: HashMap<NodeId, FileId>,
}

impl Tree {
    /// The directory entry a node stands for: (containing directory, name). Two nodes with the
    /// same key are one entry reached twice, through overlapping roots or followed links, and
    /// must be listed once; two nodes with the same inode but different keys are hard links.
    pub fn entry_key(&self, node: NodeId) -> (Option<FileId>, &[u8]) {
        match self.arena.parent(node) {
            Some(parent) => (self.dir_ids.get(&parent).copied(), self.arena.name(node)),
            None => {
                let path = self.arena.name(node);
                let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
                (self.root_parent_ids.get(&node).copied(), name)
            }
        }
    }
}

/// Walk every root with the selection on threads of its own; `io` decides how many directories
/// are listed at once on each device.
pub fn walk(
    roots: &[PathBuf],
    selection: &Selection,
    io: &IoScheduler,
    observer: &dyn Observer,
    progress: &Progress,
) -> Tree {
    let shared = Shared {
        selection,
        io,
        observer,
        progress,
        arena: Mutex::new(PathArena::default()),
        files: Mutex::new(Vec::new()),
        dir_ids: Mutex::new(HashMap::new()),
    };
    let mut tree_roots = Vec::with_capacity(roots.len());
    let mut root_parent_ids = HashMap::new();
    let mut seen = HashSet::new();
    let mut tasks = Vec::new();
    for (index, raw) in roots.iter().enumerate() {
        let path = normalize_root(raw);
        let node =
            start_root(&shared, index as u32, raw, &path, &mut seen, &mut tasks).inspect(|&node| {
                if let Some(parent) = parent_dir_id(raw) {
                    root_parent_ids.insert(node, parent);
                }
            });
        tree_roots.push(Root { path, node });
    }
    let staff =
        Staffing { most: io.threads(), wanted: &|| io.workers_wanted(), name: "dedup-walk" };
    work_off(tasks, staff, &|task| walk_dir(&shared, task));
    Tree {
        arena: shared.arena.into_inner().expect("walker panicked"),
        files: shared.files.into_inner().expect("walker panicked"),
        roots: tree_roots,
        dir_ids: shared.dir_ids.into_inner().expect("walker panicked"),
        root_parent_ids,
    }
}

struct Shared<'a> {
    selection: &'a Selection,
    io: &'a IoScheduler,
    observer: &'a dyn Observer,
    progress: &'a Progress,
    arena: Mutex<PathArena>,
    files: Mutex<Vec<FileEntry>>,
    dir_ids: Mutex<HashMap<NodeId, FileId>>,
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

struct DirTask {
    node: NodeId,
    root: u32,
    path: PathBuf,
    relative: Vec<u8>,
    depth: u32,
    follow: bool,
    /// Device of the directory holding this one: where listing it most likely reads.
    dev: u64,
    root_dev: Option<u64>,
    ancestors: Option<Arc<Ancestors>>,
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

fn parent_dir_id(raw: &Path) -> Option<FileId> {
    let parent = match raw.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let st = rustix::fs::stat(parent).ok()?;
    Some(FileId { dev: st.st_dev, ino: st.st_ino })
}

/// Set up one root: a directory becomes a walk task, a regular file an entry. Roots naming the
/// same place as an earlier one (`a`, `./a`, a symlink to it) are walked once.
fn start_root(
    shared: &Shared,
    index: u32,
    raw: &Path,
    path: &Path,
    seen: &mut HashSet<PathBuf>,
    tasks: &mut Vec<DirTask>,
) -> Option<NodeId> {
    // Symlinks given as arguments are followed, as every peer does.
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
    let kind = FileType::from_raw_mode(st.st_mode);
    let meta = meta_from_stat(&st);
    let node = shared.arena.lock().unwrap().add_root(path.as_os_str().as_bytes());
    match kind {
        FileType::Directory => tasks.push(DirTask {
            node,
            root: index,
            path: path.to_path_buf(),
            relative: Vec::new(),
            depth: 0,
            follow: true,
            dev: meta.id.dev,
            root_dev: shared.selection.one_file_system.then_some(meta.id.dev),
            ancestors: None,
        }),
        FileType::RegularFile => {
            if shared.selection.size_wanted(meta.size) {
                shared.progress.found_file(meta.size);
                shared.files.lock().unwrap().push(FileEntry { node, root: index, meta });
            }
        }
        _ => shared.observer.problem(Problem::warning(path, ProblemKind::NotFileOrDir)),
    }
    Some(node)
}

/// What listing and statting one entry is worth in the scheduler's throughput measure (an inode
/// and its share of a directory block).
const ENTRY_COST: u64 = 512;

/// Bytes of entries one `getdents` call may return: a few hundred entries, so that most
/// directories are listed in one call and a second that finds the end. rustix's `Dir` starts at
/// 768 bytes (about 20 entries) and grows slowly: a directory of 40 entries took three calls,
/// and dataset 1 @ 10 % (350 entries a directory) 14.4 ms warm instead of 12.3.
const LISTING_BUF: usize = 32 << 10;

/// What one directory entry turned out to be.
enum Found {
    File(FileMeta),
    Dir { follow: bool },
}

/// List one directory; returns its subdirectories to walk.
fn walk_dir(shared: &Shared, task: DirTask) -> Vec<DirTask> {
    let selection = shared.selection;
    let child_depth = task.depth + 1;
    if !selection.depth_wanted(child_depth) {
        return Vec::new();
    }
    // Reports the error; a directory that fails adds no subdirectories.
    let failed = |path: &Path, e: io::Error| {
        shared.observer.problem(Problem::error(path, ProblemKind::Io(e)));
        Vec::new()
    };
    let permit = shared.io.acquire(task.dev);
    let fd = match open_dir(&task.path, task.follow) {
        Ok(fd) => fd,
        Err(e) => return failed(&task.path, e),
    };
    let id = match fstat(&fd) {
        Ok(st) => FileId { dev: st.st_dev, ino: st.st_ino },
        Err(e) => return failed(&task.path, e.into()),
    };
    if task.root_dev.is_some_and(|dev| dev != id.dev) {
        return Vec::new();
    }
    if task.ancestors.as_ref().is_some_and(|a| a.contains(id)) {
        shared.observer.problem(Problem::note(&task.path, ProblemKind::Loop));
        return Vec::new();
    }
    shared.dir_ids.lock().unwrap().insert(task.node, id);

    let mut buf = Vec::with_capacity(LISTING_BUF);
    let mut dir = RawDir::new(&fd, buf.spare_capacity_mut());
    let mut names: Vec<Vec<u8>> = Vec::new();
    let mut found: Vec<Found> = Vec::new();
    let mut relative = task.relative.clone();
    while let Some(entry) = dir.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                failed(&task.path, e.into());
                break;
            }
        };
        let c_name = entry.file_name();
        let name = c_name.to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if selection.has_excludes() {
            relative.truncate(task.relative.len());
            if !relative.is_empty() {
                relative.push(b'/');
            }
            relative.extend_from_slice(name);
            if selection.excluded(&relative, name) {
                continue;
            }
        }
        let classified = match entry.file_type() {
            FileType::Directory => Ok(Some(Found::Dir { follow: false })),
            FileType::RegularFile | FileType::Unknown => classify(&fd, c_name, false),
            FileType::Symlink if selection.follow_links => classify(&fd, c_name, true),
            _ => Ok(None),
        };
        match classified {
            Ok(Some(Found::File(meta))) if !selection.size_wanted(meta.size) => {}
            Ok(Some(f)) => {
                names.push(name.to_vec());
                found.push(f);
            }
            Ok(None) => {}
            Err(Errno::NOENT | Errno::LOOP) if entry.file_type() == FileType::Symlink => {
                // A dangling or self-referring link: nothing to read behind it.
            }
            Err(e) => {
                failed(&task.path.join(OsStr::from_bytes(name)), e.into());
            }
        }
    }
    drop(fd);
    permit.done(names.len() as u64 * ENTRY_COST);
    if names.is_empty() {
        return Vec::new();
    }

    let first =
        shared.arena.lock().unwrap().add_children(task.node, names.iter().map(Vec::as_slice));
    let node_at = |i: usize| NodeId::from_index(first.index() + i);
    {
        let mut files = shared.files.lock().unwrap();
        for (i, f) in found.iter().enumerate() {
            if let Found::File(meta) = f {
                shared.progress.found_file(meta.size);
                files.push(FileEntry { node: node_at(i), root: task.root, meta: *meta });
            }
        }
    }
    let ancestors = Arc::new(Ancestors { id, parent: task.ancestors.clone() });
    let mut subdirs = Vec::new();
    for (i, (name, f)) in names.into_iter().zip(found).enumerate() {
        let Found::Dir { follow } = f else { continue };
        let mut relative = task.relative.clone();
        if !relative.is_empty() {
            relative.push(b'/');
        }
        relative.extend_from_slice(&name);
        let child = DirTask {
            node: node_at(i),
            root: task.root,
            path: task.path.join(OsStr::from_bytes(&name)),
            relative,
            depth: child_depth,
            follow,
            dev: id.dev,
            root_dev: task.root_dev,
            ancestors: Some(ancestors.clone()),
        };
        subdirs.push(child);
    }
    subdirs
}

/// Stat an entry whose type the listing did not settle (regular files need their metadata;
/// unknown types and followed links need their target's type).
fn classify(dir: &OwnedFd, name: &CStr, follow: bool) -> Result<Option<Found>, Errno> {
    let flags = if follow { AtFlags::empty() } else { AtFlags::SYMLINK_NOFOLLOW };
    let st = statat(dir, name, flags)?;
    Ok(match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Some(Found::File(meta_from_stat(&st))),
        FileType::Directory => Some(Found::Dir { follow }),
        _ => None,
    })
}
