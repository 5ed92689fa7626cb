//! The paths given to back up, and the snapshot's root tree, which mirrors them: `/home/a/docs`
//! becomes `home` → `a` → `docs`, the directories on the way with their own metadata. A path
//! that does not exist is left out (and named); with none left, or none read, there is no
//! snapshot to write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dedup_core::Observer;
use dedup_scan::Metadata;

use super::problems;
use super::visitor::node_of;
use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind, Tree};
use crate::id::Id;
use crate::repo::BlobSink;

enum Slot {
    /// A directory on the way to a root, with its metadata.
    Between(Node, BTreeMap<Vec<u8>, Slot>),
    /// A root's own node.
    Root(Node),
}

/// The paths of `given` that exist, made absolute (not resolved), and how many do not: each of
/// those is reported to `observer` as left out of the snapshot. None existing is an error naming
/// every one: a backup of an unmounted disk must not write an empty snapshot.
pub fn present(given: &[PathBuf], observer: &dyn Observer) -> Result<(Vec<PathBuf>, u64)> {
    if given.is_empty() {
        return Err(Error::Invalid("no path to back up".into()));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for path in given {
        let path =
            std::path::absolute(path).map_err(|e| Error::io(path.display().to_string(), e))?;
        // Followed, as the walk follows a root that is a symlink.
        match std::fs::metadata(&path) {
            Ok(_) => found.push(path),
            Err(err) => missing.push((path, err)),
        }
    }
    if found.is_empty() {
        let why: Vec<String> =
            missing.iter().map(|(path, err)| format!("{}: {err}", path.display())).collect();
        return Err(Error::Invalid(format!("nothing to back up: {}", why.join("; "))));
    }
    let count = missing.len() as u64;
    for (path, err) in missing {
        observer.problem(problems::missing_root(path, &err));
    }
    Ok((found, count))
}

/// Fails when not one of the roots `found` (by index of `paths`) was read: every one vanished,
/// or could not be listed or read (each was named as it was met).
pub fn some_read(paths: &[PathBuf], found: &[Option<Node>]) -> Result<()> {
    if found.iter().flatten().any(|node| !node.incomplete) {
        return Ok(());
    }
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    Err(Error::Invalid(format!("nothing could be read of {}", shown.join(", "))))
}

fn between(path: &Path, name: &[u8]) -> Node {
    let meta = rustix::fs::lstat(path).ok().as_ref().and_then(Metadata::from_stat);
    match meta {
        Some(meta) if meta.kind == dedup_scan::EntryKind::Dir => node_of(name, &meta, None),
        _ => Node { name: name.to_vec(), kind: NodeKind::Dir, mode: 0o755, ..Node::default() },
    }
}

/// Stores the trees from `/` down to each root and returns the root tree's id and its status
/// tree's. Roots inside another root are already in its tree and are not added twice.
pub fn store_root(
    sink: &BlobSink<'_>,
    paths: &[PathBuf],
    found: Vec<Option<Node>>,
) -> Result<(Id, Option<Id>)> {
    let mut order: Vec<(usize, Vec<Vec<u8>>)> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                i,
                p.as_os_str()
                    .as_encoded_bytes()
                    .split(|&b| b == b'/')
                    .filter(|c| !c.is_empty() && *c != b".")
                    .map(<[u8]>::to_vec)
                    .collect(),
            )
        })
        .collect();
    order.sort_by_key(|(_, parts)| parts.len());
    let mut top: BTreeMap<Vec<u8>, Slot> = BTreeMap::new();
    let mut found = found;
    for (i, parts) in order {
        let Some(node) = found[i].take() else { continue };
        let Some((last, _)) = parts.split_last() else {
            // `/` itself: its tree is the root tree.
            return match node.content {
                Content::Subtree(id) => Ok((id, node.status_tree)),
                _ => sink.store_tree(Tree::default()),
            };
        };
        let _ = last;
        insert(&mut top, &parts, PathBuf::from("/"), node);
    }
    store_level(sink, top)
}

/// Puts `node` at `parts` below `level`, adding the directories on the way; nothing when a root
/// already covers the place.
fn insert(level: &mut BTreeMap<Vec<u8>, Slot>, parts: &[Vec<u8>], mut path: PathBuf, node: Node) {
    let Some((first, rest)) = parts.split_first() else { return };
    if rest.is_empty() {
        level.insert(first.clone(), Slot::Root(node));
        return;
    }
    path.push(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(first));
    let slot = level
        .entry(first.clone())
        .or_insert_with(|| Slot::Between(between(&path, first), BTreeMap::new()));
    if let Slot::Between(_, children) = slot {
        insert(children, rest, path, node);
    }
}

fn store_level(sink: &BlobSink<'_>, level: BTreeMap<Vec<u8>, Slot>) -> Result<(Id, Option<Id>)> {
    let mut tree = Tree::default();
    for (_, slot) in level {
        tree.nodes.push(match slot {
            Slot::Root(node) => node,
            Slot::Between(mut node, children) => {
                let (id, status) = store_level(sink, children)?;
                (node.content, node.status_tree) = (Content::Subtree(id), status);
                node
            }
        });
    }
    sink.store_tree(tree)
}
