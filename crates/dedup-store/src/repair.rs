//! `repair`: an index rebuilt from the packs' own trailers, and snapshots rewritten without what
//! is lost. Both only add files before they remove any, so an interrupted repair leaves the
//! repository as it was or repaired, never worse.

use std::collections::HashMap;

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, IndexFile, IndexedPack, NodeKind, Snapshot, Tree};
use crate::id::Id;
use crate::index::Index;
use crate::pack::{pack_path, read_trailer};
use crate::repo::{BlobSink, Repository, WriterMarker};

/// Packs listed per new index file.
const PACKS_PER_INDEX_FILE: usize = 256;

/// What `repair index` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexRepair {
    /// Packs whose trailers were read and indexed.
    pub packs_indexed: u64,
    /// Packs whose trailers do not read, each with the reason (left in place, not indexed).
    pub packs_damaged: Vec<String>,
    /// Old index files replaced.
    pub index_files_replaced: u64,
}

/// Rebuilds the index from the trailers of every pack present (less those a deletion plan
/// names): new index files first, the last superseding every old one, then the old ones go.
pub fn repair_index(repo: &Repository, host: &str) -> Result<IndexRepair> {
    let marker = WriterMarker::create(repo, host)?;
    let planned = repo.planned_deletions()?;
    let old = repo.list_index_files()?;
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let mut outcome = IndexRepair::default();
    let mut batch = Vec::new();
    for object in listing {
        let Some(id) = object.name.rsplit('/').next().and_then(Id::from_hex) else { continue };
        if object.name != pack_path(&id) || planned.contains(&id) {
            continue;
        }
        match read_trailer(repo.backend(), repo.sealer(), &object.name, object.size) {
            Ok(parsed) => {
                batch.push(IndexedPack { id, kind: parsed.kind, blobs: parsed.entries });
                outcome.packs_indexed += 1;
            }
            Err(err) => outcome.packs_damaged.push(err.to_string()),
        }
        if batch.len() >= PACKS_PER_INDEX_FILE {
            let packs = std::mem::take(&mut batch);
            repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs })?;
        }
    }
    repo.write_index_file(&IndexFile { supersedes: old.clone(), packs: batch })?;
    for id in &old {
        repo.backend()
            .delete(&format!("index/{id}"))
            .map_err(|e| Error::io(format!("index/{id}"), e))?;
    }
    outcome.index_files_replaced = old.len() as u64;
    marker.remove()?;
    Ok(outcome)
}

/// One snapshot that `repair snapshots` rewrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRepair {
    /// The damaged snapshot.
    pub old: Id,
    /// Its repaired copy.
    pub new: Id,
    /// Paths left out, each with why.
    pub dropped: Vec<String>,
}

/// Writes, for every snapshot that refers to a blob the index lacks (or a tree that does not
/// read), a copy without the files and directories that are lost, marked incomplete and tagged
/// `repaired`. With `forget`, the damaged originals are removed once their copies are written.
/// Snapshots whose blobs are all there again (a later backup stored them anew) are left alone.
pub fn repair_snapshots(
    repo: &Repository,
    host: &str,
    forget: bool,
) -> Result<Vec<SnapshotRepair>> {
    let (snapshots, _) = repo.snapshots()?;
    let marker = WriterMarker::create(repo, host)?;
    let planned = repo.planned_deletions()?;
    let mut index = repo.load_index_without(&planned)?.index;
    index.settle();
    let sink = BlobSink::new(repo, Index::new(), false);
    let mut repaired = Vec::new();
    let mut memo: HashMap<Id, Option<Id>> = HashMap::new();
    for (id, snapshot) in snapshots {
        let mut dropped = Vec::new();
        let mut rewriter =
            Rewriter { repo, index: &index, sink: &sink, memo: &mut memo, dropped: &mut dropped };
        let root = rewriter.tree(snapshot.tree, b"")?;
        if root == Some(snapshot.tree) {
            continue;
        }
        if dropped.is_empty() {
            dropped.push("the damage reported for an earlier snapshot (a shared directory)".into());
        }
        sink.flush()?;
        let root = match root {
            Some(root) => root,
            None => sink.store(BlobKind::Tree, &Tree::default().encode())?,
        };
        let mut copy = Snapshot { tree: root, incomplete: true, ..snapshot.clone() };
        copy.tags.push("repaired".into());
        let new = repo.save_snapshot(&copy)?;
        if forget {
            repo.backend()
                .delete(&format!("snapshots/{id}"))
                .map_err(|e| Error::io(format!("snapshots/{id}"), e))?;
        }
        repaired.push(SnapshotRepair { old: id, new, dropped });
    }
    sink.flush()?;
    marker.remove()?;
    Ok(repaired)
}

/// Rewrites trees without what is lost.
struct Rewriter<'a, 'r> {
    repo: &'a Repository,
    index: &'a Index,
    sink: &'a BlobSink<'r>,
    /// Trees already rewritten: their new id, or `None` when lost.
    memo: &'a mut HashMap<Id, Option<Id>>,
    dropped: &'a mut Vec<String>,
}

impl Rewriter<'_, '_> {
    /// The id of tree `id` (at `path`) without what is lost; itself when nothing is; `None`
    /// when the tree itself does not read.
    fn tree(&mut self, id: Id, path: &[u8]) -> Result<Option<Id>> {
        if let Some(done) = self.memo.get(&id) {
            // A shared subtree found damaged under another path is reported once.
            return Ok(*done);
        }
        let shown = || format!("/{}", String::from_utf8_lossy(path));
        let tree = match self.repo.read_tree(self.index, &id) {
            Ok(tree) => tree,
            Err(err) => {
                self.dropped.push(format!("{}: {err}", shown()));
                self.memo.insert(id, None);
                return Ok(None);
            }
        };
        let mut nodes = Vec::with_capacity(tree.nodes.len());
        let mut changed = false;
        for mut node in tree.nodes {
            let mut child = path.to_vec();
            if !child.is_empty() {
                child.push(b'/');
            }
            child.extend_from_slice(&node.name);
            match &node.content {
                Content::Subtree(sub) => match self.tree(*sub, &child)? {
                    Some(new) => {
                        changed |= new != *sub;
                        node.content = Content::Subtree(new);
                    }
                    None => {
                        changed = true;
                        continue;
                    }
                },
                Content::Chunks(chunks) if node.kind == NodeKind::File => {
                    if let Some(lost) =
                        chunks.iter().find(|c| !self.index.contains(c, BlobKind::Data))
                    {
                        self.dropped.push(format!(
                            "/{}: data blob {lost} is lost",
                            String::from_utf8_lossy(&child)
                        ));
                        changed = true;
                        continue;
                    }
                }
                _ => {}
            }
            nodes.push(node);
        }
        let new =
            if changed { self.sink.store(BlobKind::Tree, &Tree { nodes }.encode())? } else { id };
        self.memo.insert(id, Some(new));
        Ok(Some(new))
    }
}
