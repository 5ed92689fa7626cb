//! Asking the kernel to start writing a batch's files to the disk as soon as their content is
//! complete, from one thread, small files first ([`dedup_fs::start_write_back_all`] says why
//! a disk that seeks follows that order and the kernel's flusher does not). Nothing waits for
//! the writes: this changes when the bytes reach the disk, not what a restore promises about it.

use std::fs::File;

/// Whether a restore starts the write-back of its files itself: yes unless
/// `DEDUP_RESTORE_WRITEBACK=0` leaves it to the kernel (to measure one against the other).
pub fn wanted() -> bool {
    std::env::var_os("DEDUP_RESTORE_WRITEBACK").is_none_or(|v| v != "0")
}

/// Starts writing back every file of `files` (each with its length), the small ones first,
/// each part in the order of the batch.
pub fn start_all(files: &[(&File, u64)]) {
    dedup_fs::start_write_back_all(files);
}
