//! Builds an in-memory index of N synthetic blobs (1 MiB chunks, 16 to a 16 MiB pack, as a
//! backup adds them) for the store's scale benchmark (bench/store/scale.py), and prints one JSON
//! line: the table's bytes, the resident memory the index added, and the time per insertion,
//! per lookup of a stored blob (hit) and per lookup of an unknown one (miss).
//!
//! `cargo run --release --example index_scale -- BLOBS`

use std::time::Instant;

use dedup_store::blob::BlobKind;
use dedup_store::format::{BlobEntry, Compression};
use dedup_store::id::Id;
use dedup_store::index::Index;

const BLOBS_PER_PACK: u64 = 16;
const CHUNK: u32 = 1 << 20;

fn main() {
    let Some(blobs) = std::env::args().nth(1).and_then(|n| n.parse::<u64>().ok()) else {
        eprintln!("usage: index_scale BLOBS");
        std::process::exit(2);
    };
    let before = resident_bytes();
    let mut index = Index::new();
    let start = Instant::now();
    let mut pack = Vec::with_capacity(BLOBS_PER_PACK as usize);
    for n in 0..blobs {
        pack.push(BlobEntry {
            id: blob_id(n),
            compression: Compression::Zstd,
            offset: (n % BLOBS_PER_PACK) as u32 * CHUNK,
            stored_len: CHUNK / 2,
            raw_len: CHUNK,
        });
        if pack.len() as u64 == BLOBS_PER_PACK || n + 1 == blobs {
            index.add_pack(pack_id(n), BlobKind::Data, &pack);
            pack.clear();
        }
    }
    index.settle();
    let insert_ns = start.elapsed().as_nanos() as f64 / blobs as f64;
    let resident = resident_bytes().saturating_sub(before);

    let probes = blobs.min(1_000_000);
    let step = (blobs / probes).max(1);
    let start = Instant::now();
    let mut found = 0u64;
    for k in 0..probes {
        found += u64::from(index.contains(&blob_id(k * step), BlobKind::Data));
    }
    let hit_ns = start.elapsed().as_nanos() as f64 / probes as f64;
    assert_eq!(found, probes, "every stored blob is found");
    let start = Instant::now();
    let mut missed = 0u64;
    for k in 0..probes {
        missed += u64::from(!index.contains(&blob_id(blobs + k), BlobKind::Data));
    }
    let miss_ns = start.elapsed().as_nanos() as f64 / probes as f64;
    assert_eq!(missed, probes, "no unknown blob is found");

    println!(
        "{{\"blobs\": {blobs}, \"table_bytes\": {}, \"resident_bytes\": {resident}, \
         \"insert_ns\": {insert_ns:.1}, \"hit_ns\": {hit_ns:.1}, \"miss_ns\": {miss_ns:.1}}}",
        index.memory_bytes()
    );
}

/// A blob id as spread as a keyed hash makes real ones.
fn blob_id(n: u64) -> Id {
    Id(*blake3::hash(&n.to_le_bytes()).as_bytes())
}

fn pack_id(n: u64) -> Id {
    Id(*blake3::hash(format!("pack {n}").as_bytes()).as_bytes())
}

/// This process's resident memory, from /proc/self/statm.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}
