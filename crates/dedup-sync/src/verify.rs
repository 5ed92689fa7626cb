//! Reading both sides to settle what metadata cannot: whether a destination file holds the
//! source's bytes. Whole content for `--checksum` and for copies whose stamps cannot be trusted;
//! samples (head, middle and tail) to confirm that a destination file of the same size and time
//! is the renamed source file, so that a rename is never a silent data difference.
//!
//! A plan compares its files one after the other through one [`Comparer`], whose two buffers
//! are reused. The length is checked by reading one byte past it (the last read asks for one
//! byte more than the file should have left), not by a `stat` of each side: a small file costs
//! an open, one read and a close per side.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use dedup_scan::open_for_read;

/// Bytes read at each sample point.
const SAMPLE: u64 = 4096;
/// Bytes compared per read in a whole comparison.
const CHUNK: u64 = 1 << 20;

/// How much of two files is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Head, middle and tail samples.
    Sampled,
    /// Every byte.
    Whole,
}

/// Compares files, one pair at a time, in buffers kept from one pair to the next.
#[derive(Debug, Default)]
pub struct Comparer {
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Comparer {
    /// True when `a` and `b` (neither followed if a symlink) both hold exactly `size` bytes and
    /// agree at the given depth.
    pub fn same_bytes(&mut self, a: &Path, b: &Path, size: u64, depth: Depth) -> io::Result<bool> {
        let (fa, fb) = (open_for_read(a, false)?, open_for_read(b, false)?);
        self.same_files(&fa, &fb, size, depth)
    }

    /// True when the open files `fa` and `fb` both hold exactly `size` bytes and agree at the
    /// given depth (read from their start, whatever their offsets).
    pub fn same_files(
        &mut self,
        fa: &File,
        fb: &File,
        size: u64,
        depth: Depth,
    ) -> io::Result<bool> {
        let files = (fa, fb);
        if depth == Depth::Sampled && size > 3 * SAMPLE {
            // The tail first: it reads past the end, so a file of another length stops there.
            let points = [size - SAMPLE, 0, (size / 2) & !(SAMPLE - 1)];
            for at in points {
                if !self.range(files, at, SAMPLE, size)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let mut at = 0;
        loop {
            let len = CHUNK.min(size - at);
            if !self.range(files, at, len, size)? {
                return Ok(false);
            }
            at += len;
            if at >= size {
                return Ok(true);
            }
        }
    }

    /// Whether both files hold the same `len` bytes at `at`; where those reach `size`, one byte
    /// more is asked for, which neither may have.
    fn range(
        &mut self,
        (fa, fb): (&File, &File),
        at: u64,
        len: u64,
        size: u64,
    ) -> io::Result<bool> {
        let len = usize::try_from(len).map_err(io::Error::other)?;
        let want = if at + len as u64 >= size { len + 1 } else { len };
        for buf in [&mut self.a, &mut self.b] {
            if buf.len() < want {
                buf.resize(want, 0);
            }
        }
        let na = read_full(fa, &mut self.a[..want], at, len)?;
        let nb = read_full(fb, &mut self.b[..want], at, len)?;
        Ok(na == len && nb == len && self.a[..len] == self.b[..len])
    }
}

/// Read into `buf` at `at` until `need` bytes are in (or the file ends); the bytes read, which
/// may be one more than `need` where `buf` asks one more to see the end. A read that brings
/// `need` bytes but fewer than asked has met the end: a regular file's read returns less than
/// asked only there, so the end costs no read of its own. (Were a read short elsewhere, the
/// file would merely look shorter or equal to the size from the walk, which its next change of
/// time brings back to the comparison.)
fn read_full(f: &File, buf: &mut [u8], at: u64, need: usize) -> io::Result<usize> {
    let mut done = 0;
    while done < need.max(1).min(buf.len()) {
        match f.read_at(&mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
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
        let mut c = Comparer::default();
        for (at, sampled) in [(0, false), (50_000 & !4095, false), (99_999, false), (20_000, true)]
        {
            let mut other = data.clone();
            other[at] ^= 1;
            std::fs::write(&b, &other).unwrap();
            assert_eq!(c.same_bytes(&a, &b, n, Depth::Sampled).unwrap(), sampled, "byte {at}");
            assert!(!c.same_bytes(&a, &b, n, Depth::Whole).unwrap(), "byte {at}");
        }
        std::fs::write(&b, &data).unwrap();
        assert!(c.same_bytes(&a, &b, n, Depth::Whole).unwrap());
        assert!(
            !c.same_bytes(&a, &b, n + 1, Depth::Whole).unwrap(),
            "another size is not the same"
        );
        assert!(!c.same_bytes(&a, &b, n - 1, Depth::Whole).unwrap(), "nor a shorter one");
        assert!(!c.same_bytes(&a, &b, n - 1, Depth::Sampled).unwrap(), "sampled neither");
    }

    /// The length is checked by the byte read past it: a file that holds one byte more (or
    /// less) than the size asked about is not the same, at every size around the chunk's
    /// and the samples' edges, and a reused buffer's earlier bytes never count.
    #[test]
    fn one_byte_more_or_less_on_either_side_is_another_file() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let mut c = Comparer::default();
        let sizes = [0, 1, 4095, 3 * SAMPLE + 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK];
        for n in sizes.map(|n| n as usize) {
            let data: Vec<u8> = (0..n + 1).map(|i| (i * 13 % 251) as u8).collect();
            for depth in [Depth::Whole, Depth::Sampled] {
                std::fs::write(&a, &data[..n]).unwrap();
                std::fs::write(&b, &data[..n]).unwrap();
                assert!(c.same_bytes(&a, &b, n as u64, depth).unwrap(), "{n} {depth:?}");
                std::fs::write(&b, &data).unwrap();
                assert!(!c.same_bytes(&a, &b, n as u64, depth).unwrap(), "{n}+1 {depth:?}");
                assert!(!c.same_bytes(&b, &a, n as u64, depth).unwrap(), "{n}+1 {depth:?}");
                if n > 0 {
                    std::fs::write(&b, &data[..n - 1]).unwrap();
                    assert!(!c.same_bytes(&a, &b, n as u64, depth).unwrap(), "{n}-1 {depth:?}");
                    let mut last = data[..n].to_vec();
                    last[n - 1] ^= 0x80;
                    std::fs::write(&b, &last).unwrap();
                    // The last byte is in the tail sample too.
                    assert!(!c.same_bytes(&a, &b, n as u64, depth).unwrap(), "{n} last {depth:?}");
                }
            }
        }
    }
}
