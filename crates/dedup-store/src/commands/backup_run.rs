//! `backup` of a tree beside the count that gives its progress a total: the parent snapshot's
//! size when there is one (no extra work), else a walk of the tree run beside the backup.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use dedup_core::Observer;

use crate::backup::{backup, count_bytes, BackupOptions, BackupOutcome, BackupProgress};
use crate::error::Result;
use crate::repo::Repository;

/// The bytes a backup is expected to go through.
#[derive(Debug, Default)]
pub struct Expected {
    /// Bytes of regular files, so far.
    pub total: AtomicU64,
    /// Whether `total` is complete (the count finished, or the parent's was taken).
    pub known: AtomicBool,
}

impl Expected {
    /// What is known before the backup starts: the parent snapshot's size, if it has one.
    pub fn before(options: &BackupOptions) -> Expected {
        let expected = Expected::default();
        if let Some((_, parent)) = &options.parent {
            expected.total.store(parent.summary.bytes_total, Ordering::Relaxed);
            expected.known.store(true, Ordering::Relaxed);
        }
        expected
    }
}

/// Backs up the tree `options` name. With `estimate` and no parent, the tree is counted
/// beside it into `expected` (the count stops when the backup ends first, and its total is
/// then not taken as known); `finished` is set when the backup ends, for a progress display.
pub fn backup_counted(
    repo: &Repository,
    options: &BackupOptions,
    observer: &dyn Observer,
    progress: &BackupProgress,
    (expected, estimate): (&Expected, bool),
    finished: &AtomicBool,
) -> Result<BackupOutcome> {
    std::thread::scope(|scope| {
        if estimate && options.parent.is_none() {
            scope.spawn(|| {
                if count_bytes(options, &expected.total, finished).is_ok() {
                    expected.known.store(!finished.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            });
        }
        let result = backup(repo, options, observer, progress);
        finished.store(true, Ordering::Relaxed);
        result
    })
}
