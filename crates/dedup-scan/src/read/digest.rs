//! The BLAKE3 digest of one whole file, read start to end in large chunks under the scheduler.

use std::fs::File;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use dedup_core::FileMeta;
use rustix::fs::{fadvise, Advice};

use super::{ReadBuf, Reader};

/// Bytes per read of a whole file: large enough that a device streams, and the size of the
/// finder's largest comparison chunk, so a device sees the same requests either way.
pub const DIGEST_CHUNK: u64 = 4 << 20;

/// The digest of the file at `path`, which the walk saw as `meta`, read whole; `None` when it
/// cannot be read or changed while being read (the reader has reported why).
pub fn digest_file(
    reader: &Reader<'_>,
    path: &Path,
    meta: FileMeta,
    follow: bool,
) -> Option<[u8; 32]> {
    let file = reader.open(path, meta, follow)?;
    digest_opened(reader, || path.to_path_buf(), &file, meta)
}

/// [`digest_file`] of a file already opened and checked to be the one recorded as `meta`
/// (named by `path` in problems).
pub fn digest_opened(
    reader: &Reader<'_>,
    path: impl Fn() -> PathBuf,
    file: &File,
    meta: FileMeta,
) -> Option<[u8; 32]> {
    let size = meta.size;
    let _ = fadvise(file, 0, NonZeroU64::new(size), Advice::Sequential);
    let mut hasher = blake3::Hasher::new();
    let mut buf = ReadBuf::new(usize::try_from(size.min(DIGEST_CHUNK)).ok()?);
    let mut offset = 0;
    while offset < size {
        let len = (size - offset).min(DIGEST_CHUNK) as usize;
        buf.set_len(len);
        reader.read_at(&path, meta.id.dev, file, buf.bytes_mut(), offset)?;
        hasher.update(buf.bytes());
        offset += len as u64;
    }
    reader.unchanged_after_read(path, meta, file).then(|| *hasher.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use dedup_core::Progress;

    use super::*;
    use crate::io::{Concurrency, IoScheduler};

    #[test]
    fn digest_of_a_file_larger_than_one_chunk() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let data: Vec<u8> = (0..DIGEST_CHUNK as usize + 12_345).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let meta = crate::meta_of(&std::fs::File::open(&p).unwrap()).unwrap();
        let io = IoScheduler::new(Concurrency::Fixed(1));
        let progress = Progress::default();
        let reader = Reader { observer: &(), progress: &progress, io: &io };
        assert_eq!(digest_file(&reader, &p, meta, false), Some(*blake3::hash(&data).as_bytes()));
        assert_eq!(progress.snapshot().bytes_read, data.len() as u64);
        // A file that changed since the walk has no digest.
        std::fs::write(&p, b"other").unwrap();
        assert_eq!(digest_file(&reader, &p, meta, false), None);
    }
}
