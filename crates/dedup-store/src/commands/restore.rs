//! `restore`: what a snapshot and a path in it name, for [`crate::restore::restore`] to write
//! out and [`crate::restore::verify`] to read back.

use crate::error::Result;
use crate::format::Node;
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};
use crate::tree_walk;

/// The snapshot `spec` (its id) and its node at `path` (the root when empty), with the atimes
/// and status that a restore sets.
pub fn restore_node(
    repo: &Repository,
    spec: &str,
    filter: &SnapshotFilter,
    path: &[u8],
) -> Result<(Id, Node)> {
    let (id, snapshot) = repo.find_snapshot(spec, filter)?;
    let node = tree_walk::resolve_with_status(repo, snapshot.tree, snapshot.status_tree, path)?;
    Ok((id, node))
}
