//! The inode table of the snapshot mount: what each inode is (a folder or link of the mount's own,
//! a snapshot's root, an entry of a snapshot) and, once read, a directory's entries and a file's
//! layout. Inode numbers are indexes into one table that only grows (FORGET is ignored; an entry
//! costs ~600 bytes, and 32 more per chunk of a file), so a number never names two inodes while
//! the kernel may still cache it.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use dedup_store::file_reader::FileLayout;
use dedup_store::format::{Node, NodeKind};

/// An inode number.
pub type Ino = u64;
/// The mount's root.
pub const ROOT: Ino = 1;
/// `snapshots/`.
pub const SNAPSHOTS_DIR: Ino = 2;
/// `hosts/`.
pub const HOSTS_DIR: Ino = 3;

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
    layout: OnceLock<Arc<FileLayout>>,
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
    /// A new inode, found in `parent`.
    pub fn new(parent: Ino, what: What, snapshot: Option<usize>) -> Inode {
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

    /// Its entries, locked: whoever reads the directory's tree holds the lock, so that a second
    /// reader of the same directory waits for the first instead of reading it again.
    pub fn children(&self) -> MutexGuard<'_, Option<Arc<Children>>> {
        self.children.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A regular file's layout, made by `make` the first time it is asked for.
    pub fn layout(&self, make: impl FnOnce() -> Option<FileLayout>) -> Option<Arc<FileLayout>> {
        if let Some(layout) = self.layout.get() {
            return Some(Arc::clone(layout));
        }
        let made = Arc::new(make()?);
        Some(Arc::clone(self.layout.get_or_init(|| made)))
    }
}

/// Every inode of the mount.
#[derive(Default)]
pub struct InodeTable {
    table: RwLock<Vec<Arc<Inode>>>,
}

impl InodeTable {
    /// Adds `inode`; returns its number.
    pub fn push(&self, inode: Inode) -> Ino {
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        table.push(Arc::new(inode));
        table.len() as Ino
    }

    /// The inode `ino`.
    pub fn get(&self, ino: Ino) -> Option<Arc<Inode>> {
        let at = usize::try_from(ino.checked_sub(1)?).ok()?;
        self.table.read().unwrap_or_else(|e| e.into_inner()).get(at).cloned()
    }

    /// Gives directory `ino` (which exists) `entries`.
    pub fn set_children(&self, ino: Ino, mut entries: Vec<(Vec<u8>, Ino)>) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let inode = self.get(ino).expect("made before listed");
        *inode.children() = Some(Arc::new(Children { entries }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_start_at_one_and_find_their_inodes() {
        let table = InodeTable::default();
        assert_eq!(table.push(Inode::new(ROOT, What::Folder, None)), ROOT);
        let link = table.push(Inode::new(ROOT, What::Link(b"x".to_vec()), None));
        assert_eq!(link, 2);
        assert!(matches!(table.get(link).unwrap().what, What::Link(_)));
        assert!(table.get(0).is_none() && table.get(3).is_none());
        table.set_children(ROOT, vec![(b"b".to_vec(), 7), (b"a".to_vec(), link)]);
        let children = table.get(ROOT).unwrap().children().clone().unwrap();
        assert_eq!(
            (children.find(b"a"), children.find(b"b"), children.find(b"c")),
            (Some(2), Some(7), None)
        );
    }
}
