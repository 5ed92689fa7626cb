//! The mounted tree, made as it is looked at: the top (`top.rs`) when mounting and when
//! snapshots come or go, and a directory of a snapshot the first time it is looked in, from its
//! tree blob alone, so that mounting a large repository reads no tree and `ls` of a directory
//! reads one blob.
//!
//! Hard links: the names of one file (same device and inode at backup, more than one link) in
//! one snapshot share an inode, as far as they have been looked at.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use dedup_store::file_reader::FileLayout;
use dedup_store::format::{Content, Node, NodeKind, Snapshot};
use dedup_store::live_index::LiveIndex;
use dedup_store::repo::Repository;
use dedup_store::{Error, Id};

use super::inodes::{Children, Ino, Inode, InodeTable, What};
use super::top::Top;

/// Every inode of the mount, and what it needs to make more.
pub struct MountTree {
    repo: Arc<Repository>,
    index: Arc<LiveIndex>,
    table: InodeTable,
    top: Top,
    /// Hard links: (snapshot, device, inode at backup) to the inode shown.
    links: Mutex<HashMap<(usize, u64, u64), Ino>>,
}

impl MountTree {
    /// The top of the mount for `snapshots`; nothing below it is read yet.
    pub fn new(
        repo: Arc<Repository>,
        index: Arc<LiveIndex>,
        snapshots: Vec<(Id, Snapshot)>,
    ) -> MountTree {
        let table = InodeTable::default();
        let top = Top::new(&table, snapshots, Instant::now());
        MountTree { repo, index, table, top, links: Mutex::new(HashMap::new()) }
    }

    /// The inode `ino`.
    pub fn get(&self, ino: Ino) -> Option<Arc<Inode>> {
        self.table.get(ino)
    }

    /// Where inode `ino` is, for a message: its path in its snapshot and the snapshot's name;
    /// `None` for the mount's own folders and links. A file of several names gives the first
    /// one looked at.
    pub fn place_of(&self, ino: Ino) -> Option<String> {
        let mut names = Vec::new();
        let mut at = ino;
        loop {
            let inode = self.table.get(at)?;
            match &inode.what {
                What::Entry(node) => names.push(node.name.clone()),
                What::SnapshotRoot(n) => {
                    let mut path = Vec::new();
                    for name in names.iter().rev() {
                        path.push(b'/');
                        path.extend_from_slice(name);
                    }
                    if path.is_empty() {
                        path.push(b'/');
                    }
                    let path = String::from_utf8_lossy(&path);
                    return Some(format!("{path} in snapshot {}", self.top.snapshot_name(*n)));
                }
                What::Folder | What::Link(_) => return None,
            }
            at = inode.parent;
        }
    }

    /// The top's folders and links.
    pub fn top(&self) -> &Top {
        &self.top
    }

    /// In `snapshots/` or `hosts/HOST/`: the link to the one snapshot listed there whose id
    /// starts with `name`.
    pub fn by_id(&self, dir: Ino, name: &[u8]) -> Option<Ino> {
        self.top.by_id(&self.table, dir, name)
    }

    /// The entries of directory `ino`, reading its tree blob the first time (for the top's
    /// folders, after looking for snapshots come or gone, at most once a second).
    pub fn children(&self, ino: Ino) -> Result<Arc<Children>, Error> {
        let inode = self.get(ino).ok_or_else(|| Error::Invalid(format!("no inode {ino}")))?;
        if matches!(inode.what, What::Folder) {
            self.top.refresh(&self.table, &self.repo, &self.index);
        }
        let mut children = inode.children();
        if let Some(children) = &*children {
            return Ok(Arc::clone(children));
        }
        let tree_id = match &inode.what {
            What::SnapshotRoot(n) => self.top.snapshot_time_and_tree(*n).1,
            What::Entry(node) => match node.content {
                Content::Subtree(id) => id,
                _ => return Err(Error::Invalid(format!("inode {ino} is not a directory"))),
            },
            _ => return Err(Error::Invalid(format!("inode {ino} is not a directory"))),
        };
        let tree = self.index.retry(&self.repo, |index| self.repo.read_tree(index, &tree_id))?;
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
            let ino = self.table.push(Inode::new(parent, What::Entry(Box::new(node)), snapshot));
            links.insert(key, ino);
            return ino;
        }
        self.table.push(Inode::new(parent, What::Entry(Box::new(node)), snapshot))
    }

    /// A regular file's layout, made the first time it is asked for.
    pub fn layout(&self, inode: &Inode) -> Option<Arc<FileLayout>> {
        let node = inode.node()?;
        inode.layout(|| FileLayout::of(node, &self.index.current()))
    }
}
