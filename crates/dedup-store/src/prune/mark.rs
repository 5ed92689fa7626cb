//! Marking: every tree (status trees included) and data blob reachable from a set of snapshots, kept as one bit per
//! indexed blob (the index's table position), so that marking costs an eighth of a byte per blob
//! on top of the index and is linear in the trees read.

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, NodeKind, Snapshot};
use crate::id::Id;
use crate::index::Index;
use crate::repo::Repository;

/// One bit per blob of a settled index.
pub struct Marks {
    bits: Vec<u64>,
    count: u64,
}

impl Marks {
    /// No blob marked, for an index of `len` blobs.
    pub fn new(len: usize) -> Marks {
        Marks { bits: vec![0; len.div_ceil(64)], count: 0 }
    }

    /// Marks position `at`; true when it was not marked before.
    fn set(&mut self, at: usize) -> bool {
        let (word, bit) = (at / 64, 1u64 << (at % 64));
        let fresh = self.bits[word] & bit == 0;
        self.bits[word] |= bit;
        self.count += u64::from(fresh);
        fresh
    }

    /// Whether position `at` is marked.
    pub fn get(&self, at: usize) -> bool {
        self.bits[at / 64] & (1u64 << (at % 64)) != 0
    }

    /// Blobs marked.
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// Marks every blob reachable from `snapshots` in `index` (settled). A blob the index lacks, or
/// a tree that does not read, is an error naming the snapshot: pruning on a damaged repository
/// could delete what a repair would still find.
pub fn mark(
    repo: &Repository,
    index: &Index,
    snapshots: &[(Id, Snapshot)],
    marks: &mut Marks,
) -> Result<()> {
    for (snapshot_id, snapshot) in snapshots {
        let missing = |kind: BlobKind, id: &Id| Error::Missing {
            object: format!(
                "{} blob {id} of snapshot {} (not in the index; run `dedup store check`)",
                kind.name(),
                snapshot_id.short(8)
            ),
        };
        let mut pending = vec![snapshot.tree];
        while let Some(tree_id) = pending.pop() {
            let at = index
                .position(&tree_id, BlobKind::Tree)
                .ok_or_else(|| missing(BlobKind::Tree, &tree_id))?;
            if !marks.set(at) {
                continue;
            }
            let tree = repo.read_tree(index, &tree_id)?;
            for node in tree.nodes {
                match node.content {
                    Content::Subtree(id) => pending.push(id),
                    Content::Chunks(chunks) if node.kind == NodeKind::File => {
                        for chunk in &chunks {
                            let at = index
                                .position(chunk, BlobKind::Data)
                                .ok_or_else(|| missing(BlobKind::Data, chunk))?;
                            marks.set(at);
                        }
                    }
                    _ => {}
                }
            }
        }
        // Status trees are referenced blobs too: without them the next backup reads every file.
        let mut pending: Vec<Id> = snapshot.status_tree.into_iter().collect();
        while let Some(status_id) = pending.pop() {
            let at = index
                .position(&status_id, BlobKind::Tree)
                .ok_or_else(|| missing(BlobKind::Tree, &status_id))?;
            if !marks.set(at) {
                continue;
            }
            let status = repo.read_status_tree(index, &status_id)?;
            pending.extend(status.entries.iter().filter_map(|e| e.subtree));
        }
    }
    Ok(())
}

/// Every blob id reachable from `snapshots`, read through `index`, for the few snapshots that
/// appeared while a plan waited (a set is fine at that size). Trees that do not read are left
/// out: their snapshot is damaged already, and what it still names is kept by its other trees.
pub fn reachable_ids(
    repo: &Repository,
    index: &Index,
    snapshots: &[(Id, Snapshot)],
) -> std::collections::HashSet<Id> {
    let mut seen = std::collections::HashSet::new();
    for (_, snapshot) in snapshots {
        let mut pending = vec![snapshot.tree];
        while let Some(tree_id) = pending.pop() {
            if !seen.insert(tree_id) {
                continue;
            }
            let Ok(tree) = repo.read_tree(index, &tree_id) else { continue };
            for node in tree.nodes {
                match node.content {
                    Content::Subtree(id) => pending.push(id),
                    Content::Chunks(chunks) => seen.extend(chunks),
                    _ => {}
                }
            }
        }
        let mut pending: Vec<Id> = snapshot.status_tree.into_iter().collect();
        while let Some(status_id) = pending.pop() {
            if !seen.insert(status_id) {
                continue;
            }
            let Ok(status) = repo.read_status_tree(index, &status_id) else { continue };
            pending.extend(status.entries.iter().filter_map(|e| e.subtree));
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_count_each_blob_once() {
        let mut marks = Marks::new(130);
        assert!(marks.set(0) && marks.set(129) && marks.set(64));
        assert!(!marks.set(64));
        assert_eq!(marks.count(), 3);
        assert!(marks.get(129) && !marks.get(128));
    }
}
