//! Writing content into a new file without writing its zeros: the file is first sized with
//! `ftruncate` (so it reads as zeros and allocates nothing), then only the blocks that hold a
//! non-zero byte are written. A file restored this way allocates about what its source did,
//! wherever its zero runs fall inside the pieces it is written in.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The granularity of holes: a page, the smallest block a file system allocates on Linux.
pub const HOLE_BLOCK: usize = 4096;

/// Write `data` at `offset` of `file`, leaving out every block of [`HOLE_BLOCK`] bytes (aligned
/// on the file's offsets; the first and last may be partial) that holds only zeros; runs of
/// blocks with data go in one write. The range must read as zeros already (a file sized with
/// `set_len` and not written there), since what is left out is not written at all. Returns the
/// bytes written.
pub fn write_sparse_at(file: &File, offset: u64, data: &[u8]) -> io::Result<u64> {
    let mut written = 0;
    let mut run: Option<usize> = None;
    let mut at = 0;
    while at < data.len() {
        // The block of the file that `offset + at` falls in, cut to `data`.
        let into = ((offset + at as u64) % HOLE_BLOCK as u64) as usize;
        let end = (at + HOLE_BLOCK - into).min(data.len());
        let zero = is_zero(&data[at..end]);
        match (zero, run) {
            (false, None) => run = Some(at),
            (true, Some(from)) => {
                file.write_all_at(&data[from..at], offset + from as u64)?;
                written += (at - from) as u64;
                run = None;
            }
            _ => {}
        }
        at = end;
    }
    if let Some(from) = run {
        file.write_all_at(&data[from..], offset + from as u64)?;
        written += (data.len() - from) as u64;
    }
    Ok(written)
}

/// Whether every byte of `bytes` is zero, looked at 16 bytes at a time.
pub fn is_zero(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(16);
    let whole = words.by_ref().all(|w| u128::from_ne_bytes(w.try_into().expect("16 bytes")) == 0);
    whole && words.remainder().iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn allocated(file: &File) -> u64 {
        file.metadata().unwrap().blocks() * 512
    }

    #[test]
    fn zeros_are_left_as_holes_and_the_content_is_exact() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let file = File::options().read(true).write(true).create_new(true).open(&path).unwrap();
        let len = 8 << 20;
        file.set_len(len).unwrap();
        // A chunk at an odd offset: zeros around two islands, one straddling a block edge.
        let base = 1_000_003u64;
        let mut chunk = vec![0u8; 3 << 20];
        chunk[10_000] = 1;
        let edge = (HOLE_BLOCK - (base as usize % HOLE_BLOCK)) + 5 * HOLE_BLOCK;
        chunk[edge - 1] = 2;
        chunk[edge] = 3;
        let written = write_sparse_at(&file, base, &chunk).unwrap();
        assert!(written <= 4 * HOLE_BLOCK as u64, "{written}");
        let mut expected = vec![0u8; len as usize];
        expected[base as usize..base as usize + chunk.len()].copy_from_slice(&chunk);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        // File systems allocate in blocks of their own (tmpfs and ext4: 4 KiB).
        assert!(allocated(&file) <= 64 << 10, "{} bytes allocated", allocated(&file));
    }

    #[test]
    fn data_without_zero_blocks_goes_in_one_piece() {
        let tmp = tempfile::tempdir().unwrap();
        let file = File::create(tmp.path().join("g")).unwrap();
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8 | 1).collect();
        assert_eq!(write_sparse_at(&file, 7, &data).unwrap(), data.len() as u64);
        assert_eq!(write_sparse_at(&file, 0, &[]).unwrap(), 0);
        assert_eq!(write_sparse_at(&file, 0, &[0; 5]).unwrap(), 0);
        let back = std::fs::read(tmp.path().join("g")).unwrap();
        assert_eq!(&back[7..], &data[..]);
        assert!(is_zero(&[0; 33]) && !is_zero(&[0, 0, 1]) && is_zero(&[]));
        let mut late = [0u8; 40];
        late[39] = 1;
        assert!(!is_zero(&late));
    }
}
