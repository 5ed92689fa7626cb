//! What each zstd level costs and saves on a tree, as a first backup would compress it: the
//! tree's files cut by the default chunker, each distinct chunk compressed by the store's own
//! per-blob rule (probed when large, kept only where it shrinks) at every level given. Prints,
//! per level, the CPU time of compression alone (this thread's time on a CPU, so a loaded
//! machine does not inflate it) and the bytes the data blobs would take in packs (sealed boxes,
//! no trailers). For the choice of the default level (docs/benchmarks/journal.md, "Store first backup:
//! memory and compression level").
//!
//! `cargo run --release -p dedup-store --example compression_levels -- DIR [LEVELS]`
//! (LEVELS: comma-separated, negative for zstd's fast levels; default `-5,-3,-1,1,2,3,4`)

use std::collections::HashSet;
use std::fs::File;
use std::path::Path;

use dedup_store::chunker::{ChunkStream, Chunker};
use dedup_store::compress;
use dedup_store::format::{ChunkerParams, CompressionMode};

mod common;
use common::visit;

/// Bytes a sealed box adds to its payload (nonce and tag).
const SEAL_OVERHEAD: u64 = 40;

/// Nanoseconds this thread has spent on a CPU (Linux).
fn thread_cpu_ns() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

struct Level {
    level: i32,
    cpu_ns: u64,
    stored: u64,
    compressed_blobs: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: compression_levels DIR [LEVELS]");
        std::process::exit(2);
    };
    let levels: Vec<i32> = args
        .get(2)
        .map_or("-5,-3,-1,1,2,3,4", String::as_str)
        .split(',')
        .map(|l| l.trim().parse().expect("levels are integers"))
        .collect();
    let mut results: Vec<Level> = levels
        .iter()
        .map(|&level| Level { level, cpu_ns: 0, stored: 0, compressed_blobs: 0 })
        .collect();
    let mut files = Vec::new();
    visit(Path::new(dir), &mut files);
    let chunker = Chunker::new(ChunkerParams::default(), &[7; 32]);
    let mut seen = HashSet::new();
    let (mut raw, mut blobs, mut chunks) = (0u64, 0u64, 0u64);
    let mut buf = Vec::new();
    for path in &files {
        let Ok(file) = File::open(path) else { continue };
        let mut stream = ChunkStream::with_buffer(&chunker, file, std::mem::take(&mut buf));
        while let Ok(Some(chunk)) = stream.next_chunk() {
            chunks += 1;
            if !seen.insert(*blake3::hash(chunk).as_bytes()) {
                continue;
            }
            blobs += 1;
            raw += chunk.len() as u64;
            for result in &mut results {
                let start = thread_cpu_ns();
                let frame = compress::compress(chunk, CompressionMode::Level(result.level));
                result.cpu_ns += thread_cpu_ns() - start;
                result.stored +=
                    SEAL_OVERHEAD + frame.as_ref().map_or(chunk.len(), Vec::len) as u64;
                result.compressed_blobs += u64::from(frame.is_some());
            }
        }
        buf = stream.into_buffer();
    }
    println!(
        "{} files, {chunks} chunks, {blobs} distinct ({:.1} MiB)",
        files.len(),
        raw as f64 / (1 << 20) as f64
    );
    println!("level  cpu_s   stored_MiB  ratio  blobs_compressed");
    for r in &results {
        println!(
            "{:5}  {:6.2}  {:10.1}  {:5.3}  {}",
            r.level,
            r.cpu_ns as f64 / 1e9,
            r.stored as f64 / (1 << 20) as f64,
            r.stored as f64 / raw as f64,
            r.compressed_blobs
        );
    }
}
