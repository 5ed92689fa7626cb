//! The volume's inodes and names: what every metadata request reads and changes (create, link,
//! unlink, rename, mkdir, rmdir), with POSIX's errors, and the inode numbers the kernel is given.
//! File content lives apart (shared, behind a lock of its own), so a long write or read holds
//! no lock on the table.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use dedup_store::format::{valid_name, NodeKind};

/// Longest name (Linux's NAME_MAX).
const MAX_NAME: usize = 255;
use dedup_store::Id;
use rustix::io::Errno;

use super::content::Content;

/// An inode number as the kernel sees it; the root is 1.
pub type Ino = u64;

/// A directory's entries: names and inodes, in name order.
pub type Entries = Vec<(Vec<u8>, Ino)>;

/// The root directory's inode.
pub const ROOT: Ino = 1;

/// One file, directory, link or special file of the volume.
#[derive(Debug, Clone)]
pub struct Inode {
    pub kind: NodeKind,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub rdev: u64,
    pub atime: i64,
    pub mtime: i64,
    pub ctime: i64,
    pub xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
    /// A symlink's target.
    pub target: Vec<u8>,
    /// Names that lead here (a directory: 1, its entry in its parent).
    pub links: u32,
    /// Open file handles: an unlinked file lives until the last is closed.
    pub open: u32,
    /// A directory's entries and its parent (boxed, as the damaged list is: most inodes are
    /// files, and an inode's size is paid by each of them).
    pub dir: Option<Box<Dir>>,
    /// A regular file's content.
    pub file: Option<Arc<Mutex<Content>>>,
    /// A file whose chunks the index does not all know (its chunks and size): served as EIO,
    /// committed unchanged.
    pub damaged: Option<Box<(Vec<Id>, u64)>>,
}

/// A directory's entries and its parent.
#[derive(Debug, Clone, Default)]
pub struct Dir {
    /// Names as boxed slices: no length-and-capacity pair, no room beyond the name.
    pub entries: BTreeMap<Box<[u8]>, Ino>,
    pub parent: Ino,
    /// How many of the entries are directories (its link count is 2 more), kept as entries
    /// come and go: counting them at each `stat` cost a look at every entry, for each file
    /// created in a directory of thousands.
    subdirs: u32,
}

impl Dir {
    /// How many of its entries are directories.
    pub fn subdirs(&self) -> u32 {
        self.subdirs
    }
}

impl Inode {
    /// A new inode of `kind` made now by `uid`/`gid` with permission bits `mode`.
    pub fn new(kind: NodeKind, mode: u32, uid: u32, gid: u32, now: i64) -> Inode {
        Inode {
            kind,
            mode: mode & 0o7777,
            uid,
            gid,
            rdev: 0,
            atime: now,
            mtime: now,
            ctime: now,
            xattrs: BTreeMap::new(),
            target: Vec::new(),
            links: 0,
            open: 0,
            dir: (kind == NodeKind::Dir).then(Box::default),
            file: (kind == NodeKind::File).then(|| Arc::new(Mutex::new(Content::default()))),
            damaged: None,
        }
    }
}

/// Every inode of the volume.
#[derive(Debug, Default)]
pub struct Table {
    /// Boxed: a map leaves about a third of its slots empty, and an empty slot of a pointer
    /// costs 8 bytes where one of an inode costs its whole size.
    inodes: HashMap<Ino, Box<Inode>>,
    next: Ino,
}

/// Checks a name given by the kernel.
pub fn check_name(name: &[u8]) -> Result<(), Errno> {
    if name.len() > MAX_NAME {
        return Err(Errno::NAMETOOLONG);
    }
    if valid_name(name) {
        Ok(())
    } else {
        Err(Errno::INVAL)
    }
}

impl Table {
    /// A table holding only `root`.
    pub fn with_root(mut root: Inode) -> Table {
        root.links = 1;
        if let Some(dir) = &mut root.dir {
            dir.parent = ROOT;
        }
        let mut inodes = HashMap::new();
        inodes.insert(ROOT, Box::new(root));
        Table { inodes, next: ROOT + 1 }
    }

    pub fn get(&self, ino: Ino) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).map(|inode| &**inode).ok_or(Errno::NOENT)
    }

    pub fn get_mut(&mut self, ino: Ino) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).map(|inode| &mut **inode).ok_or(Errno::NOENT)
    }

    /// Number of inodes.
    pub fn inode_count(&self) -> usize {
        self.inodes.len()
    }

    /// Every directory, in no order.
    pub fn directories(&self) -> impl Iterator<Item = (Ino, &Dir)> {
        self.inodes.iter().filter_map(|(ino, inode)| Some((*ino, inode.dir.as_deref()?)))
    }

    fn dir(&self, ino: Ino) -> Result<&Dir, Errno> {
        self.get(ino)?.dir.as_deref().ok_or(Errno::NOTDIR)
    }

    fn dir_mut(&mut self, ino: Ino) -> Result<&mut Dir, Errno> {
        self.get_mut(ino)?.dir.as_deref_mut().ok_or(Errno::NOTDIR)
    }

    /// The entry `name` of directory `parent`.
    pub fn lookup(&self, parent: Ino, name: &[u8]) -> Result<Ino, Errno> {
        self.dir(parent)?.entries.get(name).copied().ok_or(Errno::NOENT)
    }

    /// Directory `ino`'s parent and entries.
    pub fn listing(&self, ino: Ino) -> Result<(Ino, Entries), Errno> {
        let dir = self.dir(ino)?;
        Ok((dir.parent, dir.entries.iter().map(|(n, i)| (n.to_vec(), *i)).collect()))
    }

    /// Counts directory `ino` in the subdirectories of `parent`, or no longer (`gone`), if it is
    /// a directory.
    fn count_subdir(&mut self, parent: Ino, ino: Ino, gone: bool) {
        if self.dir(ino).is_err() {
            return;
        }
        if let Ok(dir) = self.dir_mut(parent) {
            dir.subdirs =
                if gone { dir.subdirs.saturating_sub(1) } else { dir.subdirs.saturating_add(1) };
        }
    }

    /// Adds `inode` as `name` in `parent`; returns its number.
    pub fn create(&mut self, parent: Ino, name: &[u8], mut inode: Inode) -> Result<Ino, Errno> {
        check_name(name)?;
        if self.dir(parent)?.entries.contains_key(name) {
            return Err(Errno::EXIST);
        }
        let ino = self.next;
        self.next += 1;
        inode.links = 1;
        if let Some(dir) = &mut inode.dir {
            dir.parent = parent;
        }
        self.inodes.insert(ino, Box::new(inode));
        self.dir_mut(parent)?.entries.insert(name.into(), ino);
        self.count_subdir(parent, ino, false);
        Ok(ino)
    }

    /// Adds inode `ino` under a new number with no name (loading a snapshot: names follow).
    pub fn adopt(&mut self, inode: Inode) -> Ino {
        let ino = self.next;
        self.next += 1;
        self.inodes.insert(ino, Box::new(inode));
        ino
    }

    /// Names `ino` (already in the table) `name` in `parent` while loading.
    pub fn name_loaded(&mut self, parent: Ino, name: &[u8], ino: Ino) -> Result<(), Errno> {
        if self.dir_mut(parent)?.entries.insert(name.into(), ino).is_none() {
            self.count_subdir(parent, ino, false);
        }
        let inode = self.get_mut(ino)?;
        inode.links += 1;
        if let Some(dir) = &mut inode.dir {
            dir.parent = parent;
        }
        Ok(())
    }

    /// A new name for the file `ino`.
    pub fn link(&mut self, ino: Ino, parent: Ino, name: &[u8]) -> Result<(), Errno> {
        check_name(name)?;
        if self.get(ino)?.dir.is_some() {
            return Err(Errno::PERM);
        }
        if self.dir(parent)?.entries.contains_key(name) {
            return Err(Errno::EXIST);
        }
        self.dir_mut(parent)?.entries.insert(name.into(), ino);
        self.get_mut(ino)?.links += 1;
        Ok(())
    }

    /// Removes the name `name` of a non-directory in `parent`; returns its inode.
    pub fn unlink(&mut self, parent: Ino, name: &[u8]) -> Result<Ino, Errno> {
        let ino = self.lookup(parent, name)?;
        if self.get(ino)?.dir.is_some() {
            return Err(Errno::ISDIR);
        }
        self.dir_mut(parent)?.entries.remove(name);
        self.drop_link(ino);
        Ok(ino)
    }

    /// Removes the empty directory `name` of `parent`.
    pub fn rmdir(&mut self, parent: Ino, name: &[u8]) -> Result<(), Errno> {
        if name == b"." {
            return Err(Errno::INVAL);
        }
        if name == b".." {
            return Err(Errno::NOTEMPTY);
        }
        let ino = self.lookup(parent, name)?;
        if !self.dir(ino)?.entries.is_empty() {
            return Err(Errno::NOTEMPTY);
        }
        self.dir_mut(parent)?.entries.remove(name);
        self.count_subdir(parent, ino, true);
        self.drop_link(ino);
        Ok(())
    }

    /// One name of `ino` fewer. The inode stays, nameless, until the kernel forgets it: the
    /// kernel still holds it after an unlink and may send requests on it (the times of a file
    /// written through its cache come after the unlink), which must not fail.
    fn drop_link(&mut self, ino: Ino) {
        if let Some(inode) = self.inodes.get_mut(&ino) {
            inode.links = inode.links.saturating_sub(1);
        }
    }

    /// The kernel forgot inode `ino`: it goes once no name and no open handle holds it either.
    pub fn forget_if_unused(&mut self, ino: Ino) {
        if ino != ROOT && self.inodes.get(&ino).is_some_and(|i| i.links == 0 && i.open == 0) {
            self.inodes.remove(&ino);
        }
    }

    /// Whether `ino` is `ancestor` or lies below it.
    fn is_within(&self, mut ino: Ino, ancestor: Ino) -> bool {
        loop {
            if ino == ancestor {
                return true;
            }
            match self.dir(ino) {
                Ok(dir) if dir.parent != ino => ino = dir.parent,
                _ => return false,
            }
        }
    }

    /// Renames `parent/name` to `new_parent/new_name`, replacing what is there as rename(2)
    /// does; with `no_replace`, EEXIST instead; with `exchange`, the two swap.
    pub fn rename(
        &mut self,
        (parent, name): (Ino, &[u8]),
        (new_parent, new_name): (Ino, &[u8]),
        no_replace: bool,
        exchange: bool,
    ) -> Result<(), Errno> {
        check_name(new_name)?;
        let ino = self.lookup(parent, name)?;
        let target = self.dir(new_parent)?.entries.get(new_name).copied();
        let moving_dir = self.get(ino)?.dir.is_some();
        if moving_dir && self.is_within(new_parent, ino) {
            return Err(Errno::INVAL);
        }
        if exchange {
            let other = target.ok_or(Errno::NOENT)?;
            if self.get(other)?.dir.is_some() && self.is_within(parent, other) {
                return Err(Errno::INVAL);
            }
            self.dir_mut(parent)?.entries.insert(name.into(), other);
            self.dir_mut(new_parent)?.entries.insert(new_name.into(), ino);
            self.count_subdir(parent, ino, true);
            self.count_subdir(new_parent, ino, false);
            self.count_subdir(new_parent, other, true);
            self.count_subdir(parent, other, false);
            self.set_parent(other, parent);
            self.set_parent(ino, new_parent);
            return Ok(());
        }
        if let Some(target) = target {
            if target == ino {
                return Ok(());
            }
            if no_replace {
                return Err(Errno::EXIST);
            }
            match (moving_dir, self.get(target)?.dir.as_ref()) {
                (true, None) => return Err(Errno::NOTDIR),
                (false, Some(_)) => return Err(Errno::ISDIR),
                (true, Some(dir)) if !dir.entries.is_empty() => return Err(Errno::NOTEMPTY),
                _ => {}
            }
            self.count_subdir(new_parent, target, true);
            self.drop_link(target);
        }
        self.dir_mut(parent)?.entries.remove(name);
        self.dir_mut(new_parent)?.entries.insert(new_name.into(), ino);
        self.count_subdir(parent, ino, true);
        self.count_subdir(new_parent, ino, false);
        self.set_parent(ino, new_parent);
        Ok(())
    }

    fn set_parent(&mut self, ino: Ino, parent: Ino) {
        if let Some(dir) = self.inodes.get_mut(&ino).and_then(|i| i.dir.as_mut()) {
            dir.parent = parent;
        }
    }

    /// The contents of every file (for a commit to cut what was written).
    pub fn files(&self) -> Vec<Arc<Mutex<Content>>> {
        self.inodes.values().filter_map(|i| i.file.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table::with_root(Inode::new(NodeKind::Dir, 0o755, 0, 0, 0))
    }

    fn file() -> Inode {
        Inode::new(NodeKind::File, 0o644, 0, 0, 0)
    }

    fn dir() -> Inode {
        Inode::new(NodeKind::Dir, 0o755, 0, 0, 0)
    }

    #[test]
    fn renames_follow_posix() {
        let mut t = table();
        let a = t.create(ROOT, b"a", dir()).unwrap();
        let b = t.create(ROOT, b"b", dir()).unwrap();
        let f = t.create(a, b"f", file()).unwrap();
        let g = t.create(ROOT, b"g", file()).unwrap();
        // A directory cannot go below itself.
        assert_eq!(t.rename((ROOT, b"a"), (a, b"x"), false, false), Err(Errno::INVAL));
        // Over a non-empty directory; a file over a directory; a directory over a file.
        assert_eq!(t.rename((ROOT, b"b"), (ROOT, b"a"), false, false), Err(Errno::NOTEMPTY));
        assert_eq!(t.rename((ROOT, b"g"), (ROOT, b"b"), false, false), Err(Errno::ISDIR));
        assert_eq!(t.rename((ROOT, b"b"), (ROOT, b"g"), false, false), Err(Errno::NOTDIR));
        assert_eq!(t.rename((ROOT, b"g"), (a, b"f"), true, false), Err(Errno::EXIST));
        // A file over a file: the old one goes, once the kernel forgets it.
        t.rename((ROOT, b"g"), (a, b"f"), false, false).unwrap();
        assert_eq!(t.lookup(a, b"f"), Ok(g));
        assert_eq!(t.get(f).map(|i| i.links), Ok(0));
        t.forget_if_unused(f);
        assert_eq!(t.get(f).err(), Some(Errno::NOENT));
        // A directory moves with its entries and its parent changes.
        t.rename((ROOT, b"a"), (b, b"a2"), false, false).unwrap();
        assert_eq!(t.listing(a).unwrap().0, b);
        assert_eq!(t.lookup(a, b"f"), Ok(g));
        // Exchange.
        let h = t.create(ROOT, b"h", file()).unwrap();
        t.rename((ROOT, b"h"), (ROOT, b"b"), false, true).unwrap();
        assert_eq!((t.lookup(ROOT, b"h"), t.lookup(ROOT, b"b")), (Ok(b), Ok(h)));
    }

    /// The directories among `ino`'s entries, counted one by one.
    fn counted(t: &Table, ino: Ino) -> u32 {
        let dir = t.dir(ino).unwrap();
        dir.entries.values().filter(|i| t.get(**i).unwrap().dir.is_some()).count() as u32
    }

    #[test]
    fn subdirectory_counts_follow_every_change_of_names() {
        let mut t = table();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let name = |n: u64| format!("e{n}").into_bytes();
        for _ in 0..3000 {
            let mut dirs: Vec<Ino> =
                t.inodes.iter().filter(|(_, i)| i.dir.is_some()).map(|(n, _)| *n).collect();
            dirs.sort_unstable();
            let (a, b) =
                (dirs[next(dirs.len() as u64) as usize], dirs[next(dirs.len() as u64) as usize]);
            let (x, y) = (name(next(6)), name(next(6)));
            // Errors are expected (no such name, not empty, a loop): each is still a change tried.
            let _ = match next(7) {
                0 | 1 => t.create(a, &x, dir()).map(|_| ()),
                2 => t.create(a, &x, file()).map(|_| ()),
                3 => t.rmdir(a, &x),
                4 => t.unlink(a, &x).map(|_| ()),
                5 => t.rename((a, &x), (b, &y), false, false),
                _ => t.rename((a, &x), (b, &y), false, true),
            };
            for ino in t.inodes.keys().copied().collect::<Vec<_>>() {
                if let Ok(dir) = t.dir(ino) {
                    assert_eq!(dir.subdirs(), counted(&t, ino), "directory {ino}");
                }
            }
        }
    }

    #[test]
    fn an_unlinked_file_lives_until_closed_and_forgotten_and_links_count() {
        let mut t = table();
        let f = t.create(ROOT, b"f", file()).unwrap();
        t.link(f, ROOT, b"g").unwrap();
        assert_eq!(t.get(f).unwrap().links, 2);
        assert_eq!(t.link(ROOT, ROOT, b"d"), Err(Errno::PERM));
        t.get_mut(f).unwrap().open = 1;
        t.unlink(ROOT, b"f").unwrap();
        t.unlink(ROOT, b"g").unwrap();
        assert!(t.get(f).is_ok(), "dropped while open");
        t.get_mut(f).unwrap().open = 0;
        assert!(t.get(f).is_ok(), "dropped before the kernel forgot it");
        t.forget_if_unused(f);
        assert!(t.get(f).is_err());
        assert_eq!(t.create(ROOT, &[b'x'; 256], file()), Err(Errno::NAMETOOLONG));
        assert_eq!(t.rmdir(ROOT, b"nope"), Err(Errno::NOENT));
    }
}
