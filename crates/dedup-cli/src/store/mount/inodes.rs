//! The mounted file system's inodes, made as they are needed: the fixed top (`snapshots/`,
//! `hosts/HOST/`, `latest`) when mounting, and a directory of a snapshot the first time it is
//! looked in, from its tree blob alone, so that mounting a large repository reads no tree and
//! `ls` of a directory reads one blob. Inode numbers are indexes into one table that only
//! grows (FORGET is ignored; an entry costs ~600 bytes, and 32 more per chunk of a file).
//!
//! Hard links: the names of one file (same device and inode at backup, more than one link) in
//! one snapshot share an inode, as far as they have been looked at.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use dedup_store::format::{Content, Node, NodeKind, Snapshot};
use dedup_store::index::Index;
use dedup_store::repo::Repository;
use dedup_store::Id;

use super::chunks::Layout;
use super::names;

/// An inode number.
pub type Ino = u64;
/// The mount's root.
pub const ROOT: Ino = 1;

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
    /// For `snapshots/` and `hosts/HOST/`: the snapshots listed there (for ids as names).
    listed: Vec<usize>,
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
    fn new(parent: Ino, what: What, snapshot: Option<usize>) -> Inode {
        Inode {
            parent,
            what,
            snapshot,
            children: Mutex::new(None),
            layout: OnceLock::new(),
            listed: Vec::new(),
        }
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
    repo: Arc<Repository>,
    index: Arc<Index>,
    /// The snapshots, oldest first.
    pub snapshots: Vec<Shown>,
    table: RwLock<Vec<Arc<Inode>>>,
    /// Hard links: (snapshot, device, inode at backup) to the inode shown.
    links: Mutex<HashMap<(usize, u64, u64), Ino>>,
    /// The link made for each (directory, snapshot) found by id.
    id_links: Mutex<HashMap<(Ino, usize), Ino>>,
}

impl Inodes {
    /// The top of the mount for `snapshots` (oldest first); nothing below it is read yet.
    pub fn new(repo: Arc<Repository>, index: Arc<Index>, snapshots: Vec<(Id, Snapshot)>) -> Self {
        let times: Vec<(Id, i64)> = snapshots.iter().map(|(id, s)| (*id, s.time)).collect();
        let snapshots: Vec<Shown> = snapshots
            .into_iter()
            .zip(names::snapshot_names(&times))
            .map(|((id, snapshot), name)| Shown { id, snapshot, name })
            .collect();
        let inodes = Inodes {
            repo,
            index,
            snapshots,
            table: RwLock::new(Vec::new()),
            links: Mutex::new(HashMap::new()),
            id_links: Mutex::new(HashMap::new()),
        };
        inodes.make_top();
        inodes
    }

    fn push(&self, inode: Inode) -> Ino {
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        table.push(Arc::new(inode));
        table.len() as Ino
    }

    fn set_children(&self, ino: Ino, mut entries: Vec<(Vec<u8>, Ino)>) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let inode = self.get(ino).expect("made above");
        *inode.children.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Arc::new(Children { entries }));
    }

    /// Makes the root, `snapshots/`, `hosts/HOST/` and the `latest` links.
    fn make_top(&self) {
        let root = self.push(Inode::new(ROOT, What::Folder, None));
        debug_assert_eq!(root, ROOT);
        let all: Vec<usize> = (0..self.snapshots.len()).collect();
        let snapshots_dir = self.folder(ROOT, all.clone());
        let hosts_dir = self.folder(ROOT, Vec::new());
        let mut top = vec![(SNAPSHOTS.into(), snapshots_dir), (HOSTS.into(), hosts_dir)];
        if let Some(newest) = self.snapshots.last() {
            let target = format!("{SNAPSHOTS}/{}", newest.name).into_bytes();
            top.push((LATEST.into(), self.push(Inode::new(ROOT, What::Link(target), None))));
        }
        self.set_children(ROOT, top);
        // `snapshots/latest` would be a name no snapshot can take; the top's `latest` serves.
        self.fill_snapshot_folder(snapshots_dir, &all, false);
        let mut by_host: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        for (n, shown) in self.snapshots.iter().enumerate() {
            by_host.entry(host_name(&shown.snapshot.host)).or_default().push(n);
        }
        let mut hosts = Vec::new();
        for (host, listed) in by_host {
            let dir = self.folder(hosts_dir, listed.clone());
            self.fill_snapshot_folder(dir, &listed, true);
            hosts.push((host, dir));
        }
        self.set_children(hosts_dir, hosts);
    }

    fn folder(&self, parent: Ino, listed: Vec<usize>) -> Ino {
        let mut inode = Inode::new(parent, What::Folder, None);
        inode.listed = listed;
        self.push(inode)
    }

    /// Gives `dir` a directory for each of `listed` and, `with_latest`, a `latest` link to the
    /// newest.
    fn fill_snapshot_folder(&self, dir: Ino, listed: &[usize], with_latest: bool) {
        let mut entries: Vec<(Vec<u8>, Ino)> = listed
            .iter()
            .map(|&n| {
                let root = self.push(Inode::new(dir, What::SnapshotRoot(n), Some(n)));
                (self.snapshots[n].name.clone().into_bytes(), root)
            })
            .collect();
        if let (true, Some(&newest)) = (with_latest, listed.last()) {
            let target = self.snapshots[newest].name.clone().into_bytes();
            entries.push((LATEST.into(), self.push(Inode::new(dir, What::Link(target), None))));
        }
        self.set_children(dir, entries);
    }

    /// The inode `ino`.
    pub fn get(&self, ino: Ino) -> Option<Arc<Inode>> {
        let at = usize::try_from(ino.checked_sub(1)?).ok()?;
        self.table.read().unwrap_or_else(|e| e.into_inner()).get(at).cloned()
    }

    /// The entries of directory `ino`, reading its tree blob the first time.
    pub fn children(&self, ino: Ino) -> Result<Arc<Children>, String> {
        let inode = self.get(ino).ok_or("no such inode")?;
        // Held while the tree is read: a second reader of the same directory waits for it.
        let mut children = inode.children.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(children) = &*children {
            return Ok(Arc::clone(children));
        }
        let tree_id = match &inode.what {
            What::SnapshotRoot(n) => self.snapshots[*n].snapshot.tree,
            What::Entry(node) => match node.content {
                Content::Subtree(id) => id,
                _ => return Err("not a directory".into()),
            },
            _ => return Err("not a directory".into()),
        };
        let tree = self.repo.read_tree(&self.index, &tree_id).map_err(|e| e.to_string())?;
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

    /// In `snapshots/` or `hosts/HOST/`: a link to the snapshot listed there whose id starts
    /// with `name`, if exactly one does.
    pub fn by_id(&self, dir: Ino, name: &[u8]) -> Option<Ino> {
        if !names::is_id_prefix(name) {
            return None;
        }
        let inode = self.get(dir)?;
        let id = names::find_by_prefix(name, inode.listed.iter().map(|&n| &self.snapshots[n].id))?;
        let n = *inode.listed.iter().find(|&&n| self.snapshots[n].id == *id)?;
        let mut made = self.id_links.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&ino) = made.get(&(dir, n)) {
            return Some(ino);
        }
        let target = self.snapshots[n].name.clone().into_bytes();
        let ino = self.push(Inode::new(dir, What::Link(target), None));
        made.insert((dir, n), ino);
        Some(ino)
    }

    /// A regular file's layout, made the first time it is asked for.
    pub fn layout(&self, inode: &Inode) -> Option<Arc<Layout>> {
        let node = inode.node().filter(|node| node.kind == NodeKind::File)?;
        let chunks: &[Id] = match &node.content {
            Content::Chunks(chunks) => chunks,
            _ => &[],
        };
        Some(Arc::clone(inode.layout.get_or_init(|| Arc::new(Layout::new(&self.index, chunks)))))
    }
}

/// A host's name as a directory name: `/` and NUL cannot be in one, and an empty name would
/// not be listed.
fn host_name(host: &str) -> Vec<u8> {
    let name: String = host.chars().map(|c| if c == '/' || c == '\0' { '_' } else { c }).collect();
    match name.as_str() {
        "" | "." | ".." => format!("host{name}").into_bytes(),
        _ => name.into_bytes(),
    }
}
