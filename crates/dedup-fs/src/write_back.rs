//! Asking the kernel to start writing new files to the disk as soon as their content is
//! complete, from one thread, in an order that a disk that seeks can follow: what a restore and
//! a mirror do with the files they create.
//!
//! Left to itself the kernel writes new files back long after they were written (at the user's
//! `sync`, or after 30 seconds), from its flusher threads, and a file system that allocates at
//! write-back (ext4, XFS) then places them from several CPUs' streams at once: on a disk that
//! seeks, the writes alternate between regions a few megabytes apart and wait a turn of the
//! platter each time. Started by one thread, the files are placed and sent in that thread's
//! order. Nothing waits for the writes: this changes when the bytes reach the disk, not what a
//! caller promises about them.
//!
//! Small files go first, then the others ([`small_first`]): ext4 packs small files together
//! (its per-CPU locality groups, for files under 16 blocks) and places larger ones near their
//! inode, so taking them in one pass in the order given would swing the head between the two
//! regions at every change of size; two passes sweep each region once.

#![allow(unsafe_code)]

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};

use rustix::fs::{fstat, open, openat, FileType, Mode, OFlags};

/// Up to this length a file counts as small: ext4's default `mb_stream_req` is 16 blocks of
/// 4 KiB, and a file of fewer blocks is packed with other small files.
pub const SMALL_FILE: u64 = 15 * 4096;

/// Starts writing back every file of `files` (each with its length), the small ones first
/// ([`small_first`]).
pub fn start_write_back_all(files: &[(&File, u64)]) {
    let lens: Vec<u64> = files.iter().map(|&(_, len)| len).collect();
    for i in small_first(&lens) {
        start_write_back(files[i].0);
    }
}

/// The positions of `lens`, the small files' first, each part in the order given.
pub fn small_first(lens: &[u64]) -> impl Iterator<Item = usize> + '_ {
    let small = |i: &usize| lens[*i] <= SMALL_FILE;
    (0..lens.len()).filter(small).chain((0..lens.len()).filter(move |i| !small(i)))
}

/// Starts writing back the dirty pages of `file` (no wait for the writes, no flush of the
/// disk's cache; the call may wait while the device's queue is full). Errors are ignored: a
/// file system that cannot do it writes the pages back later as usual, and an error writing
/// them reaches whoever syncs the file.
pub fn start_write_back(file: &File) {
    // SAFETY: sync_file_range takes a descriptor, which `file` keeps open for the call, and
    // plain integers; it touches no memory of this process.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

/// The regular file `name` in `dir` whose inode is `ino`, opened again to start its write-back
/// (`None` when something else stands there now, or it cannot be opened for reading). Nothing
/// else is opened: the name is looked at without following a symlink or opening what it names
/// (`O_PATH`), and only a regular file of that inode is opened for reading, through its
/// descriptor, so a device or FIFO put at the name meanwhile is never opened.
pub fn reopen_for_write_back(dir: impl AsFd, name: &OsStr, ino: u64) -> Option<File> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let pinned = openat(dir, name, flags, Mode::empty()).ok()?;
    let st = fstat(&pinned).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_ino != ino {
        return None;
    }
    let own = format!("/proc/self/fd/{}", pinned.as_raw_fd());
    open(own.as_str(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok().map(File::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_go_first_then_the_others_each_in_the_order_given() {
        let lens = [100_000, 1, SMALL_FILE, SMALL_FILE + 1, 0, 5 << 20, 4096];
        assert_eq!(small_first(&lens).collect::<Vec<_>>(), vec![1, 2, 4, 6, 0, 3, 5]);
        assert_eq!(small_first(&[]).count(), 0);
    }

    #[test]
    fn starting_the_write_back_changes_no_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"content").unwrap();
        let file = File::open(&path).unwrap();
        start_write_back_all(&[(&file, 7), (&file, 1 << 20)]);
        assert_eq!(std::fs::read(&path).unwrap(), b"content");
    }

    #[test]
    fn only_the_regular_file_of_that_inode_is_opened_again() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"content").unwrap();
        let ino = std::fs::metadata(dir.path().join("f")).unwrap().ino();
        std::os::unix::fs::symlink("f", dir.path().join("link")).unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o600)).unwrap();
        let fifo_ino = std::fs::symlink_metadata(&fifo).unwrap().ino();
        let d = File::open(dir.path()).unwrap();
        let again = reopen_for_write_back(&d, OsStr::new("f"), ino).expect("the file itself");
        assert_eq!(fstat(&again).unwrap().st_ino, ino);
        assert!(reopen_for_write_back(&d, OsStr::new("f"), ino + 1).is_none(), "another inode");
        assert!(reopen_for_write_back(&d, OsStr::new("link"), ino).is_none(), "a symlink");
        assert!(reopen_for_write_back(&d, OsStr::new("fifo"), fifo_ino).is_none(), "a FIFO");
        assert!(reopen_for_write_back(&d, OsStr::new("gone"), ino).is_none());
    }
}
