//! Asking the kernel to start writing a batch's files to the disk as soon as their content is
//! complete, from one thread, in an order that a disk that seeks can follow.
//!
//! Left to itself the kernel writes a restore's files back long after they were written (at the
//! user's `sync`, or after 30 seconds), from its flusher threads, and a file system that
//! allocates at write-back (ext4, XFS) then places them from several CPUs' streams at once:
//! on a disk that seeks, the writes alternate between regions a few megabytes apart and wait
//! a turn of the platter each time. Started here, the files are placed and sent in the order
//! they were listed, while the restore carries on with the next batch. Nothing waits for the
//! writes: this changes when the bytes reach the disk, not what a restore promises about it.
//!
//! Small files go first, then the others: ext4 packs small files together (its per-CPU
//! locality groups, for files under 16 blocks) and places larger ones near their inode, so
//! taking them in one listing-order pass would swing the head between the two regions at
//! every change of size; two passes sweep each region once.

#![allow(unsafe_code)]

use std::fs::File;
use std::os::fd::AsRawFd;

/// Up to this length a file counts as small: ext4's default `mb_stream_req` is 16 blocks of
/// 4 KiB, and a file of fewer blocks is packed with other small files.
const SMALL_FILE: u64 = 15 * 4096;

/// Whether a restore starts the write-back of its files itself: yes unless
/// `DEDUP_RESTORE_WRITEBACK=0` leaves it to the kernel (to measure one against the other).
pub fn wanted() -> bool {
    std::env::var_os("DEDUP_RESTORE_WRITEBACK").is_none_or(|v| v != "0")
}

/// Starts writing back every file of `files` (each with its length) in [`order`].
pub fn start_all(files: &[(&File, u64)]) {
    let lens: Vec<u64> = files.iter().map(|&(_, len)| len).collect();
    for i in order(&lens) {
        start(files[i].0);
    }
}

/// The positions of `lens`, the small files' first, each part in the order given.
fn order(lens: &[u64]) -> impl Iterator<Item = usize> + '_ {
    let small = |i: &usize| lens[*i] <= SMALL_FILE;
    (0..lens.len()).filter(small).chain((0..lens.len()).filter(move |i| !small(i)))
}

/// Starts writing back the dirty pages of `file` (no wait, no flush of the disk's cache).
/// Errors are ignored: a file system that cannot do it writes the pages back later as usual.
fn start(file: &File) {
    // SAFETY: sync_file_range takes a descriptor, which `file` keeps open for the call, and
    // plain integers; it touches no memory of this process.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_go_first_then_the_others_each_in_listing_order() {
        let lens = [100_000, 1, SMALL_FILE, SMALL_FILE + 1, 0, 5 << 20, 4096];
        assert_eq!(order(&lens).collect::<Vec<_>>(), vec![1, 2, 4, 6, 0, 3, 5]);
        assert_eq!(order(&[]).count(), 0);
    }

    #[test]
    fn starting_the_write_back_changes_no_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"content").unwrap();
        let file = File::open(&path).unwrap();
        start_all(&[(&file, 7), (&file, 1 << 20)]);
        assert_eq!(std::fs::read(&path).unwrap(), b"content");
    }
}
