//! `repair`: an index rebuilt from the packs' own trailers (damaged packs salvaged: what still
//! opens copied into new packs), and snapshots rewritten without what is lost. Both only add
//! files before they remove any, so an interrupted repair leaves the repository as it was or
//! repaired, never worse; run again, it finishes.

use std::collections::{HashMap, HashSet};

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, IndexFile, IndexedPack, NodeKind, Tree, TreeStatus};
use crate::id::Id;
use crate::index::Index;
use crate::pack::{pack_path, parse_pack, read_trailer, ParsedPack};
use crate::repo::{BlobSink, Repository, WriterMarker};

mod salvage;

use salvage::salvage;

/// Packs listed per new index file.
const PACKS_PER_INDEX_FILE: usize = 256;

/// What `repair index` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexRepair {
    /// Packs whose trailers were read and indexed.
    pub packs_indexed: u64,
    /// Packs that could not be read at all, each with the reason (left in place, not indexed).
    pub packs_damaged: Vec<String>,
    /// Damaged packs whose readable blobs were copied into new packs before they were deleted.
    pub packs_salvaged: Vec<SalvagedPack>,
    /// Old index files replaced.
    pub index_files_replaced: u64,
}

/// A damaged pack that `repair index` replaced by the blobs of it that still open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalvagedPack {
    /// The pack, deleted once the new index no longer listed it.
    pub name: String,
    /// What is wrong with it.
    pub damage: String,
    /// Blobs copied into new packs.
    pub blobs_saved: u64,
    /// Blobs that did not open: lost, unless a later backup stores them again.
    pub blobs_lost: u64,
}

/// What `repair index` found a pack to be.
enum PackState {
    Sound(ParsedPack),
    /// Read whole, and damaged: its bytes and why.
    Damaged(Vec<u8>, String),
    /// Not readable at all (an I/O error): left alone.
    Unreadable(String),
}

/// A pack's state: by its trailer alone, or (`read_data`) by its whole content and name.
fn inspect(repo: &Repository, name: &str, id: &Id, size: u64, read_data: bool) -> PackState {
    let why = if read_data {
        None
    } else {
        match read_trailer(repo.backend(), repo.sealer(), name, size) {
            Ok(parsed) => return PackState::Sound(parsed),
            Err(Error::Damaged { reason, .. }) => Some(reason),
            Err(err) => return PackState::Unreadable(err.to_string()),
        }
    };
    let bytes = match repo.backend().get(name) {
        Ok(bytes) => bytes,
        Err(err) => return PackState::Unreadable(Error::io(name, err).to_string()),
    };
    if let Some(why) = why {
        return PackState::Damaged(bytes, why);
    }
    if Id::of_file(&bytes) != *id {
        return PackState::Damaged(bytes, "content does not match its name (hash)".into());
    }
    match parse_pack(repo.sealer(), &bytes) {
        Ok(parsed) => PackState::Sound(parsed),
        Err(err) => PackState::Damaged(bytes, err.to_string()),
    }
}

/// Rebuilds the index from the trailers of every pack present (less those a deletion plan
/// names): new index files first, the last superseding every old one, then the old ones go.
/// With `read_data` every pack is read whole and verified against its name. A damaged pack
/// (its trailer lost, or with `read_data` any damage) is salvaged: the blobs of it that still
/// open are copied into new packs, it is left out of the new index and deleted after it.
pub fn repair_index(repo: &Repository, host: &str, read_data: bool) -> Result<IndexRepair> {
    let marker = WriterMarker::create(repo, host)?;
    let planned = repo.planned_deletions()?;
    let old = repo.list_index_files()?;
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let sink = BlobSink::new(repo, Index::new(), false);
    let mut old_entries: Option<HashMap<Id, IndexedPack>> = None;
    let mut doomed = Vec::new();
    let mut outcome = IndexRepair::default();
    let mut batch = Vec::new();
    for object in listing {
        let Some(id) = object.name.rsplit('/').next().and_then(Id::from_hex) else { continue };
        if object.name != pack_path(&id) || planned.contains(&id) {
            continue;
        }
        match inspect(repo, &object.name, &id, object.size, read_data) {
            PackState::Sound(parsed) => {
                batch.push(IndexedPack { id, kind: parsed.kind, blobs: parsed.entries });
                outcome.packs_indexed += 1;
            }
            PackState::Unreadable(why) => outcome.packs_damaged.push(why),
            PackState::Damaged(bytes, damage) => {
                // Where the blobs are: the pack's own trailer if it still reads, else what the
                // old index files said (read once, only when a pack needs them).
                let known = match parse_pack(repo.sealer(), &bytes) {
                    Ok(parsed) => Some((parsed.kind, parsed.entries)),
                    Err(_) => old_entries
                        .get_or_insert_with(|| packs_in_index_files(repo, &old))
                        .remove(&id)
                        .map(|pack| (pack.kind, pack.blobs)),
                };
                let (kind, entries) = known.unwrap_or((BlobKind::Data, Vec::new()));
                let found = salvage(repo.sealer(), &repo.keys().id, kind, &entries, &bytes);
                for (blob, plain) in &found.saved {
                    sink.store_with_id(*blob, kind, plain)?;
                }
                outcome.packs_salvaged.push(SalvagedPack {
                    name: object.name.clone(),
                    damage,
                    blobs_saved: found.saved.len() as u64,
                    blobs_lost: found.lost.len() as u64,
                });
                doomed.push(object.name);
            }
        }
        if batch.len() >= PACKS_PER_INDEX_FILE {
            let packs = std::mem::take(&mut batch);
            repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs })?;
        }
    }
    // The copies and their index files are written before anything is deleted.
    sink.flush()?;
    repo.write_index_file(&IndexFile { supersedes: old.clone(), packs: batch })?;
    repo.delete_objects(&doomed)?;
    let old_files: Vec<String> = old.iter().map(|id| format!("index/{id}")).collect();
    repo.delete_objects(&old_files)?;
    outcome.index_files_replaced = old.len() as u64;
    marker.remove()?;
    Ok(outcome)
}

/// Every pack the readable index files among `files` list (a damaged one is skipped: repair is
/// what replaces it).
fn packs_in_index_files(repo: &Repository, files: &[Id]) -> HashMap<Id, IndexedPack> {
    files
        .iter()
        .filter_map(|id| repo.read_index_file(id).ok())
        .flat_map(|file| file.packs)
        .map(|pack| (pack.id, pack))
        .collect()
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

/// What `repair snapshots` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotsRepair {
    /// The snapshots rewritten.
    pub rewritten: Vec<SnapshotRepair>,
    /// Snapshot files that do not read (nothing in them can be recovered), each with why;
    /// removed with `forget`.
    pub unreadable: Vec<(Id, String)>,
}

/// Writes, for every snapshot that refers to a blob the index lacks (or a tree that does not
/// read), a copy without the files and directories that are lost, marked incomplete and tagged
/// `repaired`; its status trees are left out (they no longer match its trees), and so are those
/// of a snapshot whose only damage is a lost status tree (its copy is complete, tagged
/// `repaired`): a backup from such a copy reads every file again. With `forget`, the damaged originals are removed once their copies are written,
/// and so are snapshot files that do not read at all.
/// Snapshots whose blobs are all there again (a later backup stored them anew) are left alone.
pub fn repair_snapshots(repo: &Repository, host: &str, forget: bool) -> Result<SnapshotsRepair> {
    let mut snapshots = Vec::new();
    let mut outcome = SnapshotsRepair::default();
    for id in repo.list_snapshot_ids()? {
        match repo.load_snapshot(&id) {
            Ok(snapshot) => snapshots.push((id, snapshot)),
            Err(err) => outcome.unreadable.push((id, err.to_string())),
        }
    }
    snapshots.sort_by(|a, b| a.1.time.cmp(&b.1.time).then(a.0.cmp(&b.0)));
    let marker = WriterMarker::create(repo, host)?;
    let planned = repo.planned_deletions()?;
    let mut index = repo.load_index_without(&planned)?.index;
    index.settle();
    let sink = BlobSink::new(repo, Index::new(), false);
    let mut memo: HashMap<Id, Option<Id>> = HashMap::new();
    let mut sound_status = HashSet::new();
    for (id, snapshot) in snapshots {
        let mut dropped = Vec::new();
        let mut rewriter =
            Rewriter { repo, index: &index, sink: &sink, memo: &mut memo, dropped: &mut dropped };
        let root = rewriter.tree(snapshot.tree, b"")?;
        let status_lost = snapshot
            .status_tree
            .and_then(|status| status_problem(repo, &index, status, &mut sound_status));
        if root == Some(snapshot.tree) && status_lost.is_none() {
            continue;
        }
        let mut copy = snapshot.clone();
        copy.status_tree = None;
        if root != Some(snapshot.tree) {
            if dropped.is_empty() {
                dropped.push(
                    "the damage reported for an earlier snapshot (a shared directory)".into(),
                );
            }
            sink.flush()?;
            copy.tree = match root {
                Some(root) => root,
                None => {
                    let empty = Tree { status: tree_status(repo), ..Tree::default() };
                    sink.store(BlobKind::Tree, &empty.encode())?
                }
            };
            copy.incomplete = true;
        }
        if let Some(why) = status_lost {
            dropped.push(format!(
                "{why} (status trees left out: the next backup from this snapshot reads every \
                 file again)"
            ));
        }
        copy.tags.push("repaired".into());
        let new = repo.save_snapshot(&copy)?;
        if forget {
            delete_snapshot(repo, &id)?;
        }
        outcome.rewritten.push(SnapshotRepair { old: id, new, dropped });
    }
    sink.flush()?;
    if forget {
        for (id, _) in &outcome.unreadable {
            delete_snapshot(repo, id)?;
        }
    }
    marker.remove()?;
    Ok(outcome)
}

/// The layout of the trees a repair writes anew: what the repository's format writes.
fn tree_status(repo: &Repository) -> TreeStatus {
    if repo.config().status_trees {
        TreeStatus::Apart
    } else {
        TreeStatus::Inline
    }
}

/// Why a status tree below `root` (itself included) does not read, if one does not; those
/// found sound are remembered in `sound` across snapshots.
fn status_problem(
    repo: &Repository,
    index: &Index,
    root: Id,
    sound: &mut HashSet<Id>,
) -> Option<String> {
    let mut pending = vec![root];
    let mut read = Vec::new();
    while let Some(id) = pending.pop() {
        if sound.contains(&id) {
            continue;
        }
        match repo.read_status_tree(index, &id) {
            Ok(status) => pending.extend(status.entries.iter().filter_map(|e| e.subtree)),
            Err(err) => return Some(err.to_string()),
        }
        read.push(id);
    }
    // Only a whole walk proves the status trees below each of them sound.
    sound.extend(read);
    None
}

fn delete_snapshot(repo: &Repository, id: &Id) -> Result<()> {
    repo.backend()
        .delete(&format!("snapshots/{id}"))
        .map_err(|e| Error::io(format!("snapshots/{id}"), e))
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
        // A rewritten tree keeps its version (its status trees are left out of the copy).
        let new = if changed {
            self.sink.store(BlobKind::Tree, &Tree { nodes, status: tree.status }.encode())?
        } else {
            id
        };
        self.memo.insert(id, Some(new));
        Ok(Some(new))
    }
}
