//! `stats`: what the snapshots hold, what the repository stores, and the ratios between.

use std::collections::HashSet;

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::repo::Repository;

/// The folders of a repository whose files `stats` counts, besides the config.
const FOLDERS: [&str; 6] = ["data", "index", "snapshots", "keys", "writers", "deletions"];

/// The figures of `stats`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepoStats {
    /// Snapshots that read.
    pub snapshots: u64,
    /// Every snapshot's files, as restored.
    pub logical_bytes: u64,
    /// Distinct chunks, uncompressed.
    pub unique_bytes: u64,
    /// Those chunks compressed and encrypted.
    pub stored_data_bytes: u64,
    /// The pack files.
    pub pack_bytes: u64,
    /// Every file of the repository.
    pub stored_bytes: u64,
    /// Distinct chunks.
    pub data_blobs: u64,
    /// Tree blobs.
    pub tree_blobs: u64,
    /// Tree blobs compressed and encrypted.
    pub stored_tree_bytes: u64,
    /// Tree blobs before compression.
    pub tree_bytes: u64,
    /// Packs.
    pub packs: u64,
    /// Packs of data blobs.
    pub data_packs: u64,
    /// Packs of tree blobs.
    pub tree_packs: u64,
    /// Memory the index takes per blob.
    pub index_bytes_per_blob: f64,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl RepoStats {
    /// Logical size / unique data.
    pub fn dedup_ratio(&self) -> f64 {
        ratio(self.logical_bytes, self.unique_bytes)
    }

    /// Unique data / stored data.
    pub fn compression_ratio(&self) -> f64 {
        ratio(self.unique_bytes, self.stored_data_bytes)
    }

    /// Logical size / repository size.
    pub fn total_ratio(&self) -> f64 {
        ratio(self.logical_bytes, self.stored_bytes)
    }
}

/// The figures of `repo`.
pub fn stats(repo: &Repository) -> Result<RepoStats> {
    let (snapshots, _) = repo.snapshots()?;
    let index = repo.index()?;
    let mut stored = 0;
    let mut pack_bytes = 0;
    for folder in FOLDERS {
        let listing = repo.backend().list(folder).map_err(|e| Error::io(folder, e))?;
        let size: u64 = listing.iter().map(|o| o.size).sum();
        stored += size;
        if folder == "data" {
            pack_bytes = size;
        }
    }
    let config = crate::repo::CONFIG;
    stored += repo.backend().get(config).map_err(|e| Error::io(config, e))?.len() as u64;
    let [data, trees] = index.totals();
    let packs: HashSet<_> = index.packs().collect();
    let data_packs = packs.iter().filter(|(_, kind)| *kind == BlobKind::Data).count() as u64;
    Ok(RepoStats {
        snapshots: snapshots.len() as u64,
        logical_bytes: snapshots.iter().map(|(_, s)| s.summary.bytes_total).sum(),
        unique_bytes: data.2,
        stored_data_bytes: data.1,
        pack_bytes,
        stored_bytes: stored,
        data_blobs: data.0,
        tree_blobs: trees.0,
        stored_tree_bytes: trees.1,
        tree_bytes: trees.2,
        packs: packs.len() as u64,
        data_packs,
        tree_packs: packs.len() as u64 - data_packs,
        index_bytes_per_blob: ratio(index.memory_bytes() as u64, index.len() as u64),
    })
}
