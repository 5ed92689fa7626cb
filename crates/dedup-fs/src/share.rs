//! Sharing extents instead of copying bytes: `FICLONE` makes a new file share all of another's
//! extents (a copy that costs no space), `FIDEDUPERANGE` makes an existing equal copy share them
//! (the kernel compares under lock first). Both need a file system with reflinks (btrfs, XFS
//! with reflink=1, bcachefs…); elsewhere they answer [`FsError::Unsupported`].

use std::fs::File;
use std::io;

use rustix::fs::ioctl_ficlone;
use rustix::io::Errno;

use crate::error::{unsupported, FsError};
use crate::platform::{dedupe_range, Deduped};

/// Largest range handed to one FIDEDUPERANGE call (btrfs caps a call at 16 MiB).
const DEDUPE_CHUNK: u64 = 16 << 20;

/// Make `dst` (open for writing) a clone of the whole of `src`: same bytes and length, sharing
/// its extents. Whatever `dst` held is replaced. [`FsError::Unsupported`] when the file system
/// cannot (another file system, no reflinks: `EXDEV`, `EOPNOTSUPP`, `EINVAL`, `ENOTTY`).
pub fn clone_file(src: &File, dst: &File) -> Result<(), FsError> {
    match ioctl_ficlone(dst, src) {
        Ok(()) => Ok(()),
        Err(e) if unsupported(e, &[]) => Err(FsError::Unsupported(e.into())),
        Err(e) => Err(e.into()),
    }
}

/// Make the first `size` bytes of `dest` share `src`'s extents, range by range; the kernel
/// compares each range under lock and refuses ([`FsError::ContentDiffers`]) when they differ.
/// `dest` keeps its inode and metadata. Returns the bytes now shared. When a later range
/// differs, the ranges before it stay shared (their bytes were equal, so no content changed).
pub fn dedupe_file(src: &File, dest: &File, size: u64) -> Result<u64, FsError> {
    let mut at = 0;
    while at < size {
        let len = DEDUPE_CHUNK.min(size - at);
        match dedupe_range(src, dest, at, len) {
            Ok(Deduped::Same(0)) => {
                return Err(FsError::Io(io::Error::other("the kernel deduplicated 0 bytes")))
            }
            Ok(Deduped::Same(n)) => at += n,
            Ok(Deduped::Differs) => return Err(FsError::ContentDiffers),
            Err(e) => return Err(dedupe_error(e)),
        }
    }
    Ok(size)
}

fn dedupe_error(e: io::Error) -> FsError {
    match e.raw_os_error().map(Errno::from_raw_os_error) {
        Some(errno) if unsupported(errno, &[Errno::NOSYS]) => FsError::Unsupported(e),
        _ => FsError::Io(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fs::Reflinks;
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn without_reflinks_cloning_and_deduping_are_unsupported_and_change_nothing() {
        // The test's temporary directory is on a file system without reflinks (ext4, tmpfs);
        // where it has them, this test has nothing to check.
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::write(&a, b"same bytes").unwrap();
        fs::write(&b, b"same bytes").unwrap();
        let src = File::open(&a).unwrap();
        let dst = fs::OpenOptions::new().read(true).write(true).open(&b).unwrap();
        let Err(e) = clone_file(&src, &dst) else { return };
        assert!(matches!(e, FsError::Unsupported(_)), "{e:?}");
        assert!(matches!(dedupe_file(&src, &dst, 10), Err(FsError::Unsupported(_))));
        assert_eq!(fs::read(&b).unwrap(), b"same bytes");
    }

    #[test]
    fn a_clone_has_the_bytes_and_shares_the_space() {
        let Some(fs) = Reflinks::mount("a_clone_has_the_bytes_and_shares_the_space") else {
            return;
        };
        let data: Vec<u8> = (0..8u32 << 20).map(|i| (i % 251) as u8).collect();
        let (a, b) = (fs.dir.join("a"), fs.dir.join("b"));
        fs::write(&a, &data).unwrap();
        fs::write(&b, b"old content, longer or shorter").unwrap();
        let before = fs.free_bytes();
        let dst = fs::OpenOptions::new().write(true).open(&b).unwrap();
        clone_file(&File::open(&a).unwrap(), &dst).unwrap();
        assert_eq!(fs::read(&b).unwrap(), data);
        assert!(fs.free_bytes() + (1 << 20) > before, "the clone took space of its own");
        assert_ne!(fs::metadata(&a).unwrap().ino(), fs::metadata(&b).unwrap().ino());
    }

    #[test]
    fn dedupe_shares_equal_files_and_refuses_different_ones() {
        let Some(fs) = Reflinks::mount("dedupe_shares_equal_files_and_refuses_different_ones")
        else {
            return;
        };
        let data: Vec<u8> = (0..(20u32 << 20) + 5).map(|i| (i % 253) as u8).collect();
        let mut other = data.clone();
        *other.last_mut().unwrap() ^= 1;
        for (name, d) in [("a", &data), ("b", &data), ("c", &other)] {
            fs::write(fs.dir.join(name), d).unwrap();
        }
        let open = |n: &str| File::open(fs.dir.join(n)).unwrap();
        let size = data.len() as u64;
        assert_eq!(dedupe_file(&open("a"), &open("b"), size).unwrap(), size);
        assert!(matches!(dedupe_file(&open("a"), &open("c"), size), Err(FsError::ContentDiffers)));
        assert_eq!(fs::read(fs.dir.join("c")).unwrap(), other);
    }
}
