//! `diff`: what changed between two snapshots, entry by entry, skipping subtrees whose ids are
//! equal (a tree's id is the hash of its content, so equal ids mean equal subtrees).

use std::cmp::Ordering;

use crate::error::Result;
use crate::format::{Content, Node, NodeKind, Tree};
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};

/// How an entry differs between the first snapshot and the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Only in the second.
    Added,
    /// Only in the first.
    Removed,
    /// In both, with different content or metadata (a directory differs only by its entries).
    Modified,
}

impl Change {
    /// The mark `diff` shows: `+`, `-` or `M`.
    pub fn mark(self) -> char {
        match self {
            Change::Added => '+',
            Change::Removed => '-',
            Change::Modified => 'M',
        }
    }
}

/// One entry that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffEntry {
    /// How it differs.
    pub change: Change,
    /// Its path from the snapshots' root, with a leading `/`.
    pub path: Vec<u8>,
}

/// Hands every entry that differs between the snapshots `first` and `second` to `emit`, in
/// path order, parents before children.
pub fn diff(
    repo: &Repository,
    first: &str,
    second: &str,
    filter: &SnapshotFilter,
    emit: &mut dyn FnMut(DiffEntry) -> Result<()>,
) -> Result<()> {
    let (_, a) = repo.find_snapshot(first, filter)?;
    let (_, b) = repo.find_snapshot(second, filter)?;
    diff_trees(repo, Some(a.tree), Some(b.tree), &mut Vec::new(), emit)
}

/// Whether two nodes of the same name hold the same thing.
fn same(a: &Node, b: &Node) -> bool {
    a.kind == b.kind
        && a.size == b.size
        && a.mode == b.mode
        && a.uid == b.uid
        && a.gid == b.gid
        && a.mtime == b.mtime
        && a.target == b.target
        && a.content == b.content
        && a.xattrs == b.xattrs
}

fn subtree(node: Option<&Node>) -> Option<Id> {
    match node.map(|n| &n.content) {
        Some(Content::Subtree(id)) => Some(*id),
        _ => None,
    }
}

fn diff_trees(
    repo: &Repository,
    a: Option<Id>,
    b: Option<Id>,
    path: &mut Vec<u8>,
    emit: &mut dyn FnMut(DiffEntry) -> Result<()>,
) -> Result<()> {
    if a == b {
        return Ok(());
    }
    let load = |id: Option<Id>| -> Result<Tree> {
        match id {
            Some(id) => repo.tree(&id),
            None => Ok(Tree::default()),
        }
    };
    let (ta, tb) = (load(a)?, load(b)?);
    let (mut i, mut j) = (0, 0);
    while i < ta.nodes.len() || j < tb.nodes.len() {
        let order = match (ta.nodes.get(i), tb.nodes.get(j)) {
            (Some(x), Some(y)) => x.name.cmp(&y.name),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        let (left, right) = match order {
            Ordering::Less => {
                i += 1;
                (ta.nodes.get(i - 1), None)
            }
            Ordering::Greater => {
                j += 1;
                (None, tb.nodes.get(j - 1))
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
                (ta.nodes.get(i - 1), tb.nodes.get(j - 1))
            }
        };
        let name = left.or(right).map(|n| n.name.clone()).unwrap_or_default();
        let len = path.len();
        path.push(b'/');
        path.extend_from_slice(&name);
        let change = match (left, right) {
            (Some(x), Some(y)) if same(x, y) => None,
            (Some(x), Some(y)) if x.kind == NodeKind::Dir && y.kind == NodeKind::Dir => None,
            (Some(_), Some(_)) => Some(Change::Modified),
            (Some(_), None) => Some(Change::Removed),
            (None, Some(_)) => Some(Change::Added),
            (None, None) => None,
        };
        if let Some(change) = change {
            emit(DiffEntry { change, path: path.clone() })?;
        }
        if subtree(left).is_some() || subtree(right).is_some() {
            diff_trees(repo, subtree(left), subtree(right), path, emit)?;
        }
        path.truncate(len);
    }
    Ok(())
}
