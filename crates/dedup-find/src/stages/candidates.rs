//! The stages that need no reading: files that share a size with no other file cannot have a
//! duplicate, and paths that share an inode are one file (hard links), not duplicates.

use std::collections::HashSet;

use dedup_core::FileMeta;

use crate::tree::{FileEntry, Tree};

/// One file (inode): its paths are `count` consecutive entries of `Tree::files` from `first`
/// (the sort by (size, dev, ino) puts them side by side), so a candidate costs 8 bytes and no
/// allocation; its metadata is that of its first entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inode {
    first: u32,
    count: u32,
}

impl Inode {
    /// Indices of its paths in `Tree::files`.
    pub fn paths(self) -> std::ops::Range<usize> {
        self.first as usize..(self.first + self.count) as usize
    }

    /// Index of the entry it is read through and whose metadata it carries.
    pub fn first(self) -> usize {
        self.first as usize
    }

    /// The inode with the single entry `first`, for tests that never read it.
    #[cfg(test)]
    pub fn numbered(first: u32) -> Inode {
        Inode { first, count: 1 }
    }

    /// Number of paths.
    pub fn path_count(self) -> usize {
        self.count as usize
    }

    /// Its metadata at walk time.
    pub fn meta(self, tree: &Tree) -> &FileMeta {
        &tree.files[self.first()].meta
    }
}

/// Files that are still possibly equal: same size, and the same samples once those are read.
#[derive(Debug)]
pub(crate) struct Class {
    pub size: u64,
    pub inodes: Vec<Inode>,
    /// True when some members were grouped by their cached digests rather than compared.
    pub cached: bool,
}

impl Class {
    /// True when the class is worth reporting (or reading further): two distinct files, or, when
    /// hard links count as duplicates, one file with two names.
    pub fn is_group(&self, hardlinks: bool) -> bool {
        self.inodes.len() >= 2 || (hardlinks && self.inodes.first().is_some_and(|i| i.count >= 2))
    }

    /// Number of paths across the class.
    pub fn path_count(&self) -> usize {
        self.inodes.iter().map(|i| i.path_count()).sum()
    }
}

/// Classes of equal size, and how many walked paths were one directory entry seen again.
pub(crate) struct SizeClasses {
    pub classes: Vec<Class>,
    pub repeated_entries: u64,
}

/// Sort the walked files by (size, device, inode) in place and cut them into classes of equal
/// size with their paths gathered per inode. O(n log n) time, no copy of the file list.
pub(crate) fn size_classes(tree: &mut Tree, hardlinks: bool) -> SizeClasses {
    tree.files.sort_unstable_by_key(|f| (f.meta.size, f.meta.id));
    let mut classes = Vec::new();
    let mut start = 0;
    let mut kept_paths = 0;
    let mut sized_paths = 0;
    while start < tree.files.len() {
        let size = tree.files[start].meta.size;
        let end = start + tree.files[start..].iter().take_while(|f| f.meta.size == size).count();
        // A repeated entry has its twin's inode, hence its size: it can only hide in a class of
        // two or more paths, which is where it is dropped.
        if end - start >= 2 {
            let class = Class { size, inodes: collapse_inodes(tree, start, end), cached: false };
            sized_paths += end - start;
            kept_paths += class.path_count();
            if class.is_group(hardlinks) {
                classes.push(class);
            }
        }
        start = end;
    }
    SizeClasses { classes, repeated_entries: (sized_paths - kept_paths) as u64 }
}

fn collapse_inodes(tree: &mut Tree, start: usize, end: usize) -> Vec<Inode> {
    let mut inodes: Vec<Inode> = Vec::new();
    let mut i = start;
    while i < end {
        let id = tree.files[i].meta.id;
        let next = i + tree.files[i..end].iter().take_while(|f| f.meta.id == id).count();
        let kept = if next - i > 1 { keep_distinct_entries(tree, i, next) } else { 1 };
        inodes.push(Inode { first: i as u32, count: kept as u32 });
        i = next;
    }
    inodes
}

/// Overlapping roots (`a` and `a/sub`, `.` and `./x`) reach one directory entry twice. Reorder
/// the paths of one inode (`files[start..end]`) so that each entry comes once, under the
/// earliest root, at the front, in (root, path) order; returns how many that is. True hard links
/// (other entries of the inode) all stay.
fn keep_distinct_entries(tree: &mut Tree, start: usize, end: usize) -> usize {
    let mut keyed: Vec<((u32, Vec<u8>), FileEntry)> = tree.files[start..end]
        .iter()
        .map(|entry| {
            let mut path = Vec::new();
            tree.arena.write_path(entry.node, &mut path);
            ((entry.root, path), *entry)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen = HashSet::with_capacity(keyed.len());
    let (mut kept, mut repeated) = (Vec::new(), Vec::new());
    for (_, entry) in keyed {
        let key = tree.entry_key(entry.node);
        // Without a known directory identity the entry cannot be proven repeated: keep it.
        if key.0.is_none() || seen.insert(key) {
            kept.push(entry);
        } else {
            repeated.push(entry);
        }
    }
    let count = kept.len();
    for (slot, entry) in tree.files[start..end].iter_mut().zip(kept.into_iter().chain(repeated)) {
        *slot = entry;
    }
    count
}
