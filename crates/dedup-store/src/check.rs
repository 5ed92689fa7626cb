//! `check`: key files, index files and snapshots read and verify; every tree of every snapshot
//! reads, and every blob it names is indexed in a pack that exists; with `read_data`, every pack
//! is read whole, its name, trailer and every blob verified. Each finding names the object.

use std::collections::{HashMap, HashSet};

use crate::blob::{self, BlobKind};
use crate::error::{Error, Result};
use crate::format::{Content, NodeKind};
use crate::id::Id;
use crate::pack::{pack_path, parse_pack};
use crate::repo::Repository;

/// What `check` found.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    /// Damage: each names the object and what is wrong.
    pub errors: Vec<String>,
    /// Harmless findings (garbage a prune removes).
    pub warnings: Vec<String>,
    /// Snapshots checked.
    pub snapshots: u64,
    /// Trees read.
    pub trees: u64,
    /// Packs present.
    pub packs: u64,
    /// Blobs verified by reading (with `read_data`).
    pub blobs_read: u64,
    /// Packs read whole.
    pub packs_read: u64,
}

/// Which packs `check` reads whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReadData {
    /// None: the structure only.
    None,
    /// Every pack.
    All,
    /// Slice `k` (1-based) of `n`: the packs whose id, read as a number, is `k - 1` modulo `n`,
    /// so that slices 1 to n cover every pack once, whichever day each is run.
    Slice {
        /// Which slice.
        k: u64,
        /// Of how many.
        n: u64,
    },
    /// Each pack with this probability (0 to 1), drawn afresh on every run.
    Fraction(f64),
}

impl ReadData {
    /// Whether pack `id` is read.
    fn reads(self, id: &Id) -> bool {
        let number = u64::from_le_bytes(id.0[..8].try_into().expect("8 bytes"));
        match self {
            ReadData::None => false,
            ReadData::All => true,
            ReadData::Slice { k, n } => n > 0 && number % n == k.wrapping_sub(1),
            ReadData::Fraction(p) => (Id::random().0[0] as f64 + 0.5) / 256.0 < p,
        }
    }
}

impl From<bool> for ReadData {
    fn from(all: bool) -> Self {
        if all {
            ReadData::All
        } else {
            ReadData::None
        }
    }
}

/// Checks the repository's structure, and the bytes of the packs `read_data` selects.
pub fn check(repo: &Repository, read_data: impl Into<ReadData>) -> Result<CheckReport> {
    let read_data = read_data.into();
    let mut report = CheckReport::default();
    for slot in crate::repo::key_slot_errors(repo)? {
        report.errors.push(slot);
    }
    let loaded = repo.load_index()?;
    report.errors.extend(loaded.problems.iter().map(Error::to_string));
    let index = loaded.index;
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let mut present: HashMap<Id, u64> = HashMap::new();
    for object in &listing {
        match object.name.rsplit('/').next().and_then(Id::from_hex) {
            Some(id) if object.name == pack_path(&id) => {
                present.insert(id, object.size);
            }
            _ => report.warnings.push(format!("{}: not a pack name; ignored", object.name)),
        }
    }
    report.packs = present.len() as u64;
    for (id, _) in index.packs() {
        if !present.contains_key(id) {
            report.errors.push(format!("{}: missing (the index lists it)", pack_path(id)));
        }
    }
    let planned = repo.planned_deletions()?;
    for id in present.keys() {
        if planned.contains(id) {
            report.warnings.push(format!(
                "{}: named by a deletion plan (deleted once the backups it waits for finish)",
                pack_path(id)
            ));
        } else if !index.has_pack(id) {
            report.warnings.push(format!(
                "{}: not in any index (left by an interrupted backup; the next backup adopts it)",
                pack_path(id)
            ));
        }
    }

    let (snapshots, bad) = repo.snapshots()?;
    report.errors.extend(bad.iter().map(Error::to_string));
    let mut trees_seen: HashSet<Id> = HashSet::new();
    let mut data_seen: HashSet<Id> = HashSet::new();
    for (snapshot_id, snapshot) in &snapshots {
        report.snapshots += 1;
        let mut pending = vec![(snapshot.tree, Vec::<u8>::new())];
        while let Some((tree_id, path)) = pending.pop() {
            if !trees_seen.insert(tree_id) {
                continue;
            }
            let in_pack = index.lookup(&tree_id, BlobKind::Tree).map(|l| l.pack);
            if let Some(pack) = in_pack.filter(|p| !present.contains_key(p)) {
                report.errors.push(format!(
                    "snapshot {}: /{}: tree blob {tree_id} is in missing pack {}",
                    snapshot_id.short(8),
                    String::from_utf8_lossy(&path),
                    pack_path(&pack)
                ));
                continue;
            }
            let tree = match repo.read_tree(&index, &tree_id) {
                Ok(tree) => tree,
                Err(err) => {
                    report.errors.push(format!(
                        "snapshot {}: /{}: {err}",
                        snapshot_id.short(8),
                        String::from_utf8_lossy(&path)
                    ));
                    continue;
                }
            };
            report.trees += 1;
            for node in &tree.nodes {
                let mut child = path.clone();
                if !child.is_empty() {
                    child.push(b'/');
                }
                child.extend_from_slice(&node.name);
                match &node.content {
                    Content::Subtree(id) => pending.push((*id, child)),
                    Content::Chunks(chunks) if node.kind == NodeKind::File => {
                        for chunk in chunks {
                            if !data_seen.insert(*chunk) {
                                continue;
                            }
                            match index.lookup(chunk, BlobKind::Data) {
                                None => report.errors.push(format!(
                                    "snapshot {}: /{}: data blob {chunk} is not in the index",
                                    snapshot_id.short(8),
                                    String::from_utf8_lossy(&child)
                                )),
                                Some(loc) if !present.contains_key(&loc.pack) => {
                                    report.errors.push(format!(
                                        "snapshot {}: /{}: data blob {chunk} is in missing pack {}",
                                        snapshot_id.short(8),
                                        String::from_utf8_lossy(&child),
                                        pack_path(&loc.pack)
                                    ))
                                }
                                Some(_) => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    if read_data != ReadData::None {
        let mut ids: Vec<&Id> = present.keys().filter(|id| read_data.reads(id)).collect();
        ids.sort();
        for id in ids {
            read_pack(repo, &index, id, &mut report);
        }
    }
    Ok(report)
}

fn read_pack(repo: &Repository, index: &crate::index::Index, id: &Id, report: &mut CheckReport) {
    report.packs_read += 1;
    let name = pack_path(id);
    let bytes = match repo.read_named(&name, id) {
        Ok(bytes) => bytes,
        Err(err) => return report.errors.push(err.to_string()),
    };
    let parsed = match parse_pack(repo.sealer(), &bytes) {
        Ok(parsed) => parsed,
        Err(err) => return report.errors.push(format!("{name}: damaged: {err}")),
    };
    for entry in &parsed.entries {
        let sealed = &bytes[entry.offset as usize..(entry.offset + entry.stored_len) as usize];
        match blob::open(repo.sealer(), &repo.keys().id, parsed.kind, entry, sealed) {
            Ok(_) => report.blobs_read += 1,
            Err(err) => report.errors.push(format!(
                "{name}: {} blob {}: {err}",
                parsed.kind.name(),
                entry.id
            )),
        }
        if index.has_pack(id) && index.lookup(&entry.id, parsed.kind).is_none() {
            report.errors.push(format!(
                "{name}: {} blob {} is in the pack but not in the index",
                parsed.kind.name(),
                entry.id
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_every_pack_exactly_once() {
        let ids: Vec<Id> = (0..200).map(|_| Id::random()).collect();
        for id in &ids {
            let slices = (1..=7).filter(|&k| ReadData::Slice { k, n: 7 }.reads(id)).count();
            assert_eq!(slices, 1);
            assert!(ReadData::All.reads(id) && !ReadData::None.reads(id));
            assert!(!ReadData::Fraction(0.0).reads(id) && ReadData::Fraction(1.0).reads(id));
        }
        let some = ids.iter().filter(|id| ReadData::Fraction(0.5).reads(id)).count();
        assert!((40..160).contains(&some), "{some} of 200 at 50 %");
    }
}
