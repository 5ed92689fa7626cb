//! The finder's record of a walk: one consumer of the engine's walker
//! ([`dedup_scan::walk`]). It keeps the paths of regular files of the selected sizes and of
//! directories in a compact arena, and for each directory what else it held (empty files,
//! symlinks, entries of unknown content), which the analysis of duplicated directories compares.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use dedup_core::{FileId, FileMeta, Observer, Problem, ProblemKind, Progress};
use dedup_scan::io::IoScheduler;
use dedup_scan::layout;
use dedup_scan::{walk, EntryKind, Listing, NodeId, PathArena, RootVisit, Visitor};
use rustix::fs::{statat, AtFlags};

use crate::selection::Selection;
use crate::tuning::PhysicalOrder;

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

/// An entry of a directory that the tree does not keep as a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Other {
    /// An empty regular file.
    EmptyFile,
    /// A symbolic link (its target is read only if the directory looks duplicated).
    Symlink,
}

/// What a directory held besides its nodes: `None` when something of unknown content (a special
/// file, a file outside the size bounds, an excluded directory).
pub(crate) type Others = Option<Vec<(Vec<u8>, Other)>>;

/// Everything a walk found that the finder keeps.
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
    /// Per directory that held entries the tree does not keep: those entries.
    others: HashMap<NodeId, Others>,
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

    /// What a directory held besides its nodes (nothing, for a directory not recorded).
    pub(crate) fn others(&self, dir: NodeId) -> Option<&Others> {
        self.others.get(&dir)
    }
}

/// Walk every root and keep what the selection wants.
pub(crate) fn walk_tree(
    roots: &[PathBuf],
    selection: &Selection,
    physical_order: PhysicalOrder,
    io: &IoScheduler,
    observer: &dyn Observer,
    progress: &Progress,
) -> Tree {
    let builder = Builder {
        selection,
        observer,
        progress,
        tree: Mutex::new(Tree::default()),
        files: Mutex::new(Vec::new()),
    };
    let mut options = selection.walk.clone();
    options.inode_order = inode_order(roots, physical_order);
    walk(roots, &options, io, observer, &builder);
    let mut tree = builder.tree.into_inner().unwrap_or_else(PoisonError::into_inner);
    tree.files = builder.files.into_inner().unwrap_or_else(PoisonError::into_inner);
    tree
}

/// Whether the walk goes in inode order (`WalkOptions::inode_order`): where the content stages
/// may read in the order of the disk (`crate::stages::physical`), that is on a device that says
/// it rotates. Before anything is read there is nothing to measure, and on a device that does
/// not seek the order costs no more than another.
fn inode_order(roots: &[PathBuf], physical_order: PhysicalOrder) -> bool {
    match physical_order {
        PhysicalOrder::Always => true,
        PhysicalOrder::Never => false,
        PhysicalOrder::Measured => roots.iter().any(|root| {
            rustix::fs::stat(root).is_ok_and(|st| layout::rotational(st.st_dev) == Some(true))
        }),
    }
}

/// The visitor: adds each directory's kept entries to the tree under one lock per directory.
struct Builder<'a> {
    selection: &'a Selection,
    observer: &'a dyn Observer,
    progress: &'a Progress,
    /// Everything but the files, which have a lock of their own.
    tree: Mutex<Tree>,
    files: Mutex<Vec<FileEntry>>,
}

impl Builder<'_> {
    fn lock_tree(&self) -> std::sync::MutexGuard<'_, Tree> {
        self.tree.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Visitor for Builder<'_> {
    /// The directory's node and its root's index.
    type Dir = (NodeId, u32);

    fn root(&self, root: &RootVisit<'_>) -> Option<Self::Dir> {
        let Some(entry) = root.entry else {
            self.lock_tree().roots.push(Root { path: root.path.to_path_buf(), node: None });
            return None;
        };
        let node = {
            let mut tree = self.lock_tree();
            let node = tree.arena.add_root(root.path.as_os_str().as_bytes());
            if let Some(parent) = parent_dir_id(root.path) {
                tree.root_parent_ids.insert(node, parent);
            }
            tree.roots.push(Root { path: root.path.to_path_buf(), node: Some(node) });
            node
        };
        match (entry.kind, entry.meta) {
            (EntryKind::Dir, _) => return Some((node, root.index)),
            (EntryKind::File, Some(meta)) => {
                if self.selection.size_wanted(meta.size) {
                    self.progress.found_file(meta.size);
                    let entry = FileEntry { node, root: root.index, meta: meta.file_meta() };
                    self.files.lock().unwrap_or_else(PoisonError::into_inner).push(entry);
                }
            }
            _ => self.observer.problem(Problem::warning(root.path, ProblemKind::NotFileOrDir)),
        }
        None
    }

    fn dir(&self, &(dir, root): &Self::Dir, listing: &Listing<'_>) -> Vec<(usize, Self::Dir)> {
        let mut kept: Vec<usize> = Vec::new();
        let mut others: Others = Some(Vec::new());
        let mut other = |name: &[u8], kind: Option<Other>| match (&mut others, kind) {
            (Some(list), Some(kind)) => list.push((name.to_vec(), kind)),
            _ => others = None,
        };
        for (i, e) in listing.entries.iter().enumerate() {
            match (e.kind, e.meta) {
                (EntryKind::Dir, _) => kept.push(i),
                (EntryKind::File, Some(meta)) if self.selection.size_wanted(meta.size) => {
                    kept.push(i)
                }
                (EntryKind::File, _) if e.followed => other(&e.name, Some(Other::Symlink)),
                (EntryKind::File, Some(meta)) if meta.size == 0 => {
                    other(&e.name, Some(Other::EmptyFile))
                }
                (EntryKind::Symlink, _) => other(&e.name, Some(Other::Symlink)),
                _ => other(&e.name, None),
            }
        }
        for (name, kind) in listing.excluded {
            other(name, excluded_kind(listing, name, *kind));
        }
        let unusual = others.as_ref().is_none_or(|list| !list.is_empty());

        let first = {
            let mut tree = self.lock_tree();
            tree.dir_ids.insert(dir, listing.meta.id());
            if unusual {
                tree.others.insert(dir, others);
            }
            if kept.is_empty() {
                return Vec::new();
            }
            let names = kept.iter().map(|&i| listing.entries[i].name.as_slice());
            tree.arena.add_children(dir, names)
        };
        let node_at = |k: usize| NodeId::from_index(first.index() + k);
        let mut subdirs = Vec::new();
        {
            let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
            for (k, &i) in kept.iter().enumerate() {
                let e = &listing.entries[i];
                match e.meta {
                    Some(meta) if e.kind == EntryKind::File => {
                        self.progress.found_file(meta.size);
                        files.push(FileEntry { node: node_at(k), root, meta: meta.file_meta() });
                    }
                    _ => subdirs.push((i, (node_at(k), root))),
                }
            }
        }
        subdirs
    }
}

/// What an entry left out by the exclusion globs adds to its directory: an empty file or a
/// symlink takes part in the comparison of directories, anything else makes it unknown.
fn excluded_kind(listing: &Listing<'_>, name: &[u8], kind: Option<EntryKind>) -> Option<Other> {
    match kind {
        Some(EntryKind::Symlink) => Some(Other::Symlink),
        Some(EntryKind::File) | None => {
            let st = statat(listing.fd, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW).ok()?;
            match EntryKind::from_file_type(rustix::fs::FileType::from_raw_mode(st.st_mode)) {
                Some(EntryKind::File) if st.st_size == 0 => Some(Other::EmptyFile),
                Some(EntryKind::Symlink) => Some(Other::Symlink),
                _ => None,
            }
        }
        _ => None,
    }
}

fn parent_dir_id(path: &Path) -> Option<FileId> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let st = rustix::fs::stat(parent).ok()?;
    Some(FileId { dev: st.st_dev, ino: st.st_ino })
}
