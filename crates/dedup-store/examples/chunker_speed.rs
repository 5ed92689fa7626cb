//! The scan throughput of the chunker kinds on random data (docs/benchmarks/journal.md, "Chunk and pack
//! sizes hidden (issue 40)"): the flat rule (kind 3) and the rule whose cuts a PRF places
//! (kind 4) at several anchor densities, interleaved round by round so that a busy moment of a
//! shared machine lands on all of them; the best and the median round of each.
//!
//! `cargo run --release -p dedup-store --example chunker_speed -- [ROUNDS] [MIB]`

use std::time::{Duration, Instant};

use dedup_store::chunker::{FastCdc, PrfCut};

const MIN: u32 = 512 << 10;
const AVG: u32 = 1 << 20;
const MAX: u32 = 8 << 20;

enum Kind {
    Flat(FastCdc),
    Prf(PrfCut),
}

impl Kind {
    fn cut(&self, data: &[u8]) -> usize {
        match self {
            Kind::Flat(cdc) => cdc.cut(data),
            Kind::Prf(cdc) => cdc.cut(data),
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("a number"));
    let rounds = args.next().unwrap_or(9);
    let len = args.next().unwrap_or(256) << 20;
    let mut data = vec![0u8; len];
    blake3::Hasher::new_derive_key("dedup chunker_speed noise").finalize_xof().fill(&mut data);
    let key = [7u8; 32];
    let mut kinds: Vec<(String, Kind)> =
        vec![("flat (kind 3)".into(), Kind::Flat(FastCdc::flat(&key, MIN, AVG, MAX)))];
    for bits in [6, 8, 10, 12] {
        let name = format!("prf, anchors 1/{}", 1u32 << bits);
        kinds.push((name, Kind::Prf(PrfCut::with_anchor_bits(&key, MIN, AVG, MAX, bits))));
    }
    let mut times: Vec<Vec<Duration>> = kinds.iter().map(|_| Vec::new()).collect();
    let mut chunks = vec![0usize; kinds.len()];
    for _ in 0..rounds {
        for (i, (_, kind)) in kinds.iter().enumerate() {
            let started = Instant::now();
            let mut pos = 0;
            let mut n = 0;
            while pos < data.len() {
                pos += kind.cut(&data[pos..]);
                n += 1;
            }
            times[i].push(started.elapsed());
            chunks[i] = n;
        }
    }
    // The PRF alone: keyed BLAKE3 of one 64-byte window.
    let windows = 1 << 20;
    let started = Instant::now();
    let mut sink = 0u8;
    for i in 0..windows {
        let at = (i * 64) % (len - 64);
        sink ^= blake3::keyed_hash(&key, &data[at..at + 64]).as_bytes()[0];
    }
    let per_prf = started.elapsed().as_nanos() as f64 / windows as f64;
    println!(
        "{rounds} rounds over {} MiB of random data, sizes {}K/{}K/{}K",
        len >> 20,
        MIN >> 10,
        AVG >> 10,
        MAX >> 10
    );
    println!("{:<22} {:>8} {:>8} {:>10}", "kind", "best", "median", "mean chunk");
    let rate = |d: Duration| len as f64 / 1e6 / d.as_secs_f64();
    for ((name, _), (times, chunks)) in kinds.iter().zip(times.iter_mut().zip(&chunks)) {
        times.sort();
        println!(
            "{:<22} {:>6.0} MB/s {:>6.0} MB/s {:>8.0} KiB",
            name,
            rate(times[0]),
            rate(times[times.len() / 2]),
            len as f64 / *chunks as f64 / 1024.0
        );
    }
    println!("keyed BLAKE3 of a 64-byte window: {per_prf:.0} ns ({sink})");
}
