//! Where a first backup's compression CPU goes, by blob size and by what compression gains, and
//! what candidate rules for skipping it would cost and save. The tree's files are cut by the
//! default chunker and the distinct chunks held in memory; each rule then compresses all of them
//! on one thread (its CPU time read from `/proc/thread-self/schedstat`, so a loaded machine
//! does not inflate it). Sizes are payloads plus the sealed box's 40 bytes, no trailers.
//! For the rule of `compress.rs` (docs/benchmarks/journal.md, "First backup CPU and repository size
//! (issue 24)").
//!
//! `cargo run --release -p dedup-store --example compression_rules -- DIR`

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
const MIB: f64 = (1 << 20) as f64;

/// Nanoseconds this thread has spent on a CPU (Linux).
fn thread_cpu_ns() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// The distinct chunks of the files under `dir`, cut by the default chunker.
fn distinct_chunks(dir: &Path) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    visit(dir, &mut files);
    let chunker = Chunker::new(ChunkerParams::default(), &[7; 32]);
    let mut seen = HashSet::new();
    let mut chunks = Vec::new();
    let mut buf = Vec::new();
    for path in &files {
        let Ok(file) = File::open(path) else { continue };
        let mut stream = ChunkStream::with_buffer(&chunker, file, std::mem::take(&mut buf));
        while let Ok(Some(chunk)) = stream.next_chunk() {
            if seen.insert(*blake3::hash(chunk).as_bytes()) {
                chunks.push(chunk.to_vec());
            }
        }
        buf = stream.into_buffer();
    }
    chunks
}

thread_local! {
    /// One context per level, as the store keeps one per thread: making one per blob would
    /// cost more than compressing a small blob.
    static CONTEXTS: std::cell::RefCell<std::collections::HashMap<i32, zstd::bulk::Compressor<'static>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// The zstd frame of `data` at `level`.
fn frame(data: &[u8], level: i32) -> Vec<u8> {
    CONTEXTS.with(|cell| {
        let mut contexts = cell.borrow_mut();
        let context = contexts
            .entry(level)
            .or_insert_with(|| zstd::bulk::Compressor::new(level).expect("a zstd context"));
        context.compress(data).expect("zstd compresses into a bound-sized buffer")
    })
}

/// The length of the zstd frame of `data` at `level`.
fn frame_len(data: &[u8], level: i32) -> usize {
    frame(data, level).len()
}

/// A rule for one blob: its zstd frame, or `None` to store it raw.
type Rule = dyn Fn(&[u8]) -> Option<Vec<u8>>;

/// Size classes of blobs, by upper bound (exclusive).
const CLASSES: [(usize, &str); 6] = [
    (4 << 10, "< 4 KiB"),
    (16 << 10, "4-16 KiB"),
    (64 << 10, "16-64 KiB"),
    (256 << 10, "64-256 KiB"),
    (1 << 20, "256 KiB-1 MiB"),
    (usize::MAX, ">= 1 MiB"),
];

/// Gain classes: what level 3 saves of the blob, in per mille (lower bound).
const GAINS: [(u64, &str); 4] = [(0, "none (raw)"), (1, "0-3 %"), (30, "3-10 %"), (100, ">= 10 %")];

fn class_of(len: usize) -> usize {
    CLASSES.iter().position(|&(bound, _)| len < bound).expect("the last bound is open")
}

fn gain_of(len: usize, packed: usize) -> usize {
    if packed >= len {
        return 0;
    }
    let per_mille = ((len - packed) * 1000 / len) as u64;
    GAINS.iter().rposition(|&(low, _)| per_mille >= low && low > 0).unwrap_or(1)
}

/// Order-0 entropy of `data` in milli-bits per byte.
fn entropy_millibits(data: &[u8]) -> u32 {
    let mut counts = [0u32; 256];
    for &b in data {
        counts[b as usize] += 1;
    }
    let n = data.len() as f64;
    let bits: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum();
    (bits * 1000.0) as u32
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: compression_rules DIR");
        std::process::exit(2);
    };
    let chunks = distinct_chunks(Path::new(dir));
    let raw: u64 = chunks.iter().map(|c| c.len() as u64).sum();
    println!("{} distinct chunks, {:.1} MiB", chunks.len(), raw as f64 / MIB);
    match args.get(2).map(String::as_str) {
        Some("params") => return parameter_sets(&chunks),
        Some("levels") => return levels_by_class(&chunks),
        _ => {}
    }

    // Level 3 on every blob, whole: what it saves each blob, and its CPU per class.
    let packed: Vec<usize> = chunks.iter().map(|c| frame_len(c, 3)).collect();
    let mut cells = vec![[0u64; 4]; CLASSES.len() * GAINS.len()]; // count, raw, stored, cpu
    for class in 0..CLASSES.len() {
        for gain in 0..GAINS.len() {
            let members: Vec<usize> = (0..chunks.len())
                .filter(|&i| {
                    class_of(chunks[i].len()) == class
                        && gain_of(chunks[i].len(), packed[i]) == gain
                })
                .collect();
            let start = thread_cpu_ns();
            for &i in &members {
                std::hint::black_box(frame_len(&chunks[i], 3));
            }
            let cell = &mut cells[class * GAINS.len() + gain];
            cell[3] = thread_cpu_ns() - start;
            for &i in &members {
                cell[0] += 1;
                cell[1] += chunks[i].len() as u64;
                cell[2] += packed[i].min(chunks[i].len()) as u64;
            }
        }
    }
    println!("\nlevel 3 on every blob whole (frames kept where smaller):");
    println!(
        "{:>14} {:>11} {:>7} {:>10} {:>10} {:>7}",
        "size", "gain", "blobs", "raw MiB", "L3 MiB", "cpu s"
    );
    for class in 0..CLASSES.len() {
        for gain in 0..GAINS.len() {
            let c = cells[class * GAINS.len() + gain];
            if c[0] > 0 {
                println!(
                    "{:>14} {:>11} {:>7} {:>10.1} {:>10.1} {:>7.3}",
                    CLASSES[class].1,
                    GAINS[gain].1,
                    c[0],
                    c[1] as f64 / MIB,
                    c[2] as f64 / MIB,
                    c[3] as f64 / 1e9
                );
            }
        }
    }

    // Entropy of the blobs level 3 cannot shrink, against those it can: where a gate could cut.
    let mut raw_entropy: Vec<u32> = Vec::new();
    let mut packed_entropy: Vec<(u32, usize, usize)> = Vec::new();
    let start = thread_cpu_ns();
    for (i, chunk) in chunks.iter().enumerate() {
        let e = entropy_millibits(chunk);
        if packed[i] >= chunk.len() {
            raw_entropy.push(e);
        } else {
            packed_entropy.push((e, chunk.len(), packed[i]));
        }
    }
    println!(
        "\norder-0 entropy of every blob whole: {:.3} s CPU",
        (thread_cpu_ns() - start) as f64 / 1e9
    );
    raw_entropy.sort_unstable();
    let pct = |v: &[u32], p: usize| v.get(v.len() * p / 100).copied().unwrap_or(0);
    println!(
        "blobs L3 cannot shrink: entropy percentiles 1/5/50 % = {} / {} / {} mbit/B",
        pct(&raw_entropy, 1),
        pct(&raw_entropy, 5),
        pct(&raw_entropy, 50)
    );
    for threshold in [7900, 7950, 7980, 7990, 7995] {
        let (n, lost) = packed_entropy
            .iter()
            .filter(|(e, _, _)| *e >= threshold)
            .fold((0, 0), |(n, lost), (_, len, p)| (n + 1, lost + (len - p) as u64));
        let skipped = raw_entropy.iter().filter(|&&e| e >= threshold).count();
        println!(
            "  gate at {threshold}: skips {skipped} of {} raw blobs; would also skip {n} \
             shrinkable ones, losing {:.2} MiB",
            raw_entropy.len(),
            lost as f64 / MIB
        );
    }

    // The rules themselves, end to end: CPU and stored bytes.
    println!("\n{:<44} {:>7} {:>11} {:>9}", "rule", "cpu s", "stored MiB", "frames");
    let rules: [(&str, &Rule); 2] = [
        ("store's rule (compress::compress, auto)", &|c| {
            compress::compress(c, CompressionMode::Auto)
        }),
        ("level 3 on every blob, kept where smaller", &|c| {
            Some(frame(c, 3)).filter(|f| f.len() < c.len())
        }),
    ];
    for (name, rule) in rules {
        let start = thread_cpu_ns();
        let mut stored = 0u64;
        let mut frames = 0u64;
        for chunk in &chunks {
            let frame = rule(chunk);
            stored += SEAL_OVERHEAD + frame.as_ref().map_or(chunk.len(), Vec::len) as u64;
            frames += u64::from(frame.is_some());
        }
        println!(
            "{name:<44} {:>7.3} {:>11.1} {frames:>9}",
            (thread_cpu_ns() - start) as f64 / 1e9,
            stored as f64 / MIB
        );
    }
}

/// zstd parameter sets against level 3 itself: CPU and stored bytes over every blob, frames
/// kept where smaller. Each set is level 3 with some parameters replaced.
fn parameter_sets(chunks: &[Vec<u8>]) {
    use zstd::zstd_safe::CParameter as P;
    let sets: Vec<(&str, i32, Vec<P>)> = vec![
        ("level 3", 3, vec![]),
        ("level 2", 2, vec![]),
        ("level 4", 4, vec![]),
        ("3, hash 16 chain 15", 3, vec![P::HashLog(16), P::ChainLog(15)]),
        ("3, hash 15 chain 14", 3, vec![P::HashLog(15), P::ChainLog(14)]),
        ("3, min match 6", 3, vec![P::MinMatch(6)]),
        ("3, window 20", 3, vec![P::WindowLog(20)]),
        ("3, hash 18 chain 16", 3, vec![P::HashLog(18), P::ChainLog(16)]),
        ("3, target length 1", 3, vec![P::TargetLength(1)]),
        ("5 (greedy)", 5, vec![]),
        ("5, hash 16 chain 15 search 1", 5, vec![P::HashLog(16), P::ChainLog(15), P::SearchLog(1)]),
    ];
    println!("{:<32} {:>7} {:>11} {:>9}", "parameters", "cpu s", "stored MiB", "frames");
    for (name, level, params) in sets {
        let mut context = zstd::bulk::Compressor::new(level).expect("a zstd context");
        for &p in &params {
            context.set_parameter(p).expect("a valid parameter");
        }
        let start = thread_cpu_ns();
        let (mut stored, mut frames) = (0u64, 0u64);
        for chunk in chunks {
            let frame = context.compress(chunk).expect("zstd compresses");
            let kept = frame.len() < chunk.len();
            stored += SEAL_OVERHEAD + if kept { frame.len() } else { chunk.len() } as u64;
            frames += u64::from(kept);
        }
        println!(
            "{name:<32} {:>7.3} {:>11.1} {frames:>9}",
            (thread_cpu_ns() - start) as f64 / 1e9,
            stored as f64 / MIB
        );
    }
}

/// Levels 1 to 5 per size class: CPU and stored bytes of each class at each level, for a rule
/// that would pick the level by a blob's size.
fn levels_by_class(chunks: &[Vec<u8>]) {
    println!("{:>14} {:>6} {:>9}  level: cpu s / stored MiB", "size", "blobs", "raw MiB");
    for (class, (_, name)) in CLASSES.iter().enumerate() {
        let members: Vec<&Vec<u8>> = chunks.iter().filter(|c| class_of(c.len()) == class).collect();
        let raw: u64 = members.iter().map(|c| c.len() as u64).sum();
        print!("{name:>14} {:>6} {:>9.1} ", members.len(), raw as f64 / MIB);
        for level in 1..=5 {
            let mut context = zstd::bulk::Compressor::new(level).expect("a zstd context");
            let start = thread_cpu_ns();
            let mut stored = 0u64;
            for chunk in &members {
                let frame = context.compress(chunk).expect("zstd compresses");
                stored += SEAL_OVERHEAD + frame.len().min(chunk.len()) as u64;
            }
            let cpu = (thread_cpu_ns() - start) as f64 / 1e9;
            print!(" {level}: {cpu:.3}/{:.2}", stored as f64 / MIB);
        }
        println!();
    }
}
