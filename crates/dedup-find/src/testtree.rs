//! Trees built by hand for the unit tests of the analyses: files whose size stands for their
//! content (the size stage alone then makes the groups), directories, and hard links.

use std::collections::HashMap;

use dedup_core::{FileId, FileMeta};
use dedup_scan::NodeId;

use crate::tree::{FileEntry, Root, Tree};

use crate::stages::candidates::{size_classes, Class};

/// A tree under the roots named by each entry's first component. Entries: (path, size) for a
/// file, (path, None) for an empty directory. Every file is its own inode.
pub(crate) fn build(entries: &[(&str, Option<u64>)]) -> Tree {
    let with_inodes: Vec<(&str, Option<u64>, Option<u64>)> =
        entries.iter().map(|&(p, s)| (p, s, None)).collect();
    build_linked(&with_inodes)
}

/// Like [`build`] with paths relative to one root `r`, and optional inode numbers: two files
/// with one inode number are hard links.
pub(crate) fn build_linked(entries: &[(&str, Option<u64>, Option<u64>)]) -> Tree {
    let prefixed: Vec<(String, Option<u64>, Option<u64>)> =
        entries.iter().map(|&(p, s, i)| (format!("r/{p}"), s, i)).collect();
    build_roots(&prefixed)
}

/// The general form: the first component of each path is its root.
pub(crate) fn build_roots(entries: &[(String, Option<u64>, Option<u64>)]) -> Tree {
    let mut tree = Tree::default();
    let mut nodes: HashMap<String, NodeId> = HashMap::new();
    let mut next_ino = 1000;
    for (path, size, ino) in entries {
        let parts: Vec<&str> = path.split('/').collect();
        let mut prefix = String::new();
        let mut parent: Option<NodeId> = None;
        for (depth, part) in parts.iter().enumerate() {
            if depth > 0 {
                prefix.push('/');
            }
            prefix.push_str(part);
            let node = match nodes.get(&prefix) {
                Some(&n) => n,
                None => {
                    let n = match parent {
                        None => {
                            let n = tree.arena.add_root(part.as_bytes());
                            tree.roots.push(Root { path: part.into(), node: Some(n) });
                            n
                        }
                        Some(p) => tree.arena.add_children(p, [part.as_bytes()]),
                    };
                    nodes.insert(prefix.clone(), n);
                    n
                }
            };
            parent = Some(node);
        }
        if let (Some(size), Some(node)) = (size, parent) {
            let ino = ino.unwrap_or_else(|| {
                next_ino += 1;
                next_ino
            });
            let root = tree.roots.iter().position(|r| r.node == Some(tree.arena.root_of(node)));
            tree.files.push(FileEntry {
                node,
                root: root.unwrap_or(0) as u32,
                meta: FileMeta {
                    id: FileId { dev: 1, ino },
                    size: *size,
                    mtime_ns: 0,
                    ctime_ns: 0,
                },
            });
        }
    }
    tree
}

/// The groups the size stage makes (equal sizes stand for equal content).
pub(crate) fn groups(tree: &mut Tree, hardlinks: bool) -> Vec<Class> {
    size_classes(tree, hardlinks).classes
}
