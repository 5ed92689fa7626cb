//! FastCDC (2020: gear hash, cut-point skipping, optionally normalised chunking) with a gear
//! table drawn entirely from the repository's gear key. The `fastcdc` crate keys its public table
//! only by XOR-ing one 64-bit seed into every entry (docs/store-format.md §5 says why that is not
//! enough).
//!
//! Two rules decide where a chunk ends (docs/store-format.md §5): the **flat** one (chunker kind
//! 3, the default of format versions 2 and 3) cuts at the first position past `min` whose hash is
//! below one threshold, so the cut points are the same whatever byte a chunk started at, save for
//! the `min` skipped; the **normalised** one (kind 1, level 2) asks for a rarer hash before `avg`
//! and a commoner one after, which evens chunk sizes but makes a chunk that starts at a new place
//! (after an edit) often miss the old cut points for several chunks (docs/benchmarks/journal.md, "Chunker
//! resynchronisation").

use super::bounds;

/// A keyed FastCDC chunker.
#[derive(Clone)]
pub struct FastCdc {
    gear: [u64; 256],
    min: usize,
    /// Where the small-chunk limit gives way to the large-chunk one.
    normal: usize,
    max: usize,
    /// A boundary before `normal` is a hash at most this.
    limit_small: u64,
    /// A boundary from `normal` on is a hash at most this.
    limit_large: u64,
}

/// The largest hash with its `bits` most significant bits clear: a gear hash's high bits depend
/// on its last 64 bytes, its low bits only on the last few.
fn clear_top_bits(bits: u32) -> u64 {
    u64::MAX.checked_shr(bits.min(64)).unwrap_or(0)
}

pub(super) fn gear_table(gear_key: &[u8; 32]) -> [u64; 256] {
    let mut table = [0u8; 2048];
    blake3::Hasher::new_keyed(gear_key).finalize_xof().fill(&mut table);
    let mut gear = [0u64; 256];
    for (entry, bytes) in gear.iter_mut().zip(table.chunks_exact(8)) {
        *entry = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    }
    gear
}

impl FastCdc {
    /// The flat rule (chunker kind 3) with sizes `min < avg < max`: a boundary is a hash below
    /// `2^64 / (avg - min)`, so a chunk is `min` plus a geometric run averaging `avg - min`
    /// (less the few cut at `max`).
    pub fn flat(gear_key: &[u8; 32], min: u32, avg: u32, max: u32) -> Self {
        let spread = u128::from(avg.saturating_sub(min).max(1));
        let limit = u64::try_from(((1u128 << 64) / spread) - 1).unwrap_or(u64::MAX);
        FastCdc {
            gear: gear_table(gear_key),
            min: min as usize,
            normal: min as usize,
            max: max as usize,
            limit_small: limit,
            limit_large: limit,
        }
    }

    /// The normalised rule with sizes `min < avg < max` (avg a power of two; the config checks)
    /// and normalisation `level`: before `avg` a boundary needs `log2(avg) + level` zero high
    /// bits, from `avg` on `log2(avg) - level`. Chunker kind 1 is level 2; the other levels are
    /// for measuring (examples/chunker_resync.rs).
    pub fn normalised(gear_key: &[u8; 32], min: u32, avg: u32, max: u32, level: u32) -> Self {
        let bits = avg.max(1).ilog2();
        FastCdc {
            gear: gear_table(gear_key),
            min: min as usize,
            normal: avg as usize,
            max: max as usize,
            limit_small: clear_top_bits(bits + level),
            limit_large: clear_top_bits(bits.saturating_sub(level)),
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

    /// The cut point of `data` if its bytes decide it: a boundary found in them stands whatever
    /// follows (the hash at a position depends on no later byte), but none found in fewer than
    /// `max` bytes says nothing yet.
    pub fn cut_if_decided(&self, data: &[u8]) -> Option<usize> {
        bounds::cut_if_decided(data, self.min, self.max, |data| self.find(data))
    }

    /// The first boundary in `data` (below `max`), if any.
    fn find(&self, data: &[u8]) -> Option<usize> {
        let n = data.len();
        let normal = self.normal.min(n);
        let end = self.max.min(n);
        let mut hash = 0u64;
        let small_from = self.min.min(normal);
        if let Some(at) = scan(&self.gear, &data[small_from..normal], &mut hash, self.limit_small) {
            return Some(small_from + at + 1);
        }
        let large_from = normal.max(self.min).min(end);
        scan(&self.gear, &data[large_from..end], &mut hash, self.limit_large)
            .map(|at| large_from + at + 1)
    }
}

/// The first position in `bytes` where the gear hash, rolled on from `*hash`, is at most
/// `limit`; `*hash` is left at the hash there (with none, after the last byte), so that a caller
/// can roll on past it.
///
/// Each step's hash is the previous one shifted by one plus a table entry, a chain of dependent
/// operations that one byte at a time bounds the loop at their latency. Four steps at once give
/// the same hashes: `h(i+k) = h(i) << k + (sum of the next k entries, each shifted by the steps
/// after it)`, where the sums do not depend on `h(i)`, so the chain from one group to the next
/// is one shift and one add and the rest runs in parallel (docs/benchmarks/journal.md, "Second
/// write (issue 24)", has the gain over the byte loop).
#[inline(always)]
pub(super) fn scan(gear: &[u64; 256], bytes: &[u8], hash: &mut u64, limit: u64) -> Option<usize> {
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
        // One branch per group in the common case: none of the four is a boundary.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunker::test_support::{lengths, noise};

    fn chunks(cdc: &FastCdc, data: &[u8]) -> Vec<usize> {
        lengths(data, |rest| cdc.cut(rest))
    }

    fn both(key: u8, min: u32, avg: u32, max: u32) -> [FastCdc; 2] {
        [
            FastCdc::flat(&[key; 32], min, avg, max),
            FastCdc::normalised(&[key; 32], min, avg, max, 2),
        ]
    }

    #[test]
    fn chunks_respect_the_bounds_and_average_near_avg() {
        for cdc in both(1, 1024, 4096, 16384) {
            let data = noise(4 << 20, 1);
            let sizes = chunks(&cdc, &data);
            assert_eq!(sizes.iter().sum::<usize>(), data.len());
            assert!(sizes[..sizes.len() - 1].iter().all(|&s| (1024..=16384).contains(&s)));
            let mean = data.len() / sizes.len();
            assert!((3000..7000).contains(&mean), "mean chunk {mean}");
        }
        // The flat rule's avg is the mean whatever min is, not only a power of two.
        let cdc = FastCdc::flat(&[1; 32], 1000, 3000, 30000);
        let sizes = chunks(&cdc, &noise(4 << 20, 5));
        let mean = (4 << 20) / sizes.len();
        assert!((2800..3200).contains(&mean), "mean chunk {mean}");
    }

    #[test]
    fn an_insertion_changes_only_the_chunks_around_it() {
        for cdc in both(2, 1024, 4096, 16384) {
            let data = noise(1 << 20, 2);
            let mut edited = b"a hundred bytes or so inserted at the very start ".repeat(2);
            edited.extend_from_slice(&data);
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
            let (before, after) = (ids(&data), ids(&edited));
            assert!(after.difference(&before).count() <= 2, "resynchronises within two chunks");
        }
    }

    /// The spec's rule (docs/store-format.md §5), one byte at a time: a boundary past `min` is
    /// a hash at most `small` before `normal`, at most `large` from there.
    fn reference_cut(
        cdc: &FastCdc,
        data: &[u8],
        normal: usize,
        small: impl Fn(u64) -> bool,
        large: impl Fn(u64) -> bool,
    ) -> usize {
        let n = data.len();
        if n <= cdc.min {
            return n;
        }
        let mut hash = 0u64;
        for (i, &byte) in data.iter().enumerate().take(cdc.max).skip(cdc.min) {
            hash = (hash << 1).wrapping_add(cdc.gear[usize::from(byte)]);
            if if i < normal { small(hash) } else { large(hash) } {
                return i + 1;
            }
        }
        cdc.max.min(n)
    }

    /// `bits` most significant bits set.
    fn top_bits(bits: u32) -> u64 {
        if bits == 0 {
            0
        } else {
            u64::MAX << (64 - bits.min(64))
        }
    }

    #[test]
    fn cuts_equal_the_byte_at_a_time_definitions() {
        let data = noise(1 << 16, 4);
        // Sizes that are not multiples of four, and a min above avg's normal region.
        for (min, avg, max) in [
            (64u32, 256u32, 1024u32),
            (61, 128, 1031),
            (255, 256, 4099),
            (0, 1, 16),
            (100, 700, 3000),
        ] {
            let key = [min as u8; 32];
            let bits = avg.max(1).ilog2();
            let (small, large) = (top_bits(bits + 2), top_bits(bits.saturating_sub(2)));
            let normalised = FastCdc::normalised(&key, min, avg, max, 2);
            let flat = FastCdc::flat(&key, min, avg, max);
            let threshold = (1u128 << 64) / u128::from(avg.saturating_sub(min).max(1));
            let below = |h: u64| u128::from(h) < threshold;
            for start in (0..6000).step_by(7) {
                for len in [0, 1, 3, 60, 61, 64, 65, 127, 256, 257, 700, 1024, 1025, 1031, 5000] {
                    let slice = &data[start..start + len];
                    let want = reference_cut(
                        &normalised,
                        slice,
                        avg as usize,
                        |h| h & small == 0,
                        |h| h & large == 0,
                    );
                    assert_eq!(
                        normalised.cut(slice),
                        want,
                        "normalised {min}/{avg}/{max}: {len} bytes from {start}"
                    );
                    let want = reference_cut(&flat, slice, 0, below, below);
                    assert_eq!(
                        flat.cut(slice),
                        want,
                        "flat {min}/{avg}/{max}: {len} bytes from {start}"
                    );
                }
            }
        }
    }

    /// Repositories created with a kind must cut exactly where they always did, or every
    /// backup into them re-stores what they hold: these are the cut points of fixed data under
    /// a fixed key, recorded when each kind was introduced.
    #[test]
    fn cut_points_are_pinned_per_kind() {
        let data = noise(1 << 18, 11);
        let normalised = FastCdc::normalised(&[3; 32], 4096, 16384, 65536, 2);
        assert_eq!(chunks(&normalised, &data), PINNED_NORMALISED);
        let flat = FastCdc::flat(&[3; 32], 4096, 16384, 65536);
        assert_eq!(chunks(&flat, &data), PINNED_FLAT);
    }

    /// Measured with the code before the flat kind existed (commit afe9754).
    const PINNED_NORMALISED: [usize; 13] =
        [22177, 18592, 27140, 16502, 23252, 20393, 17306, 16934, 29834, 26685, 18066, 18098, 7165];
    /// Measured when the flat kind was introduced.
    const PINNED_FLAT: [usize; 19] = [
        8165, 14012, 22971, 29951, 36860, 4820, 19836, 10979, 14702, 4521, 9814, 15499, 4135,
        24743, 4607, 4305, 8167, 16892, 7165,
    ];

    #[test]
    fn the_key_changes_the_boundaries() {
        let data = noise(1 << 20, 3);
        for [a, b] in [
            [
                FastCdc::flat(&[1; 32], 1024, 4096, 16384),
                FastCdc::flat(&[9; 32], 1024, 4096, 16384),
            ],
            [
                FastCdc::normalised(&[1; 32], 1024, 4096, 16384, 2),
                FastCdc::normalised(&[9; 32], 1024, 4096, 16384, 2),
            ],
        ] {
            assert_ne!(chunks(&a, &data), chunks(&b, &data));
        }
    }
}
