//! Byte-for-byte comparison of two open files, in large positioned reads.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use dedup_scan::ReadBuf;

const CHUNK: usize = 1 << 20;

/// True when the first `size` bytes of `a` and `b` are equal and both have exactly `size`
/// bytes to give.
pub fn same_content(a: &File, b: &File, size: u64) -> io::Result<bool> {
    let len = CHUNK.min(usize::try_from(size).unwrap_or(CHUNK)).max(1);
    let (mut x, mut y) = (ReadBuf::new(len), ReadBuf::new(len));
    let mut at = 0u64;
    while at < size {
        let n = len.min(usize::try_from(size - at).unwrap_or(len));
        for (f, buf) in [(a, &mut x), (b, &mut y)] {
            buf.set_len(n);
            match f.read_exact_at(buf.bytes_mut(), at) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
                other => other?,
            }
        }
        if x.bytes() != y.bytes() {
            return Ok(false);
        }
        at += n as u64;
    }
    // Both must end here: a file that grew is not the file compared.
    let mut one = [0u8; 1];
    Ok(a.read_at(&mut one, size)? == 0 && b.read_at(&mut one, size)? == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_and_different_files() {
        let tmp = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..3 * CHUNK + 17).map(|i| (i * 7 % 251) as u8).collect();
        let mut other = data.clone();
        *other.last_mut().unwrap() ^= 1;
        for (name, d) in [("a", &data), ("b", &data), ("c", &other)] {
            std::fs::write(tmp.path().join(name), d).unwrap();
        }
        let open = |n: &str| File::open(tmp.path().join(n)).unwrap();
        let size = data.len() as u64;
        assert!(same_content(&open("a"), &open("b"), size).unwrap());
        assert!(!same_content(&open("a"), &open("c"), size).unwrap());
        assert!(!same_content(&open("a"), &open("b"), size - 1).unwrap());
        assert!(!same_content(&open("a"), &open("b"), size + 1).unwrap());
    }
}
