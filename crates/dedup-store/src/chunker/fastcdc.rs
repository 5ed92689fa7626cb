//! FastCDC (2020: normalised chunking, cut-point skipping) with a gear table drawn entirely from
//! the repository's gear key. The `fastcdc` crate keys its public table only by XOR-ing one
//! 64-bit seed into every entry (docs/store-format.md §5 says why that is not enough).

/// A keyed FastCDC chunker.
#[derive(Clone)]
pub struct FastCdc {
    gear: [u64; 256],
    min: usize,
    avg: usize,
    max: usize,
    mask_small: u64,
    mask_large: u64,
}

/// `bits` most significant bits set: a gear hash's high bits depend on its last 64 bytes.
fn top_bits(bits: u32) -> u64 {
    if bits == 0 {
        0
    } else {
        u64::MAX << (64 - bits.min(64))
    }
}

impl FastCdc {
    /// A chunker with sizes `min < avg < max` (avg a power of two; the config checks).
    pub fn new(gear_key: &[u8; 32], min: u32, avg: u32, max: u32) -> Self {
        let mut table = [0u8; 2048];
        blake3::Hasher::new_keyed(gear_key).finalize_xof().fill(&mut table);
        let mut gear = [0u64; 256];
        for (entry, bytes) in gear.iter_mut().zip(table.chunks_exact(8)) {
            *entry = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        }
        let bits = avg.max(1).ilog2();
        FastCdc {
            gear,
            min: min as usize,
            avg: avg as usize,
            max: max as usize,
            mask_small: top_bits(bits + 2),
            mask_large: top_bits(bits.saturating_sub(2)),
        }
    }

    /// The largest chunk.
    pub fn max_size(&self) -> usize {
        self.max
    }

    /// The cut point of `data` (at least `max` bytes, or the rest of the stream).
    pub fn cut(&self, data: &[u8]) -> usize {
        let n = data.len();
        if n <= self.min {
            return n;
        }
        self.find(data).unwrap_or(self.max.min(n))
    }

    /// The cut point of `data` if its bytes decide it: a boundary found in them stands whatever
    /// follows (the hash at a position depends on no later byte), but none found in fewer than
    /// `max` bytes says nothing yet.
    pub fn cut_if_decided(&self, data: &[u8]) -> Option<usize> {
        if data.len() >= self.max {
            return Some(self.cut(data));
        }
        if data.len() <= self.min {
            return None;
        }
        self.find(data)
    }

    /// The first boundary in `data` (below `max`), if any.
    fn find(&self, data: &[u8]) -> Option<usize> {
        let n = data.len();
        let normal = self.avg.min(n);
        let end = self.max.min(n);
        let mut hash = 0u64;
        let small_from = self.min.min(normal);
        if let Some(at) = scan(&self.gear, &data[small_from..normal], &mut hash, self.mask_small) {
            return Some(small_from + at + 1);
        }
        let large_from = normal.max(self.min).min(end);
        scan(&self.gear, &data[large_from..end], &mut hash, self.mask_large)
            .map(|at| large_from + at + 1)
    }
}

/// The first position in `bytes` where the gear hash, rolled on from `*hash`, has none of
/// `mask`'s bits set; with none, `*hash` is left at the hash after the last byte.
///
/// Each step's hash is the previous one shifted by one plus a table entry, a chain of dependent
/// operations that one byte at a time bounds the loop at their latency. Four steps at once give
/// the same hashes: `h(i+k) = h(i) << k + (sum of the next k entries, each shifted by the steps
/// after it)`, where the sums do not depend on `h(i)`, so the chain from one group to the next
/// is one shift and one add and the rest runs in parallel (3x the throughput of the byte loop
/// on this machine's AMD EPYC; docs/BENCHMARKS.md, "Second write (issue 24)").
#[inline(always)]
fn scan(gear: &[u64; 256], bytes: &[u8], hash: &mut u64, mask: u64) -> Option<usize> {
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
        if (h0 & mask == 0) | (h1 & mask == 0) | (h2 & mask == 0) | (h3 & mask == 0) {
            let first = [h0, h1, h2, h3].iter().position(|h| h & mask == 0);
            return first.map(|k| at + k);
        }
        h = h3;
        at += 4;
    }
    for &byte in quads.remainder() {
        h = (h << 1).wrapping_add(entry(byte));
        if h & mask == 0 {
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

    fn noise(len: usize, seed: u8) -> Vec<u8> {
        let mut out = vec![0u8; len];
        blake3::Hasher::new_keyed(&[seed; 32]).finalize_xof().fill(&mut out);
        out
    }

    fn chunks(cdc: &FastCdc, data: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < data.len() {
            let cut = cdc.cut(&data[pos..]);
            out.push(cut);
            pos += cut;
        }
        out
    }

    #[test]
    fn chunks_respect_the_bounds_and_average_near_avg() {
        let cdc = FastCdc::new(&[1; 32], 1024, 4096, 16384);
        let data = noise(4 << 20, 1);
        let sizes = chunks(&cdc, &data);
        assert_eq!(sizes.iter().sum::<usize>(), data.len());
        assert!(sizes[..sizes.len() - 1].iter().all(|&s| (1024..=16384).contains(&s)));
        let mean = data.len() / sizes.len();
        assert!((3000..7000).contains(&mean), "mean chunk {mean}");
    }

    #[test]
    fn an_insertion_changes_only_the_chunks_around_it() {
        let cdc = FastCdc::new(&[2; 32], 1024, 4096, 16384);
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

    /// FastCDC's definition, one byte at a time.
    fn reference_cut(cdc: &FastCdc, data: &[u8]) -> usize {
        let n = data.len();
        if n <= cdc.min {
            return n;
        }
        let mut hash = 0u64;
        for (i, &byte) in data.iter().enumerate().take(cdc.max).skip(cdc.min) {
            hash = (hash << 1).wrapping_add(cdc.gear[usize::from(byte)]);
            let mask = if i < cdc.avg { cdc.mask_small } else { cdc.mask_large };
            if hash & mask == 0 {
                return i + 1;
            }
        }
        cdc.max.min(n)
    }

    #[test]
    fn cuts_equal_the_byte_at_a_time_definition() {
        let data = noise(1 << 16, 4);
        // Sizes that are not multiples of four, and a min above avg's normal region.
        for (min, avg, max) in
            [(64u32, 256u32, 1024u32), (61, 128, 1031), (255, 256, 4099), (0, 1, 16)]
        {
            let cdc = FastCdc::new(&[min as u8; 32], min, avg, max);
            for start in (0..6000).step_by(7) {
                for len in [0, 1, 3, 60, 61, 64, 65, 127, 256, 257, 700, 1024, 1025, 1031, 5000] {
                    let slice = &data[start..start + len];
                    assert_eq!(
                        cdc.cut(slice),
                        reference_cut(&cdc, slice),
                        "{min}/{avg}/{max}: {len} bytes from {start}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_key_changes_the_boundaries() {
        let data = noise(1 << 20, 3);
        let a = chunks(&FastCdc::new(&[1; 32], 1024, 4096, 16384), &data);
        let b = chunks(&FastCdc::new(&[9; 32], 1024, 4096, 16384), &data);
        assert_ne!(a, b);
    }
}
