//! How quickly keyed FastCDC finds its old cut points again after an edit, per normalisation
//! level and minimum size (issue 24's "within 1.5x of the truly new bytes"; docs/benchmarks/journal.md,
//! "Chunker resynchronisation"). For each of KEYS random gear keys and every variant, on one
//! random buffer of MIB MiB:
//!
//! The variants: normalisation levels 0 to 2 (level 2 is chunker kind 1) at 256 to 640 KiB
//! minimums, avg 1 MiB, and the flat rule (kind 3) at 256 to 768 KiB minimums, mean 1 MiB.
//!
//! - overwrite: 1 MiB replaced at a random offset; the bytes re-stored are those of the new
//!   chunks from the last old cut before the edit to the first new cut after it that is also an
//!   old one (from there on both cut the same). The floor is what any chunker with the same cut
//!   points before the edit must re-store: the old chunks the edit touches.
//! - insert: 100 bytes inserted at the start; the bytes up to the first new cut that is an old
//!   one moved by 100.
//!
//! Also the mean chunk, the size-biased mean E[S²]/E[S] (the expected length of the chunk a
//! random byte falls in: the floor of an overwrite of L bytes is about L + that), and the scan
//! throughput (cutting the whole buffer; the best of the keys, the variants interleaved so that
//! a busy moment of the shared machine lands on all of them).
//!
//! `cargo run --release -p dedup-store --example chunker_resync -- [KEYS] [MIB]`

use std::time::{Duration, Instant};

use dedup_store::chunker::FastCdc;

const OVERWRITE: usize = 1 << 20;
const INSERT: usize = 100;
const MAX: u32 = 8 << 20;

/// One chunker variant.
struct Variant {
    /// Normalisation level, or `None` for the flat rule.
    level: Option<u32>,
    min: u32,
    /// Normalised: the size whose log2 sets the masks; flat: the mean chunk.
    avg: u32,
}

impl Variant {
    fn chunker(&self, key: &[u8; 32]) -> FastCdc {
        match self.level {
            Some(level) => FastCdc::normalised(key, self.min, self.avg, MAX, level),
            None => FastCdc::flat(key, self.min, self.avg, MAX),
        }
    }
}

/// What one variant measured over the keys.
#[derive(Default)]
struct Tally {
    overwrite: Vec<f64>,
    overwrite_floor: Vec<f64>,
    insert: Vec<f64>,
    insert_floor: Vec<f64>,
    chunks: usize,
    bytes: usize,
    squares: f64,
    best_scan: Option<Duration>,
    scans: Vec<Duration>,
    unsynced: usize,
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("a number"));
    let keys = args.next().unwrap_or(200);
    let len = args.next().unwrap_or(64) << 20;
    // The sizes (avg 1 MiB) at each normalisation level (0 is one mask of log2(avg)
    // bits: a mean chunk of min + avg), then the flat rule (one threshold set so that the mean
    // chunk is avg) at several minimums.
    let mut variants: Vec<Variant> = [0u32, 1, 2]
        .into_iter()
        .flat_map(|level| {
            [256u32, 384, 512, 640].into_iter().map(move |k| Variant {
                level: Some(level),
                min: k << 10,
                avg: 1 << 20,
            })
        })
        .collect();
    for min in [256u32, 384, 512, 640, 768] {
        variants.push(Variant { level: None, min: min << 10, avg: 1 << 20 });
    }
    let data = noise(len, b"buffer");
    let mut tallies: Vec<Tally> = variants.iter().map(|_| Tally::default()).collect();
    for k in 0..keys {
        let key = blake3::derive_key("dedup chunker_resync gear key", &k.to_le_bytes());
        // The edit's offset: anywhere in the middle half, so every variant resynchronises long
        // before the end.
        let at =
            len / 4 + (u64::from_le_bytes(key[..8].try_into().expect("8")) as usize) % (len / 2);
        let mut overwritten = data.clone();
        overwritten[at..at + OVERWRITE].copy_from_slice(&noise(OVERWRITE, &key));
        let mut inserted = noise(INSERT, &key[1..]);
        inserted.extend_from_slice(&data[..len / 2]);
        for (variant, tally) in variants.iter().zip(&mut tallies) {
            let cdc = variant.chunker(&key);
            let started = Instant::now();
            let cuts = cut_points(&cdc, &data);
            let took = started.elapsed();
            tally.best_scan = Some(tally.best_scan.map_or(took, |best| best.min(took)));
            tally.scans.push(took);
            let mut previous = 0;
            for &cut in &cuts[..cuts.len() - 1] {
                let size = cut - previous;
                tally.chunks += 1;
                tally.bytes += size;
                tally.squares += (size as f64).powi(2);
                previous = cut;
            }
            let is_old = |at: usize| cuts.binary_search(&at).is_ok();
            // The overwrite.
            let from = cuts.iter().rev().find(|&&c| c <= at).copied().unwrap_or(0);
            let after = at + OVERWRITE;
            let touched_end = *cuts.iter().find(|&&c| c >= after).expect("a cut after the edit");
            let mut pos = from;
            loop {
                pos += cdc.cut(&overwritten[pos..]);
                if pos >= after && is_old(pos) {
                    break;
                }
                if pos == len {
                    tally.unsynced += 1;
                    break;
                }
            }
            tally.overwrite.push((pos - from) as f64);
            tally.overwrite_floor.push((touched_end - from) as f64);
            // The insertion.
            let mut pos = 0;
            loop {
                pos += cdc.cut(&inserted[pos..]);
                if is_old(pos - INSERT) || pos == inserted.len() {
                    break;
                }
            }
            tally.insert.push(pos as f64);
            tally.insert_floor.push((cuts[0] + INSERT) as f64);
        }
    }
    report(&variants, &tallies, keys, len);
}

/// Every cut point of `data` (the end of each chunk).
fn cut_points(cdc: &FastCdc, data: &[u8]) -> Vec<usize> {
    let mut cuts = Vec::with_capacity(data.len() / (256 << 10));
    let mut pos = 0;
    while pos < data.len() {
        pos += cdc.cut(&data[pos..]);
        cuts.push(pos);
    }
    cuts
}

fn noise(len: usize, seed: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; len];
    blake3::Hasher::new_derive_key("dedup chunker_resync noise")
        .update(seed)
        .finalize_xof()
        .fill(&mut out);
    out
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn report(variants: &[Variant], tallies: &[Tally], keys: usize, len: usize) {
    const MIB: f64 = (1 << 20) as f64;
    println!("{keys} keys, {} MiB of random data, max {} MiB; bytes in MiB", len >> 20, MAX >> 20);
    println!(
        "{:>5} {:>5} {:>5} | {:>6} {:>6} | {:>6} {:>6} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6} | {:>5} {:>5} {:>5} | {:>6} {:>6}",
        "level", "min", "avg", "chunk", "E[S²]/", "overw", "sd", "p10", "p50", "p90", "max", "floor", "/floor", "ins", "p90", "floor", "MB/s", "median"
    );
    for (variant, tally) in variants.iter().zip(tallies) {
        let chunk = tally.bytes as f64 / tally.chunks as f64;
        let biased = tally.squares / tally.bytes as f64;
        let over = mean(&tally.overwrite);
        let sd = (tally.overwrite.iter().map(|v| (v - over).powi(2)).sum::<f64>()
            / (tally.overwrite.len() - 1).max(1) as f64)
            .sqrt();
        let floor = mean(&tally.overwrite_floor);
        let mut scans = tally.scans.clone();
        scans.sort();
        let rate = |d: Duration| len as f64 / 1e6 / d.as_secs_f64();
        println!(
            "{:>5} {:>5} {:>5} | {:>6.3} {:>6.3} | {:>6.3} {:>6.3} {:>5.2} {:>5.2} {:>5.2} {:>5.2} {:>6.3} {:>6.3} | {:>5.2} {:>5.2} {:>5.2} | {:>6.0} {:>6.0}{}",
            variant.level.map_or("flat".to_string(), |level| level.to_string()),
            format!("{}K", variant.min >> 10),
            format!("{}K", variant.avg >> 10),
            chunk / MIB,
            biased / MIB,
            over / MIB,
            sd / MIB,
            quantile(&tally.overwrite, 0.1) / MIB,
            quantile(&tally.overwrite, 0.5) / MIB,
            quantile(&tally.overwrite, 0.9) / MIB,
            quantile(&tally.overwrite, 1.0) / MIB,
            floor / MIB,
            over / floor,
            mean(&tally.insert) / MIB,
            quantile(&tally.insert, 0.9) / MIB,
            mean(&tally.insert_floor) / MIB,
            rate(tally.best_scan.expect("scanned")),
            rate(scans[scans.len() / 2]),
            if tally.unsynced > 0 { format!("  ({} never resynchronised)", tally.unsynced) } else { String::new() },
        );
    }
    println!(
        "columns: level = normalisation level, or flat; avg = the size that sets the masks (flat: the mean chunk); chunk = mean chunk; E[S²]/ = size-biased mean chunk E[S²]/E[S]; overw = mean re-stored after the 1 MiB overwrite, its sd and quantiles; \
         floor = mean of the old chunks the overwrite touched (≈ 1 MiB + E[S²]/E[S]); /floor = overw / floor; \
         ins = mean re-stored after the 100-byte insertion at the start, p90, floor = first old chunk + 100; MB/s = scan throughput, best and median of the keys"
    );
}
