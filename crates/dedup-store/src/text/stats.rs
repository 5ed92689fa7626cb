//! What `stats` says: what the snapshots hold, what the repository stores, and the ratios
//! between, each line with what its figure means.

use dedup_core::text::{Bytes, Count};
use serde_json::{json, Value};

use crate::commands::RepoStats;

impl RepoStats {
    /// The figures as `stats --json` gives them.
    pub fn record(&self) -> Value {
        let s = self;
        json!({
            "snapshots": s.snapshots, "logical_bytes": s.logical_bytes,
            "unique_bytes": s.unique_bytes, "stored_data_bytes": s.stored_data_bytes,
            "pack_bytes": s.pack_bytes, "stored_bytes": s.stored_bytes,
            "dedup_ratio": s.dedup_ratio(), "compression_ratio": s.compression_ratio(),
            "total_ratio": s.total_ratio(), "data_blobs": s.data_blobs,
            "tree_blobs": s.tree_blobs, "stored_tree_bytes": s.stored_tree_bytes,
            "tree_bytes": s.tree_bytes, "packs": s.packs, "data_packs": s.data_packs,
            "tree_packs": s.tree_packs, "index_bytes_per_blob": s.index_bytes_per_blob,
        })
    }

    /// The figures as `stats` shows them, one per line.
    pub fn lines(&self) -> Vec<String> {
        let s = self;
        vec![
            format!("snapshots:          {}", s.snapshots),
            format!(
                "logical size:       {}   (every snapshot's files, as restored)",
                Bytes(s.logical_bytes)
            ),
            format!(
                "unique data:        {}   ({} distinct chunks, uncompressed)",
                Bytes(s.unique_bytes),
                Count(s.data_blobs)
            ),
            format!(
                "stored data:        {}   (those chunks compressed and encrypted)",
                Bytes(s.stored_data_bytes)
            ),
            format!(
                "stored trees:       {}   ({} tree blobs, {} before compression)",
                Bytes(s.stored_tree_bytes),
                Count(s.tree_blobs),
                Bytes(s.tree_bytes)
            ),
            format!(
                "repository size:    {}   ({} data packs, {} tree packs; index, snapshots, keys)",
                Bytes(s.stored_bytes),
                Count(s.data_packs),
                Count(s.tree_packs)
            ),
            format!("dedup ratio:        {:.2}   (logical size / unique data)", s.dedup_ratio()),
            format!(
                "compression ratio:  {:.2}   (unique data / stored data)",
                s.compression_ratio()
            ),
            format!(
                "total ratio:        {:.2}   (logical size / repository size)",
                s.total_ratio()
            ),
            format!("index memory:       {:.1} bytes per blob", s.index_bytes_per_blob),
        ]
    }
}
