//! FastCDC whose cut points a keyed PRF places (chunker kind 4, format version 4;
//! docs/store-format.md §5). The keyed gear hash only picks *anchors*, windows of 64 bytes whose
//! hash has its top bits clear (one position in 1024 for the default sizes, one in 64 to 1024
//! in general, at most one in `(avg - min) / 512` where that is at least 64); at each anchor,
//! keyed BLAKE3 of the
//! window gives an offset, and the chunk ends that many bytes past the anchor unless another
//! anchor comes first. The offset is uniform over `avg - min` values whatever the anchors are,
//! so every position is a cut with the same probability and where the anchors fall does not show
//! in the chunk sizes: the cut points of known data cannot be predicted without the PRF key,
//! and they say nothing usable about the gear key (the 2025 attacks on content-defined chunking
//! recover keys from cut points that the hash's bits decide directly).
//!
//! The PRF is evaluated only at anchors, so it costs one keyed BLAKE3 of 64 bytes per anchor
//! scanned past `min` (a small cost per byte at the default sizes), on top of the gear hash's
//! scan (docs/benchmarks/journal.md, "Chunk and pack sizes hidden (issue 40)").

use super::bounds;
use super::fastcdc::{gear_table, scan};

/// Bytes of the window an anchor's hash covers and its PRF reads.
pub const WINDOW: usize = 64;

/// The key-derivation context of the cut key (BLAKE3 `derive_key` over the gear key).
const CUT_KEY_CONTEXT: &str = "dedup store v4 chunker cut offsets";

/// The most top bits of the gear hash an anchor needs clear: one position in 1024. Fewer for
/// small chunks, so that anchors stay at least 512 times as frequent as cuts...
pub const MAX_ANCHOR_BITS: u32 = 10;
/// ... but never more than one position in 64: the PRF at every anchor then stays a small part
/// of the scan's cost, where at every position it would dominate it.
pub const MIN_ANCHOR_BITS: u32 = 6;

/// The top bits of the gear hash clear at an anchor for `avg - min` offsets (`spread`):
/// `floor(log2(spread)) - 9`, within [`MIN_ANCHOR_BITS`] ..= [`MAX_ANCHOR_BITS`].
pub fn anchor_bits(spread: u32) -> u32 {
    spread.max(1).ilog2().saturating_sub(9).clamp(MIN_ANCHOR_BITS, MAX_ANCHOR_BITS)
}

/// A keyed FastCDC chunker with PRF-placed cuts.
#[derive(Clone)]
pub struct PrfCut {
    gear: [u64; 256],
    cut_key: [u8; 32],
    min: usize,
    max: usize,
    /// The number of offsets, `avg - min`.
    spread: u64,
    /// A window is an anchor when its gear hash is at most this.
    anchor_limit: u64,
}

impl PrfCut {
    /// Kind 4 with sizes `min < avg < max` (`min >= 64`; the config checks).
    pub fn new(gear_key: &[u8; 32], min: u32, avg: u32, max: u32) -> Self {
        let bits = anchor_bits(avg.saturating_sub(min));
        Self::with_anchor_bits(gear_key, min, avg, max, bits)
    }

    /// The same rule with anchors at one position in `2^anchor_bits`, for measuring the cost of
    /// the PRF against how far back a cut decision reaches (examples/chunker_speed.rs).
    pub fn with_anchor_bits(
        gear_key: &[u8; 32],
        min: u32,
        avg: u32,
        max: u32,
        anchor_bits: u32,
    ) -> Self {
        PrfCut {
            gear: gear_table(gear_key),
            cut_key: blake3::derive_key(CUT_KEY_CONTEXT, gear_key),
            min: (min as usize).max(WINDOW - 1),
            max: max as usize,
            spread: u64::from(avg.saturating_sub(min).max(1)),
            anchor_limit: u64::MAX >> anchor_bits.min(63),
        }
    }

    /// The largest chunk.
    pub fn max_size(&self) -> usize {
        self.max
    }

    /// The cut point of `data` (at least `max` bytes, or the rest of the stream).
    pub fn cut(&self, data: &[u8]) -> usize {
        bounds::cut(data, self.min, self.max, |data| self.find(data))
    }

    /// The cut point of `data` if its bytes decide it: a cut found stands whatever follows (it
    /// depends on no later byte), but none found in fewer than `max` bytes says nothing yet.
    pub fn cut_if_decided(&self, data: &[u8]) -> Option<usize> {
        bounds::cut_if_decided(data, self.min, self.max, |data| self.find(data))
    }

    /// The offset of the cut after the anchor whose window is `window`: the PRF's first 8 bytes
    /// as a fraction of 2^64, times the number of offsets.
    fn offset(&self, window: &[u8]) -> usize {
        let prf = blake3::keyed_hash(&self.cut_key, window);
        let bytes: [u8; 8] = prf.as_bytes()[..8].try_into().expect("8 bytes");
        let offset = (u128::from(u64::from_le_bytes(bytes)) * u128::from(self.spread)) >> 64;
        usize::try_from(offset).unwrap_or(usize::MAX)
    }

    /// The first cut in `data` (below `max`), if its bytes decide one.
    fn find(&self, data: &[u8]) -> Option<usize> {
        let end = self.max.min(data.len());
        // The hash at a position covers the 64 bytes ending there: roll in the 63 before `min`.
        let mut hash = 0u64;
        for &byte in &data[self.min + 1 - WINDOW..self.min] {
            hash = (hash << 1).wrapping_add(self.gear[usize::from(byte)]);
        }
        let mut pos = self.min;
        // The last byte of the chunk the latest anchor asks for.
        let mut target: Option<usize> = None;
        loop {
            let stop = target.map_or(end, |t| t.saturating_add(1).min(end));
            match scan(&self.gear, &data[pos..stop.max(pos)], &mut hash, self.anchor_limit) {
                Some(at) => {
                    let anchor = pos + at;
                    let offset = self.offset(&data[anchor + 1 - WINDOW..=anchor]);
                    target = Some(anchor.saturating_add(offset));
                    pos = anchor + 1;
                }
                None => return target.filter(|&t| t < end).map(|t| t + 1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunker::test_support::{lengths, noise};

    fn chunks(cdc: &PrfCut, data: &[u8]) -> Vec<usize> {
        lengths(data, |rest| cdc.cut(rest))
    }

    /// The spec's rule (docs/store-format.md §5), one position at a time, from its definitions:
    /// the gear hash of each whole window, and the PRF through the `blake3` API directly.
    fn reference_cut(
        gear_key: &[u8; 32],
        data: &[u8],
        min: usize,
        avg: usize,
        max: usize,
    ) -> usize {
        let n = data.len();
        if n <= min {
            return n;
        }
        let gear = gear_table(gear_key);
        let cut_key = blake3::derive_key("dedup store v4 chunker cut offsets", gear_key);
        let end = max.min(n);
        let bits = ((avg - min) as u32).ilog2().saturating_sub(9).clamp(6, 10);
        let mut target = None;
        for i in min..end {
            let window = &data[i + 1 - 64..=i];
            let hash =
                window.iter().fold(0u64, |h, &b| (h << 1).wrapping_add(gear[usize::from(b)]));
            if hash.checked_shr(64 - bits).unwrap_or(0) == 0 {
                let prf = blake3::keyed_hash(&cut_key, window);
                let u = u64::from_le_bytes(prf.as_bytes()[..8].try_into().unwrap());
                let offset = ((u128::from(u) * (avg - min) as u128) >> 64) as usize;
                target = Some(i + offset);
            }
            if target == Some(i) {
                return i + 1;
            }
        }
        end
    }

    #[test]
    fn cuts_equal_the_position_at_a_time_definition() {
        let data = noise(1 << 16, 4);
        assert_eq!(
            [anchor_bits(1), anchor_bits(32767), anchor_bits(65536), anchor_bits(262_143)],
            [6, 6, 7, 8]
        );
        assert_eq!([anchor_bits(512 << 10), anchor_bits(u32::MAX)], [10, 10]);
        // Anchors one position in 64 (small spreads), 128 and 1024.
        for (min, avg, max) in [
            (64u32, 300u32, 1024u32),
            (64, 65, 200),
            (100, 2000, 3001),
            (513, 700, 5000),
            (1000, 70_000, 200_000),
            (1000, 600_000, 1 << 20),
        ] {
            let key = [min as u8; 32];
            let cdc = PrfCut::new(&key, min, avg, max);
            // The reference hashes each window whole: fewer starts for the longest chunks.
            for start in (0..8000).step_by(if avg > 50_000 { 1999 } else { 13 }) {
                for len in
                    [0, 1, 63, 64, 65, 100, 200, 513, 514, 1024, 1025, 3001, 5000, 9000, 50_000]
                {
                    let slice = &data[start..start + len];
                    let want = reference_cut(&key, slice, min as usize, avg as usize, max as usize);
                    assert_eq!(cdc.cut(slice), want, "{min}/{avg}/{max}: {len} bytes from {start}");
                    // A cut found in fewer than max bytes stands whatever follows.
                    if let Some(cut) = cdc.cut_if_decided(slice) {
                        assert_eq!(cut, want, "decided early: {len} bytes from {start}");
                    }
                }
            }
        }
    }

    /// Data with little entropy, where anchors come in runs or not at all: a small alphabet,
    /// lines of text that repeat with a slow drift, and zeros with a rare byte.
    fn low_entropy(len: usize, seed: u8) -> [Vec<u8>; 3] {
        let random = noise(len, seed);
        let alphabet = random.iter().map(|&b| b"acgt"[usize::from(b & 3)]).collect();
        let line = b"the quick brown fox jumps over the lazy dog, again ";
        let lines = (0..len).map(|i| line[i % line.len()] ^ (i / 977) as u8).collect();
        let sparse = random.iter().map(|&b| if b == 7 { 0xff } else { 0 }).collect();
        [alphabet, lines, sparse]
    }

    #[test]
    fn cuts_of_low_entropy_data_equal_the_definition_at_every_split() {
        for (min, avg, max) in [(64u32, 300u32, 1024u32), (513, 700, 5000), (1000, 3000, 20_000)] {
            let key = [min as u8 ^ 0x5a; 32];
            let cdc = PrfCut::new(&key, min, avg, max);
            let (min, avg, max) = (min as usize, avg as usize, max as usize);
            for data in low_entropy(60_000, min as u8) {
                // Whole, chunk after chunk, and a buffer ending anywhere (what it decides).
                let whole = lengths(&data, |rest| reference_cut(&key, rest, min, avg, max));
                assert_eq!(chunks(&cdc, &data), whole, "{min}/{avg}/{max}");
                for start in [0, 4321] {
                    for split in [start, start + 64, start + 1000, start + 4999, start + 30_001] {
                        let buffer = &data[start..split];
                        let want = reference_cut(&key, buffer, min, avg, max);
                        let decided = cdc.cut_if_decided(buffer);
                        assert!(decided.is_none_or(|cut| cut == want), "{start}..{split}");
                        // Undecided only where the definition found no cut before the end.
                        assert!(
                            decided.is_some() || want == buffer.len(),
                            "{start}..{split}: undecided, but the definition cuts at {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn chunks_respect_the_bounds_and_average_near_avg() {
        let data = noise(8 << 20, 1);
        for (min, avg, max) in [(16 << 10, 64 << 10, 256 << 10), (4096, 20000, 100_000)] {
            let cdc = PrfCut::new(&[1; 32], min, avg, max);
            let sizes = chunks(&cdc, &data);
            assert_eq!(sizes.iter().sum::<usize>(), data.len());
            let bounded = &sizes[..sizes.len() - 1];
            assert!(bounded.iter().all(|&s| s > min as usize && s <= max as usize));
            // The mean is avg plus the wait for the first anchor past min, less the few chunks
            // cut at max; over this many chunks within a few per cent.
            let mean = data.len() as f64 / sizes.len() as f64;
            let expected = f64::from(avg) + f64::from(1u32 << anchor_bits(avg - min));
            assert!((mean / expected - 1.0).abs() < 0.08, "{min}/{avg}/{max}: mean {mean}");
        }
    }

    #[test]
    fn chunk_sizes_past_min_are_spread_as_a_memoryless_rule_spreads_them() {
        // Past min, every position is a cut with probability 1/(avg - min): the sizes less min
        // are geometric, so their median is about ln 2 of their mean, and a quarter of them
        // lie past ln 4 times it.
        let (min, avg, max) = (2048u32, 10_240u32, 1 << 20);
        let cdc = PrfCut::new(&[5; 32], min, avg, max);
        let mut sizes = chunks(&cdc, &noise(16 << 20, 5));
        sizes.pop();
        let mut sizes: Vec<f64> = sizes.iter().map(|&s| (s - min as usize) as f64).collect();
        sizes.sort_by(f64::total_cmp);
        let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
        let median = sizes[sizes.len() / 2];
        let upper = sizes[sizes.len() * 3 / 4];
        assert!(
            (median / mean - std::f64::consts::LN_2).abs() < 0.06,
            "median {median}, mean {mean}"
        );
        assert!((upper / mean - 4f64.ln()).abs() < 0.1, "upper quartile {upper}, mean {mean}");
    }

    #[test]
    fn an_insertion_changes_only_the_chunks_around_it() {
        let cdc = PrfCut::new(&[2; 32], 1024, 4096, 16384);
        let data = noise(1 << 20, 2);
        let ids = |d: &[u8]| {
            let mut pos = 0;
            chunks(&cdc, d)
                .into_iter()
                .map(|len| {
                    pos += len;
                    blake3::hash(&d[pos - len..pos])
                })
                .collect::<std::collections::HashSet<_>>()
        };
        let before = ids(&data);
        for at in [0, 1000, 300_000, 700_001] {
            let mut edited = data[..at].to_vec();
            edited.extend_from_slice(b"a hundred bytes or so inserted into the data, twice over: ");
            edited.extend_from_slice(&data[at..]);
            let after = ids(&edited);
            assert!(after.difference(&before).count() <= 3, "resynchronises after {at}");
        }
    }

    #[test]
    fn one_key_cuts_the_same_way_every_time_and_another_key_elsewhere() {
        let data = noise(1 << 20, 3);
        let one = chunks(&PrfCut::new(&[1; 32], 1024, 4096, 16384), &data);
        assert_eq!(one, chunks(&PrfCut::new(&[1; 32], 1024, 4096, 16384), &data));
        let other = chunks(&PrfCut::new(&[9; 32], 1024, 4096, 16384), &data);
        assert_ne!(one, other);
        // Not merely shifted: few cut points in common (by chance about one in a thousand).
        let points = |sizes: &[usize]| {
            sizes
                .iter()
                .scan(0, |at, s| {
                    *at += s;
                    Some(*at)
                })
                .collect::<std::collections::HashSet<_>>()
        };
        let common = points(&one).intersection(&points(&other)).count();
        assert!(common * 20 < one.len(), "{common} of {} cut points shared", one.len());
    }

    #[test]
    fn the_same_gear_key_with_another_cut_key_cuts_elsewhere() {
        // Anchors are the same under one gear key; the offsets come from the cut key alone.
        let data = noise(1 << 20, 6);
        let a = PrfCut::new(&[4; 32], 1024, 4096, 16384);
        let mut b = a.clone();
        b.cut_key = [0xAA; 32];
        assert_ne!(chunks(&a, &data), chunks(&b, &data));
    }

    #[test]
    fn runs_without_an_anchor_are_cut_at_max() {
        let cdc = PrfCut::new(&[8; 32], 256, 1024, 4096);
        let zeros = vec![0u8; 20_000];
        let sizes = chunks(&cdc, &zeros);
        // One window repeated: an anchor everywhere (one offset, hit only at 0) or nowhere.
        assert!(sizes[..sizes.len() - 1].iter().all(|&s| s == 4096 || s == 257), "{sizes:?}");
    }

    /// Repositories created with kind 4 must cut where they always did.
    #[test]
    fn cut_points_are_pinned() {
        let data = noise(1 << 18, 11);
        let cdc = PrfCut::new(&[3; 32], 4096, 16384, 65536);
        assert_eq!(chunks(&cdc, &data), PINNED);
        let data = noise(12 << 20, 12);
        let cdc = PrfCut::new(&[3; 32], 512 << 10, 1 << 20, 8 << 20);
        assert_eq!(chunks(&cdc, &data), PINNED_DEFAULT_SIZES);
    }

    /// Measured when kind 4 was introduced.
    const PINNED: [usize; 19] = [
        9756, 36984, 15597, 11252, 7732, 30124, 7132, 12931, 11629, 11730, 23774, 9440, 6797, 6199,
        26891, 6108, 4455, 14839, 8774,
    ];
    const PINNED_DEFAULT_SIZES: [usize; 13] = [
        1135023, 814283, 1469238, 877850, 1165646, 751417, 944781, 789800, 1815199, 891072, 708156,
        687073, 533374,
    ];
}
