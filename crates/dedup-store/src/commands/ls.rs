//! `ls`: the entries of a snapshot at and below a path.

use crate::error::Result;
use crate::format::{Content, Node};
use crate::repo::{Repository, SnapshotFilter};
use crate::tree_walk;

/// Visits the entry at `path` of the snapshot `spec` (unless `path` is the root) and every
/// entry below it, parents before children, each with its path from the snapshot's root
/// without a leading `/`.
pub fn ls(
    repo: &Repository,
    spec: &str,
    filter: &SnapshotFilter,
    path: &[u8],
    visit: &mut dyn FnMut(&[u8], &Node) -> Result<()>,
) -> Result<()> {
    let (_, snapshot) = repo.find_snapshot(spec, filter)?;
    let node = tree_walk::resolve(repo, snapshot.tree, path)?;
    let base = trim_slashes(path).to_vec();
    if !base.is_empty() {
        visit(&base, &node)?;
    }
    if let Content::Subtree(id) = node.content {
        let mut full = base.clone();
        tree_walk::walk(repo, id, &mut |rel, child| {
            full.truncate(base.len());
            if !full.is_empty() {
                full.push(b'/');
            }
            full.extend_from_slice(rel);
            visit(&full, child)
        })?;
    }
    Ok(())
}

/// A path in a snapshot without its leading and trailing `/`s.
pub fn trim_slashes(mut bytes: &[u8]) -> &[u8] {
    while let [b'/', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b'/'] = bytes {
        bytes = rest;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::trim_slashes;

    #[test]
    fn slashes_at_both_ends_go_and_inner_ones_stay() {
        assert_eq!(trim_slashes(b"//a/b//"), b"a/b");
        assert_eq!(trim_slashes(b"/"), b"");
        assert_eq!(trim_slashes(b""), b"");
    }
}
