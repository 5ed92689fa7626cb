//! Prune's guard against index files that misplace a blob (docs/store-format.md §12): a key
//! holder without delete rights can write an index file claiming that a blob lives in a pack
//! where it is not, so that the pack really holding it looks unused. Before a pack holding a
//! reachable blob is deleted or repacked because the index resolves that blob to another pack,
//! the copy relied on is read and authenticated; if it does not open, the pack is kept and
//! indexed again from its own trailer, and the entry that lied is left out of the new index.
//! Only blobs that may have more than one location (a copy the index dropped, a pack listed
//! twice or by a superseded index file) are looked at, so that a prune of a repository no one
//! tampered with pays nothing for it.

use std::collections::{HashMap, HashSet};

use super::plan::{Fate, Plan};
use crate::blob::BlobKind;
use crate::error::Result;
use crate::id::Id;
use crate::pack::pack_path;
use crate::repo::Repository;

/// Keeps every pack the plan would delete or repack that holds a reachable blob whose resolved
/// copy elsewhere does not open, warning naming blob and packs. `present` are the packs'
/// sizes. Runs only when a blob may have more than one location: when the index dropped
/// copies, a pack is listed twice, or a superseded index file lists packs too.
pub(super) fn keep_the_only_authentic_copies(
    repo: &Repository,
    plan: &mut Plan,
    present: &HashMap<Id, u64>,
) -> Result<()> {
    let second_location = plan.index.copies_dropped() > 0
        || !plan.superseded.is_empty()
        || plan.safety.packs_listed_again > 0;
    if !second_location {
        return Ok(());
    }
    let unindexed: HashSet<Id> = plan.unindexed.iter().copied().collect();
    let mut opened: HashMap<(Id, BlobKind), bool> = HashMap::new();
    let files: Vec<Id> = plan.index_files.iter().chain(&plan.superseded).copied().collect();
    for file_id in files {
        // One that does not read lists nothing anyone relies on (plan() refused if it was in
        // force).
        let Ok(file) = repo.read_index_file(&file_id) else { continue };
        for pack in file.packs {
            let doomed = match plan.fates.get(&pack.id) {
                Some(Fate::Delete | Fate::Repack) => true,
                Some(Fate::Keep) => false,
                None => unindexed.contains(&pack.id),
            };
            if !doomed || !present.contains_key(&pack.id) {
                continue;
            }
            let mut keep = false;
            for blob in &pack.blobs {
                let Some((at, here)) = plan.index.position_in_pack(&blob.id, pack.kind, &pack.id)
                else {
                    continue;
                };
                if here || !plan.marks.get(at) {
                    continue;
                }
                let Some(relied_on) = plan.index.lookup(&blob.id, pack.kind) else { continue };
                let mut problem = None;
                let ok = *opened.entry((blob.id, pack.kind)).or_insert_with(|| {
                    repo.read_blob_at(&relied_on, pack.kind)
                        .map_err(|err| problem = Some(err.to_string()))
                        .is_ok()
                });
                if ok {
                    continue;
                }
                plan.safety.unauthentic.insert((relied_on.pack, blob.id, pack.kind));
                plan.warnings.push(format!(
                    "{} blob {}: the copy the index names in {} does not open{}; {}, which holds \
                     it too, is kept and indexed again (an index file that misplaces a blob is a \
                     sign of tampering or a bug)",
                    pack.kind.name(),
                    blob.id,
                    pack_path(&relied_on.pack),
                    problem.map(|p| format!(" ({p})")).unwrap_or_default(),
                    pack_path(&pack.id),
                ));
                keep = true;
                // Copying it out would stop on the blob that does not open.
                if plan.fates.get(&relied_on.pack) == Some(&Fate::Repack) {
                    keep_pack(plan, relied_on.pack, present);
                }
            }
            if keep {
                keep_pack(plan, pack.id, present);
            }
        }
    }
    Ok(())
}

/// Turns pack `id`'s fate to Keep, its figures with it, and has it indexed from its trailer.
fn keep_pack(plan: &mut Plan, id: Id, present: &HashMap<Id, u64>) {
    let size = present.get(&id).copied().unwrap_or_default();
    let fate = plan.fates.get(&id).copied();
    // A table scan, for the few packs kept this way that were to be repacked.
    let used = if fate == Some(Fate::Repack) { used_bytes(plan, &id) } else { 0 };
    let stats = &mut plan.stats;
    match fate {
        Some(Fate::Keep) => {}
        Some(Fate::Delete) => {
            stats.packs_delete -= 1;
            stats.packs_keep += 1;
            stats.bytes_freed = stats.bytes_freed.saturating_sub(size);
        }
        Some(Fate::Repack) => {
            plan.repack_sizes.remove(&id);
            stats.packs_repack -= 1;
            stats.packs_keep += 1;
            // What repacking it would have copied and freed: its used and unused bytes.
            stats.bytes_repack = stats.bytes_repack.saturating_sub(used);
            stats.bytes_freed = stats.bytes_freed.saturating_sub(size.saturating_sub(used));
        }
        None => {
            plan.unindexed.retain(|p| *p != id);
            stats.packs_unindexed = stats.packs_unindexed.saturating_sub(1);
            stats.bytes_freed = stats.bytes_freed.saturating_sub(size);
        }
    }
    plan.fates.insert(id, Fate::Keep);
    plan.safety.reindex.insert(id, size);
}

/// Bytes of the blobs the index resolves to pack `id` that are reachable.
fn used_bytes(plan: &Plan, id: &Id) -> u64 {
    let Some(number) = plan.index.pack_number(id) else { return 0 };
    plan.index
        .table()
        .filter(|(at, pack, _)| *pack == number && plan.marks.get(*at))
        .map(|(_, _, len)| u64::from(len))
        .sum()
}
