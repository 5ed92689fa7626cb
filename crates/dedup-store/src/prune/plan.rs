//! Planning a prune: mark what the snapshots reach, then decide each pack's fate from the share
//! of its bytes that nothing reaches. Reads every tree once and every index file once; memory is
//! the index (36 bytes per blob), a bit per blob and a few words per pack.

use std::collections::{HashMap, HashSet};

use super::mark::{mark, Marks};
use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::index::Index;
use crate::pack::pack_path;
use crate::repo::Repository;

/// What a prune may do.
#[derive(Debug, Clone)]
pub struct PruneOptions {
    /// The share (0 to 1) of the bytes kept that unreachable blobs left in kept packs may make
    /// up; beyond it, the emptiest packs are repacked first (restic's `--max-unused`).
    pub max_unused: f64,
    /// At most this many bytes are copied into new packs (`None`: no limit).
    pub max_repack_bytes: Option<u64>,
}

impl Default for PruneOptions {
    fn default() -> Self {
        PruneOptions { max_unused: 0.05, max_repack_bytes: None }
    }
}

/// What becomes of a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Stays as it is.
    Keep,
    /// Its reachable blobs are copied into new packs, then it is deleted.
    Repack,
    /// Nothing in it is reachable: deleted.
    Delete,
}

/// The figures of a plan, for the user to read before anything happens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneStats {
    /// Snapshots marked.
    pub snapshots: u64,
    /// Blobs indexed, and those reachable.
    pub blobs: u64,
    /// Reachable blobs.
    pub blobs_used: u64,
    /// Indexed packs present.
    pub packs: u64,
    /// Packs kept as they are.
    pub packs_keep: u64,
    /// Packs repacked.
    pub packs_repack: u64,
    /// Packs deleted because nothing in them is reachable.
    pub packs_delete: u64,
    /// Packs no index lists (left by interrupted sessions), deleted.
    pub packs_unindexed: u64,
    /// Bytes of every pack present.
    pub bytes: u64,
    /// Bytes of reachable blobs copied into new packs.
    pub bytes_repack: u64,
    /// Bytes the repository shrinks by.
    pub bytes_freed: u64,
    /// Index files replaced by new ones.
    pub index_files: u64,
}

/// A prune worked out and not yet carried out.
pub struct Plan {
    /// Its figures.
    pub stats: PruneStats,
    pub(super) index: Index,
    pub(super) marks: Marks,
    pub(super) snapshots: Vec<Id>,
    /// Index files in use, whose kept packs the new index files list again.
    pub(super) index_files: Vec<Id>,
    /// Index files another one supersedes (left by an interrupted prune).
    pub(super) superseded: Vec<Id>,
    pub(super) fates: HashMap<Id, Fate>,
    /// Sizes of the packs to repack, as listed: where each one's trailer is.
    pub(super) repack_sizes: HashMap<Id, u64>,
    pub(super) unindexed: Vec<Id>,
    /// Packs that earlier plans, still waiting, delete.
    pub(super) planned: HashSet<Id>,
    /// Problems that do not stop the prune (a status tree that does not read), for the user.
    pub warnings: Vec<String>,
    /// Packs holding a status tree that does not read: never repacked, since copying verifies
    /// every blob and would stop the prune on it.
    pub(super) pinned: HashSet<Id>,
    /// Packs kept, and index entries dropped, because a blob's other copy did not open.
    pub(super) safety: Safety,
}

impl Plan {
    /// Whether carrying it out would change nothing.
    pub fn is_empty(&self) -> bool {
        self.unindexed.is_empty()
            && self.superseded.is_empty()
            && self.fates.values().all(|f| *f == Fate::Keep)
            && self.safety.is_empty()
    }

    /// Whether blob `id` of `kind`, found in pack `pack`, is the reachable copy.
    pub(super) fn used_here(&self, id: &Id, kind: BlobKind, pack: &Id) -> bool {
        self.index
            .position_in_pack(id, kind, pack)
            .is_some_and(|(at, here)| here && self.marks.get(at))
    }

    /// Packs of `fate`, sorted.
    pub(super) fn packs_of(&self, fate: Fate) -> Vec<Id> {
        let mut packs: Vec<Id> =
            self.fates.iter().filter(|(_, f)| **f == fate).map(|(id, _)| *id).collect();
        packs.sort();
        packs
    }
}

/// Reachable blobs and bytes of one pack.
#[derive(Default)]
struct Usage {
    used_blobs: u64,
    used_bytes: u64,
    unused_bytes: u64,
}

/// Marks and decides the fate of every pack, before the guard against misplaced blobs
/// ([`super::plan`] runs both); returns the plan and the sizes of the packs present.
pub(super) fn draft(
    repo: &Repository,
    options: &PruneOptions,
    gone: &HashSet<Id>,
) -> Result<(Plan, HashMap<Id, u64>)> {
    let (mut snapshots, bad) = repo.snapshots()?;
    snapshots.retain(|(id, _)| !gone.contains(id));
    if let Some(err) = bad.first() {
        return Err(Error::Invalid(format!(
            "cannot prune while a snapshot does not read ({err}); run `dedup store check`"
        )));
    }
    // The packs of earlier plans still waiting stay indexed until those plans are executed; a
    // blob copied out of one (repacked) must count as used in its copy, not there, or this
    // prune could delete the copy the earlier plan counts on.
    let planned = repo.planned_deletions()?;
    let loaded = repo.load_index_preferring_others(&planned)?;
    if let Some(err) = loaded.problems.first() {
        return Err(Error::Invalid(format!(
            "cannot prune while an index file does not read ({err}); run `dedup store check`"
        )));
    }
    let mut index = loaded.index;
    index.settle();
    let mut marks = Marks::new(index.len());
    let unread = mark(repo, &index, &snapshots, &mut marks)?;
    let pinned = unread.iter().filter_map(|u| index.lookup(&u.id, BlobKind::Tree)).map(|l| l.pack);
    let pinned = pinned.collect();
    let warnings = unread.into_iter().map(|u| u.warning).collect();

    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let present: HashMap<Id, u64> = listing
        .iter()
        .filter_map(|o| {
            let id = o.name.rsplit('/').next().and_then(Id::from_hex)?;
            (o.name == pack_path(&id)).then_some((id, o.size))
        })
        .collect();
    if let Some((missing, _)) = index.packs().find(|(id, _)| !present.contains_key(id)) {
        return Err(Error::Missing {
            object: format!(
                "{} (the index lists it; run `dedup store check`, then `dedup store repair index`)",
                pack_path(missing)
            ),
        });
    }

    let mut plan = Plan {
        stats: PruneStats::default(),
        index,
        marks,
        snapshots: snapshots.iter().map(|(id, _)| *id).collect(),
        index_files: loaded.files,
        superseded: loaded.superseded,
        fates: HashMap::new(),
        repack_sizes: HashMap::new(),
        unindexed: Vec::new(),
        planned,
        warnings,
        pinned,
        safety: Safety::default(),
    };
    plan.safety.packs_listed_again = loaded.packs_listed_again;
    let usage = usage(repo, &plan)?;
    decide(&mut plan, &usage, &present, options);

    let mut unindexed: Vec<Id> = present
        .keys()
        .filter(|id| !plan.index.has_pack(id) && !plan.planned.contains(id))
        .copied()
        .collect();
    unindexed.sort();
    let stats = &mut plan.stats;
    stats.snapshots = snapshots.len() as u64;
    stats.blobs = plan.index.len() as u64;
    stats.blobs_used = plan.marks.count();
    stats.packs_unindexed = unindexed.len() as u64;
    stats.bytes = present.values().sum();
    stats.bytes_freed += unindexed.iter().map(|id| present[id]).sum::<u64>();
    stats.index_files = (plan.index_files.len() + plan.superseded.len()) as u64;
    plan.unindexed = unindexed;
    Ok((plan, present))
}

/// Reachable blobs and bytes per pack. Unless the index dropped copies of blobs stored twice,
/// one pass over its table in order gives them, with no lookup and no index file read again
/// (the sweep's lookups, in hash order, each missed the caches once the table outgrew them).
fn usage(repo: &Repository, plan: &Plan) -> Result<HashMap<Id, Usage>> {
    if plan.index.copies_dropped() > 0 {
        return usage_from_index_files(repo, plan);
    }
    let mut by_number: Vec<Usage> = Vec::new();
    by_number.resize_with(plan.index.pack_numbers_end(), Usage::default);
    for (at, pack, stored_len) in plan.index.table() {
        let entry = &mut by_number[pack as usize];
        if plan.marks.get(at) {
            entry.used_blobs += 1;
            entry.used_bytes += u64::from(stored_len);
        } else {
            entry.unused_bytes += u64::from(stored_len);
        }
    }
    let mut usage = HashMap::new();
    for (id, _) in plan.index.packs() {
        let number = plan.index.pack_number(id).expect("an indexed pack has a number");
        usage.insert(*id, std::mem::take(&mut by_number[number as usize]));
    }
    Ok(usage)
}

/// Reachable blobs and bytes per pack, from the index files (a pack listed twice counted once):
/// a copy of a blob is unused in every pack but the one the index resolves it to.
fn usage_from_index_files(repo: &Repository, plan: &Plan) -> Result<HashMap<Id, Usage>> {
    let mut usage: HashMap<Id, Usage> = HashMap::new();
    let mut counted = HashSet::new();
    for file_id in &plan.index_files {
        let file = repo.read_index_file(file_id)?;
        for pack in file.packs {
            if !counted.insert(pack.id) {
                continue;
            }
            let entry = usage.entry(pack.id).or_default();
            for blob in &pack.blobs {
                if plan.used_here(&blob.id, pack.kind, &pack.id) {
                    entry.used_blobs += 1;
                    entry.used_bytes += u64::from(blob.stored_len);
                } else {
                    entry.unused_bytes += u64::from(blob.stored_len);
                }
            }
        }
    }
    Ok(usage)
}

/// Each indexed pack's fate: deleted when nothing in it is reachable; repacked, the emptiest
/// first, while the unreachable bytes left in kept packs exceed the limit (within the budget).
fn decide(
    plan: &mut Plan,
    usage: &HashMap<Id, Usage>,
    present: &HashMap<Id, u64>,
    options: &PruneOptions,
) {
    let mut candidates = Vec::new();
    let stats = &mut plan.stats;
    let (mut used_total, mut unused_total) = (0u64, 0u64);
    for (id, use_) in usage {
        let size = present[id];
        stats.packs += 1;
        if use_.used_blobs == 0 {
            plan.fates.insert(*id, Fate::Delete);
            stats.packs_delete += 1;
            stats.bytes_freed += size;
            continue;
        }
        plan.fates.insert(*id, Fate::Keep);
        used_total += use_.used_bytes;
        unused_total += use_.unused_bytes;
        if use_.unused_bytes > 0 && !plan.pinned.contains(id) {
            // Shares of the blobs' bytes: a pack's header and trailer are no waste.
            let share = use_.unused_bytes as f64 / (use_.used_bytes + use_.unused_bytes) as f64;
            candidates.push((share, *id, use_.used_bytes, use_.unused_bytes, size));
        }
    }
    // As restic's --max-unused: the unused bytes left in kept packs may make up this share of
    // what stays; the emptiest packs are repacked first until they do (within the budget).
    let p = options.max_unused.clamp(0.0, 1.0);
    let allowed = if p >= 1.0 { f64::INFINITY } else { p / (1.0 - p) * used_total as f64 };
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut budget = options.max_repack_bytes.unwrap_or(u64::MAX);
    for (_, id, used, unused, size) in candidates {
        if unused_total as f64 <= allowed {
            break;
        }
        if used <= budget {
            budget -= used;
            unused_total -= unused;
            plan.fates.insert(id, Fate::Repack);
            plan.repack_sizes.insert(id, size);
            stats.packs_repack += 1;
            stats.bytes_repack += used;
            stats.bytes_freed += size - used;
        }
    }
    stats.packs_keep = stats.packs - stats.packs_delete - stats.packs_repack;
}

/// What the guard decided, for carrying the plan out.
#[derive(Debug, Default)]
pub(crate) struct Safety {
    /// Packs kept because they hold the only authentic copy of a reachable blob, with their
    /// sizes (where their trailers are): indexed again from those trailers.
    pub(crate) reindex: HashMap<Id, u64>,
    /// Index entries (pack, blob, kind) whose blob did not open: left out of the new index.
    pub(crate) unauthentic: HashSet<(Id, Id, BlobKind)>,
    /// Listings of a pack beyond its first in the index files in force (the index keeps only
    /// the first: another may name a blob it lacks).
    pub(crate) packs_listed_again: u64,
}

impl Safety {
    /// Whether the guard changed nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.reindex.is_empty() && self.unauthentic.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_plan() -> Plan {
        Plan {
            stats: PruneStats::default(),
            index: Index::new(),
            marks: Marks::new(0),
            snapshots: Vec::new(),
            index_files: Vec::new(),
            superseded: Vec::new(),
            fates: HashMap::new(),
            repack_sizes: HashMap::new(),
            unindexed: Vec::new(),
            planned: HashSet::new(),
            warnings: Vec::new(),
            pinned: HashSet::new(),
            safety: Safety::default(),
        }
    }

    #[test]
    fn the_emptiest_packs_are_repacked_until_the_unused_share_is_within_the_limit() {
        // (used, unused) bytes of blobs per pack; pack 0 holds nothing reachable.
        let packs = [(0, 100), (10, 90), (50, 50), (90, 10), (100, 0)];
        let mut usage = HashMap::new();
        let mut present = HashMap::new();
        for (i, (used, unused)) in packs.into_iter().enumerate() {
            let id = Id([i as u8; 32]);
            let used_blobs = u64::from(used > 0);
            usage.insert(id, Usage { used_blobs, used_bytes: used, unused_bytes: unused });
            present.insert(id, used + unused + 100);
        }
        let fate = |plan: &Plan, i: u8| plan.fates[&Id([i; 32])];
        // 250 bytes stay used; at 20 %, 62 unused bytes may stay: repacking the emptiest pack
        // leaves 60, so the others stay.
        let mut plan = empty_plan();
        decide(
            &mut plan,
            &usage,
            &present,
            &PruneOptions { max_unused: 0.2, max_repack_bytes: None },
        );
        assert_eq!(fate(&plan, 0), Fate::Delete);
        assert_eq!([fate(&plan, 1), fate(&plan, 2)], [Fate::Repack, Fate::Keep]);
        assert_eq!([fate(&plan, 3), fate(&plan, 4)], [Fate::Keep, Fate::Keep]);
        assert_eq!(plan.stats.bytes_repack, 10);
        // Everything unused goes at 0 %; a budget of 20 bytes copies only what fits in it.
        let mut plan = empty_plan();
        decide(
            &mut plan,
            &usage,
            &present,
            &PruneOptions { max_unused: 0.0, max_repack_bytes: None },
        );
        assert_eq!(plan.stats.packs_repack, 3);
        let mut plan = empty_plan();
        decide(
            &mut plan,
            &usage,
            &present,
            &PruneOptions { max_unused: 0.0, max_repack_bytes: Some(20) },
        );
        assert_eq!(
            [fate(&plan, 1), fate(&plan, 2), fate(&plan, 3)],
            [Fate::Repack, Fate::Keep, Fate::Keep]
        );
        // A pack holding a status tree that does not read is never repacked (copying would
        // stop on it): at 0 % the others still are.
        let mut plan = empty_plan();
        plan.pinned.insert(Id([1; 32]));
        decide(
            &mut plan,
            &usage,
            &present,
            &PruneOptions { max_unused: 0.0, max_repack_bytes: None },
        );
        assert_eq!(
            [fate(&plan, 1), fate(&plan, 2), fate(&plan, 3)],
            [Fate::Keep, Fate::Repack, Fate::Repack]
        );
    }
}
