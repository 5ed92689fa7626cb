//! The mounted file system's inodes, made as they are needed: the top (`snapshots/`,
//! `hosts/HOST/`, `latest`; [`super::top`]) when mounting and when snapshots come or go, and a
//! directory of a snapshot the first time it is looked in, from its tree blob alone, so that
//! mounting a large repository reads no tree and `ls` of a directory reads one blob. Inode
//! numbers are indexes into one table that only grows (FORGET is ignored; an entry costs ~600
//! bytes, and 32 more per chunk of a file).
//!
//! Hard links: the names of one file (same device and inode at backup, more than one link) in
//! one snapshot share an inode, as far as they have been looked at.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use dedup_store::format::{Content, Node, NodeKind, Snapshot};
use dedup_store::index::Index;
use dedup_store::repo::Repository;
use dedup_store::Id;

use super::chunks::Layout;
use super::top::{Top, REFRESH_EVERY};

/// An inode number.
pub type Ino = u64;
/// The mount's root.
pub const ROOT: Ino = 1;
/// `snapshots/`.
pub const SNAPSHOTS_DIR: Ino = 2;
/// `hosts/`.
pub const HOSTS_DIR: Ino = 3;

/// The directory of every snapshot.
pub const SNAPSHOTS: &str = "snapshots";
/// The directory of each host's.
pub const HOSTS: &str = "hosts";
/// The link to the newest snapshot.
pub const LATEST: &str = "latest";

/// What an inode is.
pub enum What {
    /// A directory of the mount itself (the root, `snapshots`, `hosts`, a host's).
    Folder,
    /// A symlink of the mount itself (`latest`, an id's link to its snapshot).
    Link(Vec<u8>),
    /// A snapshot's root directory.
    SnapshotRoot(usize),
    /// An entry of a snapshot.
    Entry(Box<Node>),
}

/// One inode.
pub struct Inode {
    /// The directory it was found in (the root's is itself).
    pub parent: Ino,
    /// What it is.
    pub what: What,
    /// The snapshot it belongs to, if any.
    pub snapshot: Option<usize>,
    /// A directory's entries, sorted by name, once read.
    children: Mutex<Option<Arc<Children>>>,
    /// A regular file's chunks, once opened.
    layout: OnceLock<Arc<Layout>>,
}

/// A directory's entries, sorted by name bytes.
pub struct Children {
    /// Name and inode of each.
    pub entries: Vec<(Vec<u8>, Ino)>,
}

impl Children {
    /// The inode named `name`.
    pub fn find(&self, name: &[u8]) -> Option<Ino> {
        self.entries
            .binary_search_by(|(entry, _)| entry.as_slice().cmp(name))
            .ok()
            .map(|at| self.entries[at].1)
    }
}

impl Inode {
    pub(super) fn new(parent: Ino, what: What, snapshot: Option<usize>) -> Inode {
        Inode { parent, what, snapshot, children: Mutex::new(None), layout: OnceLock::new() }
    }

    /// The node, for an entry of a snapshot.
    pub fn node(&self) -> Option<&Node> {
        match &self.what {
            What::Entry(node) => Some(&**node),
            _ => None,
        }
    }

    /// Whether it is a directory.
    pub fn is_dir(&self) -> bool {
        match &self.what {
            What::Folder | What::SnapshotRoot(_) => true,
            What::Link(_) => false,
            What::Entry(node) => node.kind == NodeKind::Dir,
        }
    }
}

/// A snapshot as the mount shows it.
pub struct Shown {
    /// Its id.
    pub id: Id,
    /// What it records.
    pub snapshot: Snapshot,
    /// Its directory's name.
    pub name: String,
}

/// Every inode of the mount, and what it needs to make more.
pub struct Inodes {
    pub(super) repo: Arc<Repository>,
    index: RwLock<Arc<Index>>,
    /// Every snapshot met since mounting, in the order met (those gone since stay, unlisted).
    pub(super) snapshots: RwLock<Vec<Shown>>,
    table: RwLock<Vec<Arc<Inode>>>,
    /// Hard links: (snapshot, device, inode at backup) to the inode shown.
    links: Mutex<HashMap<(usize, u64, u64), Ino>>,
    /// The top's state: which snapshots are listed where.
    pub(super) top: Mutex<Top>,
    /// When the index files were last listed, and their names when the index was read.
    index_files: Mutex<(Instant, Option<BTreeSet<String>>)>,
}

impl Inodes {
    /// The top of the mount for `snapshots`; nothing below it is read yet.
    pub fn new(repo: Arc<Repository>, index: Arc<Index>, snapshots: Vec<(Id, Snapshot)>) -> Self {
        let inodes = Inodes {
            repo,
            index: RwLock::new(index),
            snapshots: RwLock::new(Vec::new()),
            table: RwLock::new(Vec::new()),
            links: Mutex::new(HashMap::new()),
            top: Mutex::new(Top::default()),
            index_files: Mutex::new((Instant::now(), None)),
        };
        inodes.lock_index_files().1 = inodes.index_file_names();
        for (ino, parent) in [(ROOT, ROOT), (SNAPSHOTS_DIR, ROOT), (HOSTS_DIR, ROOT)] {
            let made = inodes.push(Inode::new(parent, What::Folder, None));
            debug_assert_eq!(made, ino);
        }
        inodes.start_top(snapshots, Instant::now());
        inodes
    }

    pub(super) fn push(&self, inode: Inode) -> Ino {
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        table.push(Arc::new(inode));
        table.len() as Ino
    }

    pub(super) fn set_children(&self, ino: Ino, mut entries: Vec<(Vec<u8>, Ino)>) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let inode = self.get(ino).expect("made before listed");
        *inode.children.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Arc::new(Children { entries }));
    }

    /// The index blobs are looked up in (replaced when new snapshots come or a prune ran).
    pub fn index(&self) -> Arc<Index> {
        Arc::clone(&self.index.read().unwrap_or_else(|e| e.into_inner()))
    }

    fn lock_index_files(&self) -> std::sync::MutexGuard<'_, (Instant, Option<BTreeSet<String>>)> {
        self.index_files.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn index_file_names(&self) -> Option<BTreeSet<String>> {
        let listing = self.repo.backend().list("index").ok()?;
        Some(listing.into_iter().map(|file| file.name).collect())
    }

    /// Reads the index again (new snapshots' blobs are in index files written since).
    pub(super) fn reload_index(&self) -> bool {
        let names = self.index_file_names();
        match self.repo.load_index() {
            Ok(loaded) => {
                *self.index.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(loaded.index);
                *self.lock_index_files() = (Instant::now(), names);
                true
            }
            Err(_) => false,
        }
    }

    /// Reads the index again if its files changed since it was read, looking at most once
    /// per [`REFRESH_EVERY`]: after a prune moved chunks to other packs, reads find them
    /// there. Returns whether the index changed.
    pub fn reload_index_if_changed(&self) -> bool {
        {
            let mut seen = self.lock_index_files();
            if seen.0.elapsed() < REFRESH_EVERY {
                return false;
            }
            seen.0 = Instant::now();
        }
        let names = self.index_file_names();
        if names.is_none() || names == self.lock_index_files().1 {
            return false;
        }
        self.reload_index()
    }

    /// Snapshot `n`'s time (ns) and root tree.
    pub fn snapshot_time_and_tree(&self, n: usize) -> (i64, Id) {
        let snapshots = self.snapshots.read().unwrap_or_else(|e| e.into_inner());
        (snapshots[n].snapshot.time, snapshots[n].snapshot.tree)
    }

    /// The inode `ino`.
    pub fn get(&self, ino: Ino) -> Option<Arc<Inode>> {
        let at = usize::try_from(ino.checked_sub(1)?).ok()?;
        self.table.read().unwrap_or_else(|e| e.into_inner()).get(at).cloned()
    }

    /// The entries of directory `ino`, reading its tree blob the first time (for the top's
    /// folders, after looking for snapshots come or gone, at most once a second).
    pub fn children(&self, ino: Ino) -> Result<Arc<Children>, String> {
        let inode = self.get(ino).ok_or("no such inode")?;
        if matches!(inode.what, What::Folder) {
            self.refresh_top();
        }
        // Held while the tree is read: a second reader of the same directory waits for it.
        let mut children = inode.children.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(children) = &*children {
            return Ok(Arc::clone(children));
        }
        let tree_id = match &inode.what {
            What::SnapshotRoot(n) => self.snapshot_time_and_tree(*n).1,
            What::Entry(node) => match node.content {
                Content::Subtree(id) => id,
                _ => return Err("not a directory".into()),
            },
            _ => return Err("not a directory".into()),
        };
        let index = self.index();
        let tree = match self.repo.read_tree(&index, &tree_id) {
            Ok(tree) => tree,
            // Moved by a prune since the index was read? Once more with the index of now.
            Err(err) => {
                let again = !Arc::ptr_eq(&index, &self.index()) || self.reload_index_if_changed();
                if !again {
                    return Err(err.to_string());
                }
                self.repo.read_tree(&self.index(), &tree_id).map_err(|e| e.to_string())?
            }
        };
        let snapshot = inode.snapshot;
        let entries = tree.nodes.into_iter().map(|node| {
            let name = node.name.clone();
            (name, self.entry(ino, snapshot, node))
        });
        let made = Arc::new(Children { entries: entries.collect() });
        *children = Some(Arc::clone(&made));
        Ok(made)
    }

    /// The inode for `node` found in directory `parent`: a new one, or the one its other
    /// hard link has.
    fn entry(&self, parent: Ino, snapshot: Option<usize>, node: Node) -> Ino {
        let linked = node.kind == NodeKind::File && node.nlink > 1;
        let key = snapshot.map(|n| (n, node.dev, node.ino));
        if let (true, Some(key)) = (linked, key) {
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(&ino) = links.get(&key) {
                return ino;
            }
            let ino = self.push(Inode::new(parent, What::Entry(Box::new(node)), snapshot));
            links.insert(key, ino);
            return ino;
        }
        self.push(Inode::new(parent, What::Entry(Box::new(node)), snapshot))
    }

    /// A regular file's layout, made the first time it is asked for.
    pub fn layout(&self, inode: &Inode) -> Option<Arc<Layout>> {
        let node = inode.node().filter(|node| node.kind == NodeKind::File)?;
        let chunks: &[Id] = match &node.content {
            Content::Chunks(chunks) => chunks,
            _ => &[],
        };
        Some(Arc::clone(inode.layout.get_or_init(|| Arc::new(Layout::new(&self.index(), chunks)))))
    }
}
