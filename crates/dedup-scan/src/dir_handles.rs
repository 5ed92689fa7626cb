//! Opening the files of a walked tree again after the walk, relative to descriptors of their
//! directories. The finder's content stages open tens of thousands of files named in a
//! [`PathArena`]; opened by its full path, each makes the kernel look up every component again
//! (on a warm tree those lookups were the largest share of the finder's time: docs/benchmarks/
//! journal.md, "find warm against yadf"). Here each directory is opened once, relative to its
//! parent's descriptor, and kept in a bounded cache (`O_PATH`: it reads nothing and needs no
//! read permission), and each file is one `openat` of its own name.
//!
//! No symlink is followed at any level below a root unless the walk followed links (`-L`):
//! stricter than a path, whose directories the kernel would follow. What was opened is still
//! only a candidate: the caller checks that it is the file the walk recorded.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::{openat, Mode, OFlags};
use rustix::process::{getrlimit, Resource};

use crate::open::{open_content_in, open_for_read, open_path};
use crate::paths::{NodeId, PathArena};

/// Fewest directories kept open, however low the limit on open files.
const LEAST_KEPT: usize = 16;
/// Most directories kept open: more than most trees have whose files are compared, and a
/// small share of the usual limit on open files.
const MOST_KEPT: usize = 4096;

/// Directories of one arena kept open for opening their entries; shared by the threads that
/// read. A cache that is full forgets an eighth of its directories, chosen by the hash map's
/// order, and reopens them when asked again (each relative to its parent: one lookup).
pub struct DirHandles {
    open: Mutex<HashMap<NodeId, Arc<OwnedFd>>>,
    capacity: usize,
    follow_links: bool,
}

impl DirHandles {
    /// Handles for a tree walked with `follow_links` (`-L`: directories may be symlinks
    /// followed), keeping a quarter of the process's limit on open files at most (the readers'
    /// files, and the classes that keep their members open, need the rest).
    pub fn new(follow_links: bool) -> DirHandles {
        let limit = getrlimit(Resource::Nofile).current.unwrap_or(1024);
        let quarter = usize::try_from(limit / 4).unwrap_or(MOST_KEPT);
        DirHandles::with_capacity(follow_links, quarter.clamp(LEAST_KEPT, MOST_KEPT))
    }

    /// Handles keeping at most `capacity` directories open.
    pub fn with_capacity(follow_links: bool, capacity: usize) -> DirHandles {
        let capacity = capacity.max(1);
        DirHandles { open: Mutex::new(HashMap::new()), capacity, follow_links }
    }

    /// Open the file `node` of `arena` for reading its content (as [`crate::open_for_read`]
    /// does: without blocking on a FIFO, leaving its access time); `follow` allows a symlink as
    /// its own name. A root is opened by its path, as given.
    pub fn open_content(&self, arena: &PathArena, node: NodeId, follow: bool) -> io::Result<File> {
        let Some(parent) = arena.parent(node) else {
            return open_for_read(&arena.path(node), follow);
        };
        let dir = self.dir(arena, parent)?;
        open_content_in(dir.as_fd(), OsStr::from_bytes(arena.name(node)), follow)
    }

    /// How many directories are open now.
    pub fn kept(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<NodeId, Arc<OwnedFd>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The directory `node`, from the cache, or opened below its nearest kept ancestor (or its
    /// root), keeping every directory opened on the way.
    fn dir(&self, arena: &PathArena, node: NodeId) -> io::Result<Arc<OwnedFd>> {
        let mut missing = vec![node];
        let mut base = None;
        {
            let open = self.lock();
            if let Some(fd) = open.get(&node) {
                return Ok(Arc::clone(fd));
            }
            let mut cur = node;
            while let Some(parent) = arena.parent(cur) {
                if let Some(fd) = open.get(&parent) {
                    base = Some(Arc::clone(fd));
                    break;
                }
                missing.push(parent);
                cur = parent;
            }
        }
        let mut dir = match base {
            Some(fd) => fd,
            None => {
                // A root, by its path as given: the walk followed it when it was a symlink.
                let root = missing.pop().expect("the chain holds at least the directory");
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                let fd = Arc::new(open_path(&arena.path(root), flags)?);
                self.keep(root, &fd);
                fd
            }
        };
        let mut flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if !self.follow_links {
            flags |= OFlags::NOFOLLOW;
        }
        while let Some(below) = missing.pop() {
            let name = OsStr::from_bytes(arena.name(below));
            dir = Arc::new(openat(&*dir, name, flags, Mode::empty())?);
            self.keep(below, &dir);
        }
        Ok(dir)
    }

    fn keep(&self, node: NodeId, fd: &Arc<OwnedFd>) {
        let mut open = self.lock();
        if open.len() >= self.capacity {
            let forget = (self.capacity / 8).max(1);
            let victims: Vec<NodeId> = open.keys().take(forget).copied().collect();
            for victim in victims {
                open.remove(&victim);
            }
        }
        open.insert(node, Arc::clone(fd));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::path::Path;

    /// An arena of `root/a/b/f` and `root/a/g`: the nodes of f and g.
    fn arena(root: &Path) -> (PathArena, NodeId, NodeId) {
        let mut arena = PathArena::default();
        let top = arena.add_root(root.as_os_str().as_bytes());
        let a = arena.add_children(top, [b"a".as_slice()]);
        let b = arena.add_children(a, [b"b".as_slice(), b"g".as_slice()]);
        let g = NodeId::from_index(b.index() + 1);
        let f = arena.add_children(b, [b"f".as_slice()]);
        (arena, f, g)
    }

    fn content(mut file: File) -> String {
        let mut s = String::new();
        file.read_to_string(&mut s).unwrap();
        s
    }

    fn tree() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        std::fs::write(tmp.path().join("a/b/f"), "f").unwrap();
        std::fs::write(tmp.path().join("a/g"), "g").unwrap();
        tmp
    }

    /// Once a directory is open, its entries are looked up in it, not by path: a directory
    /// renamed away, with another put at its old path, still gives its own files.
    #[test]
    fn entries_are_opened_in_the_directory_kept_not_by_path() {
        let tmp = tree();
        let (arena, f, g) = arena(tmp.path());
        let handles = DirHandles::with_capacity(false, 8);
        assert_eq!(content(handles.open_content(&arena, f, false).unwrap()), "f");
        assert_eq!(handles.kept(), 3, "the root, a and a/b");
        std::fs::rename(tmp.path().join("a/b"), tmp.path().join("moved")).unwrap();
        std::fs::create_dir(tmp.path().join("a/b")).unwrap();
        std::fs::write(tmp.path().join("a/b/f"), "impostor").unwrap();
        assert_eq!(content(handles.open_content(&arena, f, false).unwrap()), "f");
        assert_eq!(content(handles.open_content(&arena, g, false).unwrap()), "g");
    }

    /// A directory swapped for a symlink after the walk is not followed, even to a tree that
    /// holds the very same file: a path would have been followed through it.
    #[test]
    fn a_symlink_swapped_in_for_a_directory_is_not_followed() {
        let tmp = tree();
        let (arena, f, _) = arena(tmp.path());
        std::fs::rename(tmp.path().join("a/b"), tmp.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), tmp.path().join("a/b")).unwrap();
        let refused = DirHandles::with_capacity(false, 8).open_content(&arena, f, false);
        assert!(refused.is_err(), "opened through a symlink");
        // Unless links are followed (-L), as the walk then did.
        let followed = DirHandles::with_capacity(true, 8).open_content(&arena, f, false);
        assert_eq!(content(followed.unwrap()), "f");
    }

    /// A symlink as the file's own name is opened only when asked.
    #[test]
    fn a_symlink_as_the_file_is_followed_only_when_asked() {
        let tmp = tree();
        let (arena, f, _) = arena(tmp.path());
        std::fs::remove_file(tmp.path().join("a/b/f")).unwrap();
        std::os::unix::fs::symlink("../g", tmp.path().join("a/b/f")).unwrap();
        let handles = DirHandles::with_capacity(false, 8);
        assert!(handles.open_content(&arena, f, false).is_err());
        assert_eq!(content(handles.open_content(&arena, f, true).unwrap()), "g");
    }

    /// A full cache forgets some directories and opens them again when asked: never more
    /// descriptors than its capacity, and every file still found.
    #[test]
    fn a_full_cache_forgets_and_reopens() {
        let tmp = tempfile::tempdir().unwrap();
        let mut arena = PathArena::default();
        let top = arena.add_root(tmp.path().as_os_str().as_bytes());
        let names: Vec<Vec<u8>> = (0..40).map(|i| format!("d{i}").into_bytes()).collect();
        let first = arena.add_children(top, names.iter().map(Vec::as_slice));
        let mut files = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let dir = tmp.path().join(OsStr::from_bytes(name));
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("f"), format!("{i}")).unwrap();
            let node = NodeId::from_index(first.index() + i);
            files.push(arena.add_children(node, [b"f".as_slice()]));
        }
        let handles = DirHandles::with_capacity(false, 8);
        for _ in 0..2 {
            for (i, &f) in files.iter().enumerate() {
                assert_eq!(content(handles.open_content(&arena, f, false).unwrap()), i.to_string());
                assert!(handles.kept() <= 8);
            }
        }
    }

    /// A file given as a root is opened by its path.
    #[test]
    fn a_root_file_is_opened_by_its_path() {
        let tmp = tree();
        let mut arena = PathArena::default();
        let root = arena.add_root(tmp.path().join("a/g").as_os_str().as_bytes());
        let handles = DirHandles::with_capacity(false, 8);
        assert_eq!(content(handles.open_content(&arena, root, false).unwrap()), "g");
        assert_eq!(handles.kept(), 0);
    }
}
