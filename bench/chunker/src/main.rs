//! Prints MB/s (of the thread's CPU time, which a loaded machine disturbs far less than wall
//! time) of finding every anchor (gear hash at most 2^54, one position in 1024, as the PRF-cut
//! chunker does at its default sizes) in 64 MiB of random bytes: with the rolling scan that
//! dedup-store uses (crates/dedup-store/src/chunker/fastcdc.rs, `scan`: one hash, four
//! positions a step, stopping at each anchor), the same with a branch per position, eight
//! positions a step, and a block scan in two and four independent lanes (a window's hash depends
//! on its 64 bytes alone, so a lane starts anywhere after rolling in the 63 before it). All
//! must find the same anchors. Then the bytes stored and MB/s of zstd level 3 over 1 MiB chunks
//! tried whole (compress.rs) against a level-1 probe of the first 64 KiB of each larger chunk
//! that skips the chunks it does not shrink by 3 %: on random bytes, on generated text, and on
//! the files under DIR if given. Each scan figure is the median of seven rounds, the kinds
//! taking turns; each zstd figure the least of three.
//!
//! `cargo run --release -- [DIR]` (e.g. /usr/share/doc)

/// The CPU time of this thread: on a shared, loaded machine it counts only the time the scan
/// ran, not the time it waited for a core.
fn thread_cpu_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for clock_gettime to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime");
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

const WINDOW: usize = 64;
const BLOCK: usize = 16 << 10;
const LIMIT: u64 = u64::MAX >> 10;

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The rolling scan (crates/dedup-store/src/chunker/fastcdc.rs, `scan`).
fn scan(gear: &[u64; 256], bytes: &[u8], hash: &mut u64, limit: u64) -> Option<usize> {
    let entry = |byte: u8| gear[usize::from(byte)];
    let mut h = *hash;
    let mut quads = bytes.chunks_exact(4);
    let mut at = 0;
    for quad in &mut quads {
        let (g0, g1, g2, g3) = (entry(quad[0]), entry(quad[1]), entry(quad[2]), entry(quad[3]));
        let s1 = (g0 << 1).wrapping_add(g1);
        let s2 = (s1 << 1).wrapping_add(g2);
        let s3 = (s2 << 1).wrapping_add(g3);
        let h0 = (h << 1).wrapping_add(g0);
        let h1 = (h << 2).wrapping_add(s1);
        let h2 = (h << 3).wrapping_add(s2);
        let h3 = (h << 4).wrapping_add(s3);
        if (h0 <= limit) | (h1 <= limit) | (h2 <= limit) | (h3 <= limit) {
            let hashes = [h0, h1, h2, h3];
            let first = hashes.iter().position(|&h| h <= limit).expect("one is at most limit");
            *hash = hashes[first];
            return Some(at + first);
        }
        h = h3;
        at += 4;
    }
    for &byte in quads.remainder() {
        h = (h << 1).wrapping_add(entry(byte));
        if h <= limit {
            *hash = h;
            return Some(at);
        }
        at += 1;
    }
    *hash = h;
    None
}

/// The rolling scan with one branch per position rather than the four tests combined.
fn scan_branchy(gear: &[u64; 256], bytes: &[u8], hash: &mut u64, limit: u64) -> Option<usize> {
    let entry = |byte: u8| gear[usize::from(byte)];
    let mut h = *hash;
    let mut quads = bytes.chunks_exact(4);
    let mut at = 0;
    for quad in &mut quads {
        let (g0, g1, g2, g3) = (entry(quad[0]), entry(quad[1]), entry(quad[2]), entry(quad[3]));
        let s1 = (g0 << 1).wrapping_add(g1);
        let s2 = (s1 << 1).wrapping_add(g2);
        let s3 = (s2 << 1).wrapping_add(g3);
        let hs = [
            (h << 1).wrapping_add(g0),
            (h << 2).wrapping_add(s1),
            (h << 3).wrapping_add(s2),
            (h << 4).wrapping_add(s3),
        ];
        for (k, &v) in hs.iter().enumerate() {
            if v <= limit {
                *hash = v;
                return Some(at + k);
            }
        }
        h = hs[3];
        at += 4;
    }
    for &byte in quads.remainder() {
        h = (h << 1).wrapping_add(entry(byte));
        if h <= limit {
            *hash = h;
            return Some(at);
        }
        at += 1;
    }
    *hash = h;
    None
}

/// The rolling scan, eight positions a step.
fn scan8(gear: &[u64; 256], bytes: &[u8], hash: &mut u64, limit: u64) -> Option<usize> {
    let entry = |byte: u8| gear[usize::from(byte)];
    let mut h = *hash;
    let mut steps = bytes.chunks_exact(8);
    let mut at = 0;
    for step in &mut steps {
        let g: [u64; 8] = std::array::from_fn(|k| entry(step[k]));
        let mut s = [0u64; 8];
        s[0] = g[0];
        for k in 1..8 {
            s[k] = (s[k - 1] << 1).wrapping_add(g[k]);
        }
        let hs: [u64; 8] = std::array::from_fn(|k| (h << (k + 1)).wrapping_add(s[k]));
        if hs.iter().fold(false, |any, &v| any | (v <= limit)) {
            let first = hs.iter().position(|&v| v <= limit).expect("one is at most limit");
            *hash = hs[first];
            return Some(at + first);
        }
        h = hs[7];
        at += 8;
    }
    for &byte in steps.remainder() {
        h = (h << 1).wrapping_add(entry(byte));
        if h <= limit {
            *hash = h;
            return Some(at);
        }
        at += 1;
    }
    *hash = h;
    None
}

fn rolling8_anchors(gear: &[u64; 256], data: &[u8], out: &mut Vec<usize>) {
    let mut hash = warm(gear, data, WINDOW - 1);
    let mut pos = WINDOW - 1;
    while let Some(at) = scan8(gear, &data[pos..], &mut hash, LIMIT) {
        out.push(pos + at);
        pos += at + 1;
    }
}

fn branchy_anchors(gear: &[u64; 256], data: &[u8], out: &mut Vec<usize>) {
    let mut hash = warm(gear, data, WINDOW - 1);
    let mut pos = WINDOW - 1;
    while let Some(at) = scan_branchy(gear, &data[pos..], &mut hash, LIMIT) {
        out.push(pos + at);
        pos += at + 1;
    }
}

fn rolling_anchors(gear: &[u64; 256], data: &[u8], out: &mut Vec<usize>) {
    let mut hash = warm(gear, data, WINDOW - 1);
    let mut pos = WINDOW - 1;
    while let Some(at) = scan(gear, &data[pos..], &mut hash, LIMIT) {
        out.push(pos + at);
        pos += at + 1;
    }
}

fn warm(gear: &[u64; 256], data: &[u8], at: usize) -> u64 {
    data[at + 1 - WINDOW..at].iter().fold(0, |h, &b| (h << 1).wrapping_add(gear[usize::from(b)]))
}

/// The block scan (crates/dedup-store/src/chunker/anchors.rs, `find_anchors`) with `LANES`.
fn find_anchors<const LANES: usize>(
    gear: &[u64; 256],
    data: &[u8],
    from: usize,
    to: usize,
    limit: u64,
    anchors: &mut Vec<usize>,
) {
    if from >= to {
        return;
    }
    let lane_len = (to - from) / LANES;
    let starts: [usize; LANES] = std::array::from_fn(|lane| from + lane * lane_len);
    let mut hashes = starts.map(|start| warm(gear, data, start));
    let mut later: [Vec<usize>; LANES] = std::array::from_fn(|_| Vec::new());
    let lanes: [&[u8]; LANES] = std::array::from_fn(|lane| &data[starts[lane]..][..lane_len]);
    for i in 0..lane_len {
        for lane in 0..LANES {
            let h = (hashes[lane] << 1).wrapping_add(gear[usize::from(lanes[lane][i])]);
            hashes[lane] = h;
            if h <= limit {
                if lane == 0 {
                    anchors.push(starts[0] + i);
                } else {
                    later[lane].push(starts[lane] + i);
                }
            }
        }
    }
    for found in &later[1..] {
        anchors.extend_from_slice(found);
    }
    let mut h = hashes[LANES - 1];
    for (at, &byte) in data.iter().enumerate().take(to).skip(from + LANES * lane_len) {
        h = (h << 1).wrapping_add(gear[usize::from(byte)]);
        if h <= limit {
            anchors.push(at);
        }
    }
}

fn by_block(
    gear: &[u64; 256],
    data: &[u8],
    out: &mut Vec<usize>,
    f: fn(&[u64; 256], &[u8], usize, usize, u64, &mut Vec<usize>),
) {
    let mut from = WINDOW - 1;
    while from < data.len() {
        let to = (from + BLOCK).min(data.len());
        f(gear, data, from, to, LIMIT, out);
        from = to;
    }
}

fn block_anchors<const LANES: usize>(gear: &[u64; 256], data: &[u8], out: &mut Vec<usize>) {
    by_block(gear, data, out, find_anchors::<LANES>)
}

/// Median MB/s of seven timings of each of `kinds` over `bytes` bytes, taking turns.
fn rates(bytes: usize, kinds: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut times: Vec<Vec<f64>> = kinds.iter().map(|_| Vec::new()).collect();
    for _ in 0..7 {
        for (kind, times) in kinds.iter_mut().zip(&mut times) {
            let started = thread_cpu_seconds();
            kind();
            times.push(bytes as f64 / 1e6 / (thread_cpu_seconds() - started));
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[3]
        })
        .collect()
}

/// The chunks of a volume file: up to 1 MiB each (the default average).
const CHUNK: usize = 1 << 20;
/// The probe: the first 64 KiB of a larger chunk at level 1 must shrink by 3 %.
const PROBE: usize = 64 << 10;

/// Whether a chunk gets a whole zstd attempt under the probe rule.
fn probe_says_compress(level1: &mut zstd::bulk::Compressor, chunk: &[u8], out: &mut [u8]) -> bool {
    if chunk.len() <= PROBE {
        return true;
    }
    let len = level1.compress_to_buffer(&chunk[..PROBE], &mut out[..]).unwrap();
    len * 100 <= PROBE * 97
}

/// Stored bytes and thread CPU seconds of `chunks` at level 3, each attempted whole (`probe`
/// false) or only when the probe says so; a frame is kept only where it shrinks the chunk.
fn compress_all(chunks: &[&[u8]], probe: bool) -> (usize, f64) {
    let mut level3 = zstd::bulk::Compressor::new(3).unwrap();
    let mut level1 = zstd::bulk::Compressor::new(1).unwrap();
    let mut out = vec![0u8; zstd::zstd_safe::compress_bound(CHUNK)];
    let started = thread_cpu_seconds();
    let mut stored = 0;
    for chunk in chunks {
        let attempt = !probe || probe_says_compress(&mut level1, chunk, &mut out);
        let len = if attempt {
            level3.compress_to_buffer(chunk, &mut out[..]).unwrap()
        } else {
            chunk.len()
        };
        stored += len.min(chunk.len());
    }
    (stored, thread_cpu_seconds() - started)
}

/// The files under `dir` (no symlinks followed), read whole.
fn files(dir: &std::path::Path, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            files(&entry.path(), out);
        } else if kind.is_file() {
            if let Ok(bytes) = std::fs::read(entry.path()) {
                out.push(bytes);
            }
        }
    }
}

fn probe_report(what: &str, chunks: &[&[u8]]) {
    let raw: usize = chunks.iter().map(|c| c.len()).sum();
    // Alternating, three times each; the least CPU of each.
    let mut whole = (0, f64::MAX);
    let mut probed = (0, f64::MAX);
    for _ in 0..3 {
        let w = compress_all(chunks, false);
        let p = compress_all(chunks, true);
        whole = (w.0, whole.1.min(w.1));
        probed = (p.0, probed.1.min(p.1));
    }
    println!(
        "zstd on {what} ({} MiB in {} chunks): whole attempt {:.1} % of the size, {:.0} MB/s; \
         probe first {:.1} % of the size ({:+.2} %), {:.0} MB/s",
        raw >> 20,
        chunks.len(),
        100.0 * whole.0 as f64 / raw as f64,
        raw as f64 / 1e6 / whole.1,
        100.0 * probed.0 as f64 / raw as f64,
        100.0 * (probed.0 as f64 / whole.0 as f64 - 1.0),
        raw as f64 / 1e6 / probed.1,
    );
}

fn main() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let gear: [u64; 256] = std::array::from_fn(|_| next());
    let data: Vec<u8> = (0..64 << 20).map(|_| next() as u8).collect();
    let names = [
        "rolling (dedup's)",
        "rolling, branches",
        "rolling, 8 a step",
        "block, 2 lanes",
        "block, 4 lanes",
    ];
    let mut found: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    let [a, b, c, d, e] = &mut found[..] else { unreachable!() };
    let figures = rates(
        data.len(),
        &mut [
            &mut || {
                a.clear();
                rolling_anchors(&gear, &data, a)
            },
            &mut || {
                b.clear();
                branchy_anchors(&gear, &data, b)
            },
            &mut || {
                c.clear();
                rolling8_anchors(&gear, &data, c)
            },
            &mut || {
                d.clear();
                block_anchors::<2>(&gear, &data, d)
            },
            &mut || {
                e.clear();
                block_anchors::<4>(&gear, &data, e)
            },
        ],
    );
    for other in &found[1..] {
        assert_eq!(other, &found[0], "every scan finds the same anchors");
    }
    println!(
        "anchor scan over {} MiB ({} anchors), MB/s of thread CPU:",
        data.len() >> 20,
        found[0].len()
    );
    for (name, rate) in names.iter().zip(figures) {
        println!("  {name:<18} {rate:>7.0} MB/s");
    }

    let random: Vec<&[u8]> = data[..32 << 20].chunks(CHUNK).collect();
    probe_report("random bytes", &random);
    let text: Vec<u8> = (0u32..)
        .flat_map(|i| format!("line {i} of the text\n").into_bytes())
        .take(32 << 20)
        .collect();
    probe_report("generated text", &text.chunks(CHUNK).collect::<Vec<_>>());
    if let Some(dir) = std::env::args().nth(1) {
        let mut all = Vec::new();
        files(std::path::Path::new(&dir), &mut all);
        let chunks: Vec<&[u8]> =
            all.iter().flat_map(|f| f.chunks(CHUNK)).filter(|c| !c.is_empty()).collect();
        probe_report(&dir, &chunks);
    }
}
