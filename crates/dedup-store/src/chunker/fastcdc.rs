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
        for (i, &byte) in data.iter().enumerate().take(normal).skip(self.min) {
            hash = (hash << 1).wrapping_add(self.gear[usize::from(byte)]);
            if hash & self.mask_small == 0 {
                return Some(i + 1);
            }
        }
        for (i, &byte) in data.iter().enumerate().take(end).skip(normal.max(self.min)) {
            hash = (hash << 1).wrapping_add(self.gear[usize::from(byte)]);
            if hash & self.mask_large == 0 {
                return Some(i + 1);
            }
        }
        None
    }
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

    #[test]
    fn the_key_changes_the_boundaries() {
        let data = noise(1 << 20, 3);
        let a = chunks(&FastCdc::new(&[1; 32], 1024, 4096, 16384), &data);
        let b = chunks(&FastCdc::new(&[9; 32], 1024, 4096, 16384), &data);
        assert_ne!(a, b);
    }
}
