//! Carrying out a prune in the order of docs/store-format.md §12: new packs, new index files,
//! the deletion plan (written, then completed with the live writers), and the deletions last —
//! at once when no other session is writing, else by a later prune once those sessions are done.

use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

use super::mark::reachable_ids;
use super::pending::{index_files_safe_to_delete, packs_current_snapshots_need};
use super::plan::{Fate, Plan};
use super::repack::repack;
use crate::error::{Error, Result};
use crate::format::{DeletionPlan, IndexFile, IndexedPack};
use crate::id::Id;
use crate::pack::{pack_path, read_trailer};
use crate::repo::{now_ns, Repository, WriterMarker, STALE_AFTER};

/// Blob entries per new index file before the next is started: a batch is held decoded, then
/// encoded, then sealed (about 48 bytes per blob each time), which is most of what a prune of a
/// small repository holds at its peak; restic's index files hold at most 50,000.
const BLOBS_PER_INDEX_FILE: usize = 32_768;

/// What carrying out a plan did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneOutcome {
    /// Packs written by repacking.
    pub packs_written: u64,
    /// The deletions were made in this run.
    pub deleted: bool,
    /// Sessions still writing, which the deletion waits for (when not `deleted`).
    pub waiting_for: usize,
}

/// Carries out `plan` as a writing session of `host`.
pub fn run(repo: &Repository, plan: &Plan, host: &str) -> Result<PruneOutcome> {
    if plan.is_empty() {
        return Ok(PruneOutcome { deleted: true, ..PruneOutcome::default() });
    }
    let marker = WriterMarker::create(repo, host)?;
    let new_packs = repack(repo, plan)?;
    let packs_written = new_packs.len() as u64;
    write_index(repo, plan, new_packs)?;

    let mut doomed = plan.packs_of(Fate::Delete);
    doomed.extend(plan.packs_of(Fate::Repack));
    doomed.extend(&plan.unindexed);
    let mut deletion = DeletionPlan {
        created: now_ns(),
        packs: doomed,
        index_files: plan.index_files.iter().chain(&plan.superseded).copied().collect(),
        snapshots: plan.snapshots.clone(),
        writers: Vec::new(),
        complete: false,
    };
    // Written before the markers are listed, so that every session either appears in the list
    // or started late enough to read the plan and stay clear of its packs.
    let first = repo.write_deletion_plan(&deletion)?;
    deletion.writers = repo.live_writers(Some(&marker.name()))?;
    deletion.complete = true;
    let name = repo.write_deletion_plan(&deletion)?;
    repo.delete_object(&first)?;
    let waiting_for = deletion.writers.len();
    let deleted = waiting_for == 0;
    if deleted {
        // This plan was made and marked by this process moments ago, from snapshots it read
        // itself and an index it checked (`authentic`): only snapshots written since need
        // marking, as for any plan, so that prune's normal cost stays one marking. A plan read
        // from storage is another matter (`execute_pending`).
        let keep = packs_new_snapshots_need_since(repo, &deletion)?;
        let index_files = deletion.index_files.clone();
        execute_plan(repo, &name, &deletion, &keep, &index_files)?;
    }
    marker.remove()?;
    Ok(PruneOutcome { packs_written, deleted, waiting_for })
}

/// New index files: the kept packs, read again from the old index files a batch at a time, and
/// the new packs; the last one names every old index file as superseded, so that until it is
/// written the old ones stay in force. The packs the plan deletes stay indexed, in files of their
/// own written before that last one, until the plan is carried out: a session still writing may
/// have stored blobs there, or deduplicated against them, for a snapshot the marking did not see,
/// and that snapshot must restore at once; carrying out the plan keeps the packs it needs and
/// drops the others from these files (`drop_deleted_from_newer_index_files`).
fn write_index(repo: &Repository, plan: &Plan, new_packs: Vec<IndexedPack>) -> Result<()> {
    let mut emitted = HashSet::new();
    let mut kept = Batch::default();
    let mut doomed = Batch::default();
    // Packs kept because they hold the only authentic copy of a blob: listed as their trailers
    // say, not as an index file that may have misplaced the blob.
    for (pack, size) in &plan.safety.reindex {
        let parsed = read_trailer(repo.backend(), repo.sealer(), &pack_path(pack), *size)?;
        emitted.insert(*pack);
        let blobs = without_unauthentic(plan, pack, parsed.kind, parsed.entries);
        kept.push(repo, IndexedPack { id: *pack, kind: parsed.kind, blobs })?;
    }
    for file_id in &plan.index_files {
        // Pack by pack: an old index file is never held decoded whole beside the batches.
        let plain = repo.read_index_checked(file_id)?;
        let mut failed = None;
        IndexFile::decode_each(&plain, |mut pack| {
            if failed.is_some() {
                return;
            }
            if !plan.safety.unauthentic.is_empty() {
                pack.blobs = without_unauthentic(plan, &pack.id, pack.kind, pack.blobs);
            }
            let batch = match plan.fates.get(&pack.id) {
                Some(Fate::Keep) => &mut kept,
                Some(Fate::Delete | Fate::Repack) => &mut doomed,
                // An earlier plan's, indexed until that plan is executed.
                None if plan.planned.contains(&pack.id) => &mut doomed,
                None => return,
            };
            if emitted.insert(pack.id) {
                failed = batch.push(repo, pack).err();
            }
        })
        .map_err(|e| Error::decode(format!("index/{file_id}"), e))?;
        if let Some(err) = failed {
            return Err(err);
        }
    }
    doomed.flush(repo)?;
    let mut packs = kept.packs;
    packs.extend(new_packs);
    let supersedes = plan.index_files.iter().chain(&plan.superseded).copied().collect();
    repo.write_index_file(&IndexFile { supersedes, packs })?;
    Ok(())
}

/// `blobs` of `pack` less the entries whose blob did not open where they say it is.
fn without_unauthentic(
    plan: &Plan,
    pack: &Id,
    kind: crate::blob::BlobKind,
    mut blobs: Vec<crate::format::BlobEntry>,
) -> Vec<crate::format::BlobEntry> {
    blobs.retain(|b| !plan.safety.unauthentic.contains(&(*pack, b.id, kind)));
    blobs
}

/// Packs gathered for index files, written BLOBS_PER_INDEX_FILE blobs at a time.
#[derive(Default)]
struct Batch {
    packs: Vec<IndexedPack>,
    blobs: usize,
}

impl Batch {
    fn push(&mut self, repo: &Repository, pack: IndexedPack) -> Result<()> {
        self.blobs += pack.blobs.len();
        self.packs.push(pack);
        if self.blobs >= BLOBS_PER_INDEX_FILE {
            self.flush(repo)?;
        }
        Ok(())
    }

    fn flush(&mut self, repo: &Repository) -> Result<()> {
        if !self.packs.is_empty() {
            let packs = std::mem::take(&mut self.packs);
            repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs })?;
        }
        self.blobs = 0;
        Ok(())
    }
}

/// What `execute_pending` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingOutcome {
    /// Plans carried out.
    pub executed: u64,
    /// Plans still waiting for writers.
    pub waiting: u64,
    /// Incomplete plans of prunes that stopped half-way, removed.
    pub abandoned: u64,
    /// Plans that do not read: named, left alone.
    pub unreadable: Vec<String>,
    /// What checking the plans found: packs and index files a plan named that were kept (a
    /// sign of tampering or a bug), plans left alone because what the snapshots need could not
    /// be known.
    pub warnings: Vec<String>,
}

/// Carries out the deletion plans of earlier prunes whose writers have all finished, and
/// removes incomplete plans left by prunes that stopped before completing them.
pub fn execute_pending(repo: &Repository) -> Result<PendingOutcome> {
    let mut outcome = PendingOutcome::default();
    let listing = repo.backend().list("deletions").map_err(|e| Error::io("deletions", e))?;
    let nobody_writes = repo.live_writers(None)?.is_empty();
    for object in listing {
        let plan = match repo.read_deletion_plan(&object.name) {
            Ok(plan) => plan,
            Err(err) => {
                outcome.unreadable.push(err.to_string());
                continue;
            }
        };
        if !plan.complete {
            let age = object
                .modified
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .unwrap_or_default();
            // A prune completes its plan within moments of writing it; with no session at work
            // (that prune included) or after an hour, it stopped half-way. Its packs, no longer
            // indexed, become garbage for this prune.
            if nobody_writes || age > STALE_AFTER {
                repo.delete_object(&object.name)?;
                outcome.abandoned += 1;
            }
            continue;
        }
        if repo.any_live(&plan.writers)? {
            outcome.waiting += 1;
            continue;
        }
        // Anyone holding the key may have written it: what it deletes is checked against
        // every current snapshot, not only those written since its marking.
        let needed = match packs_current_snapshots_need(repo, &object.name, &plan) {
            Ok(needed) => needed,
            Err(err) => {
                outcome.warnings.push(format!(
                    "deletion plan {}: left alone, since what the snapshots need cannot be                      known: {err}",
                    object.name
                ));
                continue;
            }
        };
        outcome.warnings.extend(needed.warnings);
        let deleted = deleted_packs(&plan, &needed.keep);
        let index_files = index_files_safe_to_delete(repo, &plan, &deleted, &mut outcome.warnings)?;
        execute_plan(repo, &object.name, &plan, &needed.keep, &index_files)?;
        outcome.executed += 1;
    }
    Ok(outcome)
}

/// The packs of `plan` that a snapshot written since its marking needs (indexed again).
fn packs_new_snapshots_need_since(repo: &Repository, plan: &DeletionPlan) -> Result<HashSet<Id>> {
    let marked: HashSet<Id> = plan.snapshots.iter().copied().collect();
    let new: Vec<Id> =
        repo.list_snapshot_ids()?.into_iter().filter(|id| !marked.contains(id)).collect();
    if new.is_empty() {
        return Ok(HashSet::new());
    }
    packs_new_snapshots_need(repo, plan, &new)
}

/// The packs of `plan` less those in `keep`.
fn deleted_packs(plan: &DeletionPlan, keep: &HashSet<Id>) -> HashSet<Id> {
    plan.packs.iter().filter(|p| !keep.contains(*p)).copied().collect()
}

/// Deletes what `plan` (stored as `name`) names but the packs in `keep` (indexed again
/// already) and the index files not in `index_files`, then the plan itself.
fn execute_plan(
    repo: &Repository,
    name: &str,
    plan: &DeletionPlan,
    keep: &HashSet<Id>,
    index_files: &[Id],
) -> Result<()> {
    let deleted = deleted_packs(plan, keep);
    // Out of the index before they go: stopped in between, the plan is carried out again.
    drop_deleted_from_newer_index_files(repo, index_files, &deleted)?;
    // Batched, one kind after the other and the plan last, as §12 orders them.
    let packs: Vec<String> = deleted.iter().map(pack_path).collect();
    repo.delete_objects(&packs)?;
    let index_files: Vec<String> = index_files.iter().map(|f| format!("index/{f}")).collect();
    repo.delete_objects(&index_files)?;
    repo.delete_object(name)
}

/// Index files written while the plan waited may list its packs (a backup adopting a pack that
/// looked abandoned, or indexing one it had deduplicated against): each that lists a deleted
/// pack is replaced by a copy without it, so that no index entry outlives its pack.
fn drop_deleted_from_newer_index_files(
    repo: &Repository,
    going: &[Id],
    deleted: &HashSet<Id>,
) -> Result<()> {
    if deleted.is_empty() {
        return Ok(());
    }
    let planned: HashSet<&Id> = going.iter().collect();
    for id in repo.list_index_files()? {
        if planned.contains(&id) {
            continue;
        }
        // One that does not read lists nothing a reader would use.
        let Ok(file) = repo.read_index_file(&id) else { continue };
        if !file.packs.iter().any(|p| deleted.contains(&p.id)) {
            continue;
        }
        let packs: Vec<IndexedPack> =
            file.packs.into_iter().filter(|p| !deleted.contains(&p.id)).collect();
        if packs.is_empty() && file.supersedes.is_empty() {
            // Nothing left to list (the file of a prune's deleted packs): it just goes.
            repo.delete_object(&format!("index/{id}"))?;
            continue;
        }
        let mut supersedes = file.supersedes;
        supersedes.push(id);
        repo.write_index_file(&IndexFile { supersedes, packs })?;
        repo.delete_object(&format!("index/{id}"))?;
    }
    Ok(())
}

/// The packs of `plan` holding blobs of the snapshots `new`, written while the plan waited;
/// they are indexed again (the plan's index files, which may have listed them, go).
fn packs_new_snapshots_need(
    repo: &Repository,
    plan: &DeletionPlan,
    new: &[Id],
) -> Result<HashSet<Id>> {
    let snapshots: Vec<_> =
        new.iter().filter_map(|id| repo.load_snapshot(id).ok().map(|s| (*id, s))).collect();
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let sizes: HashMap<&str, u64> = listing.iter().map(|o| (o.name.as_str(), o.size)).collect();
    // The index as it stands lacks the plan's packs; their trailers put them back, so that the
    // new snapshots' trees read wherever they are.
    let mut index = repo.load_index()?.index;
    let mut trailers = Vec::new();
    for pack in &plan.packs {
        let name = pack_path(pack);
        let Some(&size) = sizes.get(name.as_str()) else { continue };
        let parsed = read_trailer(repo.backend(), repo.sealer(), &name, size)?;
        index.add_pack(*pack, parsed.kind, &parsed.entries);
        trailers.push(IndexedPack { id: *pack, kind: parsed.kind, blobs: parsed.entries });
    }
    let needed = reachable_ids(repo, &index, &snapshots);
    trailers.retain(|pack| pack.blobs.iter().any(|b| needed.contains(&(b.id, pack.kind))));
    let keep = trailers.iter().map(|p| p.id).collect();
    if !trailers.is_empty() {
        repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs: trailers })?;
    }
    Ok(keep)
}
