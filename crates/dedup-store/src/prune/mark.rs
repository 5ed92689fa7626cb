//! Marking: every tree (status trees included) and data blob reachable from a set of snapshots, kept as one bit per
//! indexed blob (the index's table position), so that marking costs an eighth of a byte per blob
//! on top of the index and is linear in the trees read.

use std::collections::HashSet;

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, NodeKind, Snapshot, StatusTree, Tree};
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

/// A status tree that did not read while marking: kept, not descended into.
pub struct Unread {
    /// The status tree's id.
    pub id: Id,
    /// Why, naming the snapshot, for the user.
    pub warning: String,
}

/// Marks every blob reachable from `snapshots` in `index` (settled), returning the status trees
/// that did not read. A blob
/// the index lacks, or a tree that does not read, is an error naming the snapshot: pruning on a
/// damaged repository could delete what a repair would still find. A status tree that does not
/// read is only a warning: it stays marked (it is referenced) but is not descended into, since
/// losing a status tree, or what only it names, costs the next backup re-reads and nothing else.
pub fn mark(
    repo: &Repository,
    index: &Index,
    snapshots: &[(Id, Snapshot)],
    marks: &mut Marks,
) -> Result<Vec<Unread>> {
    let mut unread = Vec::new();
    for (snapshot_id, snapshot) in snapshots {
        let missing = |kind: BlobKind, id: &Id| Error::Missing {
            object: format!(
                "{} blob {id} of snapshot {} (not in the index; run `dedup store check`)",
                kind.name(),
                snapshot_id.short(8)
            ),
        };
        let missing_status = |id: &Id| Error::Missing {
            object: format!(
                "status tree {id} of snapshot {} (not in the index; run `dedup store check`, \
                 then `dedup store repair snapshots`)",
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
            // Entry by entry, never the whole tree decoded: a large directory's entries take
            // megabytes decoded, and marking needs only their ids.
            let plain = repo.read_blob(index, &tree_id, BlobKind::Tree)?;
            let mut lacking = None;
            Tree::decode_each(&plain, |node, _| match node.content {
                Content::Subtree(id) => pending.push(id),
                Content::Chunks(chunks) if node.kind == NodeKind::File => {
                    for chunk in &chunks {
                        match index.position(chunk, BlobKind::Data) {
                            Some(at) => _ = marks.set(at),
                            None => _ = lacking.get_or_insert(*chunk),
                        }
                    }
                }
                _ => {}
            })
            .map_err(|e| Error::decode(format!("tree blob {tree_id}"), e))?;
            if let Some(chunk) = lacking {
                return Err(missing(BlobKind::Data, &chunk));
            }
        }
        // Status trees are referenced blobs too: without them the next backup reads every file.
        let mut pending: Vec<Id> = snapshot.status_tree.into_iter().collect();
        while let Some(status_id) = pending.pop() {
            let at = index
                .position(&status_id, BlobKind::Tree)
                .ok_or_else(|| missing_status(&status_id))?;
            if !marks.set(at) {
                continue;
            }
            match status_subtrees(repo, index, &status_id) {
                Ok(subtrees) => pending.extend(subtrees),
                Err(err) => unread.push(Unread {
                    id: status_id,
                    warning: format!(
                        "status tree {} of snapshot {}: {err}; kept, but what only it names is \
                         pruned (the next backup of that directory re-reads its files)",
                        status_id.short(8),
                        snapshot_id.short(8)
                    ),
                }),
            }
        }
    }
    Ok(unread)
}

/// The status subtrees that status tree `id` names, read entry by entry: never the whole
/// list of a large directory's statuses decoded. An error, naming it, when any of it does not
/// read: then none of its subtrees is returned, as when it does not open.
fn status_subtrees(repo: &Repository, index: &Index, id: &Id) -> Result<Vec<Id>> {
    let plain = repo.read_blob(index, id, BlobKind::Tree)?;
    let mut subtrees = Vec::new();
    StatusTree::decode_each(&plain, |entry, _| subtrees.extend(entry.subtree))
        .map_err(|e| Error::decode(format!("status tree {id}"), e))?;
    Ok(subtrees)
}

/// Every blob reachable from `snapshots`, with its kind, read through `index`, for the few
/// snapshots that appeared while a plan waited (a set is fine at that size). Trees that do not
/// read are left out: their snapshot is damaged already, and what it still names is kept by its
/// other trees. Trees, status trees and data are walked with their own sets: a data chunk whose
/// bytes happen to be those of a tree has the tree's id, and must not stop the walk into it.
pub fn reachable_ids(
    repo: &Repository,
    index: &Index,
    snapshots: &[(Id, Snapshot)],
) -> HashSet<(Id, BlobKind)> {
    let mut trees = HashSet::new();
    let mut status_trees = HashSet::new();
    let mut reached = HashSet::new();
    for (_, snapshot) in snapshots {
        let mut pending = vec![snapshot.tree];
        while let Some(tree_id) = pending.pop() {
            if !trees.insert(tree_id) {
                continue;
            }
            reached.insert((tree_id, BlobKind::Tree));
            let Ok(plain) = repo.read_blob(index, &tree_id, BlobKind::Tree) else { continue };
            // Entry by entry, as marking reads trees. What a tree that stops decoding half-way
            // named before that point stays reached: keeping more is the safe side.
            let _ = Tree::decode_each(&plain, |node, _| match node.content {
                Content::Subtree(id) => pending.push(id),
                Content::Chunks(chunks) => {
                    reached.extend(chunks.into_iter().map(|c| (c, BlobKind::Data)))
                }
                _ => {}
            });
        }
        let mut pending: Vec<Id> = snapshot.status_tree.into_iter().collect();
        while let Some(status_id) = pending.pop() {
            if !status_trees.insert(status_id) {
                continue;
            }
            reached.insert((status_id, BlobKind::Tree));
            let Ok(subtrees) = status_subtrees(repo, index, &status_id) else { continue };
            pending.extend(subtrees);
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::Arc;

    use super::*;
    use crate::backend::LocalBackend;
    use crate::backup::{backup, BackupOptions, BackupProgress};
    use crate::format::KdfParams;
    use crate::repo::InitOptions;

    #[test]
    fn a_data_chunk_with_a_trees_bytes_does_not_stop_the_walk_into_that_tree() {
        let dir = tempfile::tempdir().unwrap();
        let options = InitOptions {
            kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
            ..InitOptions::default()
        };
        let repo = Repository::init(Arc::new(LocalBackend::new(dir.path().join("repo"))), options)
            .unwrap();
        let run = |path: std::path::PathBuf| {
            let options =
                BackupOptions { paths: vec![path], host: "h".into(), ..BackupOptions::default() };
            let done = backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
            (done.id.unwrap(), done.snapshot)
        };
        let a = dir.path().join("a");
        fs::create_dir_all(a.join("inner")).unwrap();
        fs::write(a.join("inner/f"), b"only here").unwrap();
        let first = run(a);
        // The tree holding `f`, and f's chunk.
        let index = repo.load_index().unwrap().index;
        let (mut pending, mut found) = (vec![first.1.tree], None);
        while let Some(id) = pending.pop() {
            for node in repo.read_tree(&index, &id).unwrap().nodes {
                match node.content {
                    Content::Subtree(sub) => pending.push(sub),
                    Content::Chunks(chunks) if node.name == b"f" => found = Some((id, chunks[0])),
                    _ => {}
                }
            }
        }
        let (tree, chunk) = found.expect("the tree holding f");
        // A file whose bytes are that tree's: its one chunk has the tree's id.
        let b = dir.path().join("b");
        fs::create_dir(&b).unwrap();
        fs::write(b.join("x"), repo.read_blob(&index, &tree, BlobKind::Tree).unwrap()).unwrap();
        let second = run(b);
        let index = repo.load_index().unwrap().index;
        assert!(index.contains(&tree, BlobKind::Data), "the chunk does not have the tree's id");
        // The second snapshot walked first: its chunk is seen before the tree.
        let reached = reachable_ids(&repo, &index, &[second, first]);
        for wanted in [(tree, BlobKind::Data), (tree, BlobKind::Tree), (chunk, BlobKind::Data)] {
            assert!(reached.contains(&wanted), "{wanted:?} not reached");
        }
    }

    #[test]
    fn marks_count_each_blob_once() {
        let mut marks = Marks::new(130);
        assert!(marks.set(0) && marks.set(129) && marks.set(64));
        assert!(!marks.set(64));
        assert_eq!(marks.count(), 3);
        assert!(marks.get(129) && !marks.get(128));
    }
}
