//! Navigating a snapshot's trees: the node at a path, and a depth-first walk that hands each
//! entry with its path to a callback (for `ls` and `restore`), over the repository's index.

use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind, Tree};
use crate::id::Id;
use crate::index::Index;
use crate::repo::Repository;

/// A directory node standing for a snapshot's root tree.
pub fn root_node(tree: Id) -> Node {
    Node { kind: NodeKind::Dir, mode: 0o755, content: Content::Subtree(tree), ..Node::default() }
}

/// The node at `path` (components separated by `/`, leading `/` optional) below the root tree.
pub fn resolve(repo: &Repository, root: Id, path: &[u8]) -> Result<Node> {
    resolve_with_status(repo, root, None, path)
}

/// [`resolve`], with the root's status tree (snapshots of version 2), so that the node found
/// has its atime and its status tree (what a restore sets).
pub fn resolve_with_status(
    repo: &Repository,
    root: Id,
    status: Option<Id>,
    path: &[u8],
) -> Result<Node> {
    let index = repo.index()?;
    let mut node = root_node(root);
    node.status_tree = status;
    // Named as `ls` prints paths, from the snapshot's root, whether or not the `/` was given.
    let below_root = &path[path.iter().position(|&b| b != b'/').unwrap_or(path.len())..];
    let shown = || format!("/{}", String::from_utf8_lossy(below_root));
    for part in path.split(|&b| b == b'/').filter(|p| !p.is_empty() && *p != b".") {
        let Content::Subtree(id) = node.content else {
            return Err(Error::Invalid(format!("{}: not a directory in the snapshot", shown())));
        };
        let tree = repo.read_tree_with_status(&index, &id, node.status_tree.as_ref())?;
        node = tree
            .find(part)
            .cloned()
            .ok_or_else(|| Error::Invalid(format!("{}: no such path in the snapshot", shown())))?;
    }
    Ok(node)
}

/// Visits every entry below the tree `id`, parents before children, with its path below that
/// tree (components joined by `/`). A subtree that cannot be read is an error of the walk.
pub fn walk(
    repo: &Repository,
    id: Id,
    visit: &mut dyn FnMut(&[u8], &Node) -> Result<()>,
) -> Result<()> {
    let index = repo.index()?;
    let mut path = Vec::new();
    walk_inner(repo, &index, id, &mut path, visit)
}

fn walk_inner(
    repo: &Repository,
    index: &Index,
    id: Id,
    path: &mut Vec<u8>,
    visit: &mut dyn FnMut(&[u8], &Node) -> Result<()>,
) -> Result<()> {
    let tree: Tree = repo.read_tree(index, &id)?;
    for node in &tree.nodes {
        let len = path.len();
        if len > 0 {
            path.push(b'/');
        }
        path.extend_from_slice(&node.name);
        visit(path, node)?;
        if let Content::Subtree(sub) = node.content {
            walk_inner(repo, index, sub, path, visit)?;
        }
        path.truncate(len);
    }
    Ok(())
}
