//! What `stats` says: what the snapshots hold, what the repository stores, and the ratios
//! between, each line with what its figure means.

use dedup_core::text::{Bytes, Count};

use crate::commands::RepoStats;

impl RepoStats {
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
