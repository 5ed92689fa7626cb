//! Checking a deletion plan read from storage before carrying it out (docs/store-format.md §12):
//! anyone holding the repository key may write one (a compromised client with append-only
//! credentials included), so its word on what the snapshots need is not taken. Every current
//! snapshot is marked again; each pack of the plan that holds a reachable blob with no
//! authentic copy outside the plan is kept and indexed again from its trailer; an index file of
//! the plan goes only if everything it lists is of a deleted pack or listed by a surviving file.

use std::collections::{HashMap, HashSet};

use super::mark::{mark, Marks};
use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{DeletionPlan, IndexFile, IndexedPack};
use crate::id::Id;
use crate::index::Index;
use crate::pack::{pack_path, read_trailer};
use crate::repo::Repository;

/// The packs of a plan that must stay, and why, for the user.
#[derive(Debug, Default)]
pub(super) struct Needed {
    /// Packs kept (indexed again).
    pub(super) keep: HashSet<Id>,
    /// Packs kept although the snapshots the plan says it marked need them, a blob whose other
    /// copy did not open, a pack whose trailer does not read: named for the user.
    pub(super) warnings: Vec<String>,
}

/// The packs of `plan` (stored as `name`) that the current snapshots need. Fails, deleting
/// nothing, when a snapshot or a tree does not read: what it needs cannot be known.
pub(super) fn packs_current_snapshots_need(
    repo: &Repository,
    name: &str,
    plan: &DeletionPlan,
) -> Result<Needed> {
    let (snapshots, bad) = repo.snapshots()?;
    if let Some(err) = bad.first() {
        return Err(Error::Invalid(format!("a snapshot does not read ({err})")));
    }
    let planned: HashSet<Id> = plan.packs.iter().copied().collect();
    // Copies outside the plan load first, so that the index resolves a blob to one of them
    // where there is one; the plan's packs are added from their own trailers.
    let mut index = repo.load_index_without(&planned)?.index;
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let sizes: HashMap<&str, u64> = listing.iter().map(|o| (o.name.as_str(), o.size)).collect();
    let mut needed = Needed::default();
    let mut trailers = Vec::new();
    for pack in &plan.packs {
        let name = pack_path(pack);
        let Some(&size) = sizes.get(name.as_str()) else { continue };
        match read_trailer(repo.backend(), repo.sealer(), &name, size) {
            Ok(parsed) => {
                index.add_pack(*pack, parsed.kind, &parsed.entries);
                trailers.push(IndexedPack { id: *pack, kind: parsed.kind, blobs: parsed.entries });
            }
            Err(err) => {
                needed.keep.insert(*pack);
                needed.warnings.push(format!(
                    "deletion plan {name}: {} is kept: its trailer does not read ({err})",
                    pack_path(pack)
                ));
            }
        }
    }
    index.settle();
    let marked: HashSet<Id> = plan.snapshots.iter().copied().collect();
    let (old, new): (Vec<_>, Vec<_>) =
        snapshots.into_iter().partition(|(id, _)| marked.contains(id));
    let mut marks = Marks::new(index.len());
    let mut opened = HashMap::new();
    // Snapshots written while the plan waited first: the packs they need are kept as a matter
    // of course. Then those the plan says it marked: a pack they need is a plan that wanted to
    // delete live data.
    mark(repo, &index, &new, &mut marks)?;
    let by_new = needing(repo, &index, &marks, &trailers, &planned, &mut opened, &mut needed);
    mark(repo, &index, &old, &mut marks)?;
    let by_all = needing(repo, &index, &marks, &trailers, &planned, &mut opened, &mut needed);
    for pack in by_all.difference(&by_new) {
        needed.warnings.push(format!(
            "deletion plan {name} would delete {}, which a snapshot it counts as marked needs: \
             kept (a sign of tampering or a bug)",
            pack_path(pack)
        ));
    }
    needed.keep.extend(by_all);
    trailers.retain(|pack| needed.keep.contains(&pack.id));
    if !trailers.is_empty() {
        repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs: trailers })?;
    }
    Ok(needed)
}

/// The packs of `trailers` holding a blob marked in `marks` with no copy outside the plan that
/// opens. A copy outside is read and authenticated once (`opened`); one that does not open is
/// named in `needed.warnings`.
fn needing(
    repo: &Repository,
    index: &Index,
    marks: &Marks,
    trailers: &[IndexedPack],
    planned: &HashSet<Id>,
    opened: &mut HashMap<(Id, BlobKind), bool>,
    needed: &mut Needed,
) -> HashSet<Id> {
    let mut packs = HashSet::new();
    for pack in trailers {
        for blob in &pack.blobs {
            let Some((at, here)) = index.position_in_pack(&blob.id, pack.kind, &pack.id) else {
                continue;
            };
            if !marks.get(at) {
                continue;
            }
            if here {
                packs.insert(pack.id);
                continue;
            }
            let Some(relied_on) = index.lookup(&blob.id, pack.kind) else { continue };
            if planned.contains(&relied_on.pack) {
                // Another pack of the plan holds it, and is kept for it.
                continue;
            }
            let key = (blob.id, pack.kind);
            let opens = *opened.entry(key).or_insert_with(|| {
                let result = repo.read_blob_at(&relied_on, pack.kind);
                if let Err(err) = &result {
                    needed.warnings.push(format!(
                        "{} blob {}: the copy the index names in {} does not open ({err}); {}, \
                         which holds it too, is kept",
                        pack.kind.name(),
                        blob.id,
                        pack_path(&relied_on.pack),
                        pack_path(&pack.id)
                    ));
                }
                result.is_ok()
            });
            if !opens {
                packs.insert(pack.id);
            }
        }
    }
    packs
}

/// The index files of `plan` that may go once `deleted` are: those whose every entry is of a
/// deleted pack or listed by an index file that stays. The others are named in `warnings`.
pub(super) fn index_files_safe_to_delete(
    repo: &Repository,
    plan: &DeletionPlan,
    deleted: &HashSet<Id>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Id>> {
    let planned: HashSet<Id> = plan.index_files.iter().copied().collect();
    let mut safe = Vec::new();
    let mut unlisted: HashMap<Id, HashSet<(Id, Id, BlobKind)>> = HashMap::new();
    for file_id in &plan.index_files {
        // One that does not read lists nothing a reader would use.
        let Ok(file) = repo.read_index_file(file_id) else {
            safe.push(*file_id);
            continue;
        };
        let entries: HashSet<_> = file
            .packs
            .iter()
            .filter(|p| !deleted.contains(&p.id))
            .flat_map(|p| p.blobs.iter().map(|b| (p.id, b.id, p.kind)))
            .collect();
        if entries.is_empty() {
            safe.push(*file_id);
        } else {
            unlisted.insert(*file_id, entries);
        }
    }
    if unlisted.is_empty() {
        return Ok(safe);
    }
    for id in repo.list_index_files()? {
        if planned.contains(&id) {
            continue;
        }
        let Ok(file) = repo.read_index_file(&id) else { continue };
        for pack in &file.packs {
            for blob in &pack.blobs {
                let entry = (pack.id, blob.id, pack.kind);
                for entries in unlisted.values_mut() {
                    entries.remove(&entry);
                }
            }
        }
    }
    for (file_id, entries) in unlisted {
        if entries.is_empty() {
            safe.push(file_id);
        } else {
            warnings.push(format!(
                "index/{file_id}: kept, though a deletion plan names it: {} of its entries are \
                 of packs that stay and no other index file lists them",
                entries.len()
            ));
        }
    }
    Ok(safe)
}
