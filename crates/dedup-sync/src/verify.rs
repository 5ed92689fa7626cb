//! Reading both sides to settle what metadata cannot: whether a destination file holds the
//! source's bytes. Whole content for `--checksum` and for copies whose stamps cannot be trusted;
//! samples (head, middle and tail) to confirm that a destination file of the same size and time
//! is the renamed source file, so that a rename is never a silent data difference.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use dedup_scan::open_for_read;

/// Bytes read at each sample point.
const SAMPLE: u64 = 4096;
/// Bytes compared per read in a whole comparison.
const CHUNK: usize = 1 << 20;

/// How much of two files is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Head, middle and tail samples.
    Sampled,
    /// Every byte.
    Whole,
}

/// True when `a` and `b` (neither followed if a symlink) both hold `size` bytes and agree at the
/// given depth.
pub fn same_bytes(a: &Path, b: &Path, size: u64, depth: Depth) -> io::Result<bool> {
    let (fa, fb) = (open_for_read(a, false)?, open_for_read(b, false)?);
    if fa.metadata()?.len() != size || fb.metadata()?.len() != size {
        return Ok(false);
    }
    match depth {
        Depth::Whole => whole(&fa, &fb, size),
        Depth::Sampled if size <= 3 * SAMPLE => whole(&fa, &fb, size),
        Depth::Sampled => {
            let points = [0, (size / 2) & !(SAMPLE - 1), size - SAMPLE];
            for at in points {
                if !range(&fa, &fb, at, SAMPLE as usize)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

fn whole(a: &File, b: &File, size: u64) -> io::Result<bool> {
    let mut at = 0;
    while at < size {
        let len = CHUNK.min((size - at) as usize);
        if !range(a, b, at, len)? {
            return Ok(false);
        }
        at += len as u64;
    }
    Ok(true)
}

fn range(a: &File, b: &File, at: u64, len: usize) -> io::Result<bool> {
    let (mut x, mut y) = (vec![0; len], vec![0; len]);
    a.read_exact_at(&mut x, at)?;
    b.read_exact_at(&mut y, at)?;
    Ok(x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_see_head_middle_and_tail_and_whole_sees_everything() {
        let t = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::write(&a, &data).unwrap();
        let n = data.len() as u64;
        for (at, sampled) in [(0, false), (50_000 & !4095, false), (99_999, false), (20_000, true)]
        {
            let mut other = data.clone();
            other[at] ^= 1;
            std::fs::write(&b, &other).unwrap();
            assert_eq!(same_bytes(&a, &b, n, Depth::Sampled).unwrap(), sampled, "byte {at}");
            assert!(!same_bytes(&a, &b, n, Depth::Whole).unwrap(), "byte {at}");
        }
        std::fs::write(&b, &data).unwrap();
        assert!(same_bytes(&a, &b, n, Depth::Whole).unwrap());
        assert!(!same_bytes(&a, &b, n + 1, Depth::Whole).unwrap(), "another size is not the same");
    }
}
