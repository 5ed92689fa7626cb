//! The stages that need no reading: files that share a size with no other file cannot have a
//! duplicate, and paths that share an inode are one file (hard links), not duplicates.

use std::collections::HashSet;

use dedup_core::FileMeta;
use dedup_scan::Tree;

/// One file (inode) and every path it was found under, as indices into `Tree::files`.
#[derive(Debug, Clone)]
pub(crate) struct Inode {
    pub meta: FileMeta,
    pub paths: Vec<u32>,
}

/// Files that are still possibly equal: same size, and the same samples once those are read.
#[derive(Debug)]
pub(crate) struct Class {
    pub size: u64,
    pub inodes: Vec<Inode>,
}

impl Class {
    /// True when the class is worth reporting (or reading further): two distinct files, or, when
    /// hard links count as duplicates, one file with two names.
    pub fn is_group(&self, hardlinks: bool) -> bool {
        self.inodes.len() >= 2
            || (hardlinks && self.inodes.first().is_some_and(|i| i.paths.len() >= 2))
    }

    /// Number of paths across the class.
    pub fn path_count(&self) -> usize {
        self.inodes.iter().map(|i| i.paths.len()).sum()
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
    let files = &tree.files;
    let mut classes = Vec::new();
    let mut start = 0;
    let mut kept_paths = 0;
    let mut sized_paths = 0;
    while start < files.len() {
        let size = files[start].meta.size;
        let end = start + files[start..].iter().take_while(|f| f.meta.size == size).count();
        // A repeated entry has its twin's inode, hence its size: it can only hide in a class of
        // two or more paths, which is where it is dropped.
        if end - start >= 2 {
            let class = Class { size, inodes: collapse_inodes(tree, start, end) };
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

fn collapse_inodes(tree: &Tree, start: usize, end: usize) -> Vec<Inode> {
    let files = &tree.files;
    let mut inodes: Vec<Inode> = Vec::new();
    for (i, file) in files.iter().enumerate().take(end).skip(start) {
        match inodes.last_mut() {
            Some(last) if last.meta.id == file.meta.id => last.paths.push(i as u32),
            _ => inodes.push(Inode { meta: file.meta, paths: vec![i as u32] }),
        }
    }
    for inode in &mut inodes {
        if inode.paths.len() > 1 {
            drop_repeated_entries(tree, &mut inode.paths);
        }
    }
    inodes
}

/// Overlapping roots (`a` and `a/sub`, `.` and `./x`) reach one directory entry twice. Keep it
/// once, under the earliest root; true hard links (other entries of the inode) all stay.
fn drop_repeated_entries(tree: &Tree, paths: &mut Vec<u32>) {
    let key_of = |&i: &u32| {
        let entry = &tree.files[i as usize];
        let mut path = Vec::new();
        tree.arena.write_path(entry.node, &mut path);
        (entry.root, path)
    };
    let mut keyed: Vec<((u32, Vec<u8>), u32)> = paths.iter().map(|i| (key_of(i), *i)).collect();
    keyed.sort();
    let mut seen = HashSet::with_capacity(keyed.len());
    paths.clear();
    for (_, i) in keyed {
        let key = tree.entry_key(tree.files[i as usize].node);
        // Without a known directory identity the entry cannot be proven repeated: keep it.
        if key.0.is_none() || seen.insert(key) {
            paths.push(i);
        }
    }
}
