//! `repair`: an index rebuilt from the packs' own trailers (damaged packs salvaged: what still
//! opens copied into new packs), and snapshots rewritten without what is lost. Both only add
//! files before they remove any, so an interrupted repair leaves the repository as it was or
//! repaired, never worse; run again, it finishes. A damaged pack is deleted only when its blob
//! list is known whole and every blob of it that authenticates is stored in another pack and
//! indexed; otherwise it stays where it is.

use std::collections::HashMap;

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, IndexFile, IndexedPack, NodeKind, StatusTree, Tree, TreeStatus};
use crate::id::Id;
use crate::index::Index;
use crate::pack::{pack_path, parse_pack, read_trailer, ParsedPack};
use crate::repo::{BlobSink, Repository, WriterMarker};

mod locate;
mod salvage;

use locate::locate;
use salvage::salvage;

/// Packs listed per new index file.
const PACKS_PER_INDEX_FILE: usize = 256;

/// Packs in a row that could not be read at all after which `repair index` stops: the storage
/// itself is failing (a server gone away answers each read only after its retries, ~11 s on S3,
/// so a run would crawl through every pack and end failing anyway), and a repair has nothing
/// to gain from an index rebuilt without reading.
const UNREAD_IN_A_ROW: usize = 3;

/// What `repair index` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexRepair {
    /// Packs whose trailers were read and indexed.
    pub packs_indexed: u64,
    /// Packs that could not be read at all, or whose blobs cannot be located, each with the
    /// reason (left in place, not indexed).
    pub packs_damaged: Vec<String>,
    /// Damaged packs whose blobs that authenticate were copied into new packs.
    pub packs_salvaged: Vec<SalvagedPack>,
    /// Packs that could not be read (the storage failed), each with why: what the old index
    /// files said they hold is kept in the new index, so a passing failure drops nothing.
    pub packs_unread: Vec<String>,
    /// Old index files replaced.
    pub index_files_replaced: u64,
}

/// A damaged pack whose blobs that still authenticate `repair index` stored anew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalvagedPack {
    /// The pack.
    pub name: String,
    /// What is wrong with it.
    pub damage: String,
    /// Blobs copied into new packs.
    pub blobs_saved: u64,
    /// Blobs that authenticate and were already stored in a sound pack.
    pub blobs_elsewhere: u64,
    /// Blobs that did not authenticate: lost, unless a later backup stores them again.
    pub blobs_lost: u64,
    /// Whether the pack was deleted (after the copies were indexed): only when its blob list
    /// is known whole. Otherwise it stays, not indexed, for a closer look.
    pub deleted: bool,
}

/// What `repair index` found a pack to be.
enum PackState {
    Sound(ParsedPack),
    /// Damaged: why.
    Damaged(String),
    /// Not readable at all (an I/O error): left alone.
    Unreadable(String),
}

/// A pack's state: by its trailer alone, or (`read_data`) by its whole content and name.
fn inspect(repo: &Repository, name: &str, id: &Id, size: u64, read_data: bool) -> PackState {
    if !read_data {
        return match read_trailer(repo.backend(), repo.sealer(), name, size) {
            Ok(parsed) => PackState::Sound(parsed),
            Err(Error::Damaged { reason, .. }) => PackState::Damaged(reason),
            Err(err) => PackState::Unreadable(err.to_string()),
        };
    }
    let bytes = match repo.backend().get(name) {
        Ok(bytes) => bytes,
        Err(err) => return PackState::Unreadable(Error::io(name, err).to_string()),
    };
    if Id::of_file(&bytes) != *id {
        return PackState::Damaged("content does not match its name (hash)".into());
    }
    match parse_pack(repo.sealer(), &bytes) {
        Ok(parsed) => PackState::Sound(parsed),
        Err(err) => PackState::Damaged(err.to_string()),
    }
}

/// Rebuilds the index from the trailers of every pack present (less those a deletion plan
/// names): new index files first, the last superseding every old one, then the old ones go.
/// With `read_data` every pack is read whole and verified against its name. A damaged pack is
/// salvaged once every sound pack is indexed: its blobs are located ([`locate`]), each that
/// authenticates and no sound pack holds is copied into a new pack, and the pack is deleted
/// after the copies are indexed, if its blob list is known whole; else it stays, not indexed.
pub fn repair_index(repo: &Repository, host: &str, read_data: bool) -> Result<IndexRepair> {
    repo.require_deletion_rights()?;
    let marker = WriterMarker::create(repo, host)?;
    let planned = repo.planned_deletions()?;
    let old = repo.list_index_files()?;
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    // What the sound packs hold: a damaged pack's blob found there is stored already.
    let mut sound = Index::new();
    let mut damaged = Vec::new();
    let mut outcome = IndexRepair::default();
    let mut batch = Vec::new();
    // What the old index files said each pack held (read once, only when a pack needs it).
    let mut old_entries: Option<HashMap<Id, IndexedPack>> = None;
    let mut unread_in_a_row = 0;
    for object in listing {
        let Some(id) = object.name.rsplit('/').next().and_then(Id::from_hex) else { continue };
        if object.name != pack_path(&id) || planned.contains(&id) {
            continue;
        }
        let state = inspect(repo, &object.name, &id, object.size, read_data);
        if let PackState::Unreadable(why) = &state {
            unread_in_a_row += 1;
            if unread_in_a_row >= UNREAD_IN_A_ROW {
                return Err(Error::Invalid(format!(
                    "{UNREAD_IN_A_ROW} packs in a row could not be read, the last: {why}; the \
                     storage is failing, so the repair stopped and kept the old index files \
                     (run it again once the storage answers)"
                )));
            }
        } else {
            unread_in_a_row = 0;
        }
        match state {
            PackState::Sound(parsed) => {
                sound.add_pack(id, parsed.kind, &parsed.entries);
                batch.push(IndexedPack { id, kind: parsed.kind, blobs: parsed.entries });
                outcome.packs_indexed += 1;
            }
            PackState::Unreadable(why) => {
                let known = old_entries.get_or_insert_with(|| packs_in_index_files(repo, &old));
                match known.remove(&id) {
                    Some(pack) => {
                        batch.push(pack);
                        outcome.packs_unread.push(why);
                    }
                    None => outcome.packs_damaged.push(why),
                }
            }
            PackState::Damaged(why) => damaged.push((object.name, id, why)),
        }
        if batch.len() >= PACKS_PER_INDEX_FILE {
            let packs = std::mem::take(&mut batch);
            repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs })?;
        }
    }
    let sink = BlobSink::new(repo, sound, false);
    let mut doomed = Vec::new();
    for (name, id, why) in damaged {
        let mut bytes = match repo.backend().get(&name) {
            Ok(bytes) => bytes,
            Err(err) => {
                outcome.packs_damaged.push(Error::io(&name, err).to_string());
                continue;
            }
        };
        // What the old index files said the pack held, when its trailer does not open.
        let indexed = match parse_pack(repo.sealer(), &bytes) {
            Ok(_) => None,
            Err(_) => old_entries
                .get_or_insert_with(|| packs_in_index_files(repo, &old))
                .remove(&id)
                .map(|pack| (pack.kind, pack.blobs)),
        };
        let located = locate(repo.sealer(), &mut bytes, indexed);
        let Some(located) = located else {
            outcome.packs_damaged.push(format!(
                "{name}: damaged: {why}; its blobs cannot be located (its trailer does not open \
                 and no index file lists it)"
            ));
            continue;
        };
        let kind = located.kind;
        let found = salvage(repo.sealer(), &repo.keys().id, kind, &located.entries, &bytes);
        let mut copied = 0;
        for (blob, plain) in &found.saved {
            copied += u64::from(sink.store_with_id(*blob, kind, plain)?);
        }
        if located.whole {
            doomed.push(name.clone());
        }
        outcome.packs_salvaged.push(SalvagedPack {
            name,
            damage: located.header_damage.unwrap_or(why),
            blobs_saved: copied,
            blobs_elsewhere: found.saved.len() as u64 - copied,
            blobs_lost: found.lost.len() as u64,
            deleted: located.whole,
        });
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
    /// Snapshot files that are damaged (nothing in them can be recovered), each with why;
    /// removed with `forget`.
    pub unreadable: Vec<(Id, String)>,
    /// Snapshot files that could not be read for another reason (the storage failed, or a newer
    /// program wrote them), each with why: left alone, even with `forget`.
    pub left_alone: Vec<(Id, String)>,
}

/// Writes, for every snapshot that refers to a blob the index lacks (or a tree that does not
/// read), a copy without the files and directories that are lost, marked incomplete and tagged
/// `repaired`; its status trees are rewritten in step. A snapshot whose only damage is a lost
/// status tree gets a copy (complete, tagged `repaired`) whose directories below that one have
/// no status: they restore with atime = mtime and their files are read by the next backup.
/// With `forget`, the damaged originals are removed once their copies are written, and so are
/// snapshot files that do not read at all.
/// Snapshots whose blobs are all there again (a later backup stored them anew) are left alone.
pub fn repair_snapshots(repo: &Repository, host: &str, forget: bool) -> Result<SnapshotsRepair> {
    crate::deep_stack::on_deep_stack(|| repair_snapshots_here(repo, host, forget))
}

/// [`repair_snapshots`] on the stack at hand (its walk of the trees recurses).
fn repair_snapshots_here(repo: &Repository, host: &str, forget: bool) -> Result<SnapshotsRepair> {
    if forget {
        repo.require_deletion_rights()?;
    }
    let mut snapshots = Vec::new();
    let mut outcome = SnapshotsRepair::default();
    for id in repo.list_snapshot_ids()? {
        match repo.load_snapshot(&id) {
            Ok(snapshot) => snapshots.push((id, snapshot)),
            // Only a snapshot that read and proved damaged is beyond recovery.
            Err(err @ Error::Damaged { .. }) => outcome.unreadable.push((id, err.to_string())),
            Err(err) => outcome.left_alone.push((id, err.to_string())),
        }
    }
    snapshots.sort_by(|a, b| a.1.time.cmp(&b.1.time).then(a.0.cmp(&b.0)));
    let marker = WriterMarker::create(repo, host)?;
    let planned = repo.planned_deletions()?;
    let mut index = repo.load_index_without(&planned)?.index;
    index.settle();
    let sink = BlobSink::new(repo, Index::new(), false);
    let mut memo: Memo = HashMap::new();
    for (id, snapshot) in snapshots {
        let (mut dropped, mut status_lost) = (Vec::new(), Vec::new());
        let mut rewriter = Rewriter {
            repo,
            index: &index,
            sink: &sink,
            memo: &mut memo,
            dropped: &mut dropped,
            status_lost: &mut status_lost,
        };
        let root = rewriter.tree(snapshot.tree, snapshot.status_tree, b"")?;
        if root == Some((snapshot.tree, snapshot.status_tree)) {
            continue;
        }
        let mut copy = snapshot.clone();
        (copy.tree, copy.status_tree) = match root {
            Some(root) => root,
            None => {
                let empty = Tree { status: tree_status(repo), ..Tree::default() };
                (sink.store(BlobKind::Tree, &empty.encode())?, None)
            }
        };
        if copy.tree != snapshot.tree {
            if dropped.is_empty() {
                dropped.push(
                    "the damage reported for an earlier snapshot (a shared directory)".into(),
                );
            }
            copy.incomplete = true;
        }
        if copy.status_tree != snapshot.status_tree {
            if status_lost.is_empty() {
                status_lost.push("status trees shared with an earlier snapshot".into());
            }
            // Not files left out: the restore sets atime = mtime there, and the next backup
            // reads those directories' files again.
            dropped.extend(status_lost.into_iter().map(|why| {
                format!("{why} (its atimes, and its files' proof of being unchanged, are lost)")
            }));
        }
        sink.flush()?;
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
    if repo.config().status_trees() {
        TreeStatus::Apart
    } else {
        TreeStatus::Inline
    }
}

fn delete_snapshot(repo: &Repository, id: &Id) -> Result<()> {
    repo.backend()
        .delete(&format!("snapshots/{id}"))
        .map_err(|e| Error::io(format!("snapshots/{id}"), e))
}

/// Trees already rewritten, by tree and status tree: their new ids, or `None` when lost.
type Memo = HashMap<(Id, Option<Id>), Option<(Id, Option<Id>)>>;

/// Rewrites trees without what is lost, and their status trees in step (format 3): an entry
/// left out of a tree leaves its status out too; a status tree that is lost or does not fit
/// leaves its directory without one (and its parents' status trees are rewritten to say so).
struct Rewriter<'a, 'r> {
    repo: &'a Repository,
    index: &'a Index,
    sink: &'a BlobSink<'r>,
    memo: &'a mut Memo,
    dropped: &'a mut Vec<String>,
    status_lost: &'a mut Vec<String>,
}

impl Rewriter<'_, '_> {
    /// The ids of tree `id` and its status tree `status` (at `path`) without what is lost;
    /// themselves when nothing is; `None` when the tree itself does not read.
    fn tree(
        &mut self,
        id: Id,
        status: Option<Id>,
        path: &[u8],
    ) -> Result<Option<(Id, Option<Id>)>> {
        if let Some(done) = self.memo.get(&(id, status)) {
            // A shared subtree found damaged under another path is reported once.
            return Ok(*done);
        }
        let shown = || format!("/{}", String::from_utf8_lossy(path));
        let mut tree = match self.repo.read_tree(self.index, &id) {
            Ok(tree) => tree,
            Err(err) => {
                self.dropped.push(format!("{}: {err}", shown()));
                self.memo.insert((id, status), None);
                return Ok(None);
            }
        };
        let joined = match status.filter(|_| !tree.status_known()) {
            None => false,
            Some(status_id) => match self.repo.read_status_tree(self.index, &status_id) {
                Ok(found) if found.apply(&mut tree) => true,
                Ok(_) => {
                    let why = format!("status tree {status_id} does not fit its tree");
                    self.status_lost.push(format!("{}: {why}", shown()));
                    false
                }
                Err(err) => {
                    self.status_lost.push(format!("{}: {err}", shown()));
                    false
                }
            },
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
                Content::Subtree(sub) => match self.tree(*sub, node.status_tree, &child)? {
                    Some((new, new_status)) => {
                        changed |= new != *sub || new_status != node.status_tree;
                        (node.content, node.status_tree) = (Content::Subtree(new), new_status);
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
        let kept_status = if joined { status } else { None };
        let new = if changed {
            // A rewritten tree keeps its version; its status tree follows its entries.
            let tree = Tree { nodes, status: tree.status };
            let main = self.sink.store(BlobKind::Tree, &tree.encode())?;
            let status = match joined {
                true => Some(self.sink.store(BlobKind::Tree, &StatusTree::of(&tree).encode())?),
                false => None,
            };
            (main, status)
        } else {
            (id, kept_status)
        };
        self.memo.insert((id, status), Some(new));
        Ok(Some(new))
    }
}

#[cfg(test)]
mod tests;
