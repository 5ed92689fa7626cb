//! What a run did, counted as it goes (from many threads) and handed back at the end: the
//! numbers of the summary line on stderr.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use crate::change::{Change, ChangeKind};

/// What a run did (or, in a dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Source entries examined.
    pub checked: u64,
    /// Files whose content was written (copied or cloned).
    pub copied: u64,
    /// Entries whose metadata alone was set.
    pub updated: u64,
    /// Directories, symlinks and special files created.
    pub created: u64,
    /// Hard links made (within the source's groups and to `--link-dest`).
    pub linked: u64,
    /// Files and directories renamed instead of copied.
    pub renamed: u64,
    /// Files made to share the extents of an identical one (`--dedup`).
    pub shared: u64,
    /// Entries deleted, everything below a deleted directory counted.
    pub deleted: u64,
    /// Temporary names of an interrupted run removed.
    pub strays_removed: u64,
    /// Entries moved into the backups (a directory with everything in it counted once).
    pub backed_up: u64,
    /// Bytes of content written.
    pub bytes_copied: u64,
    /// Entries that could not be made right (each reported with its reason).
    pub failed: u64,
    /// Source and destination entries that could not be read (each reported with its reason).
    pub unread: u64,
    /// Deletions were skipped because some source entry could not be read.
    pub deletions_skipped: bool,
    /// Wall time of the run.
    pub duration: Duration,
}

/// Counters behind a [`Summary`], bumped from any thread.
#[derive(Debug, Default)]
pub struct Tally {
    copied: AtomicU64,
    updated: AtomicU64,
    created: AtomicU64,
    linked: AtomicU64,
    renamed: AtomicU64,
    shared: AtomicU64,
    deleted: AtomicU64,
    strays: AtomicU64,
    backups: AtomicU64,
    bytes: AtomicU64,
    failed: AtomicU64,
}

impl Tally {
    /// Count one change; `entries` is what a deletion removed.
    pub fn count(&self, change: &Change, entries: u64) {
        let counter = match change.kind {
            ChangeKind::Copy | ChangeKind::Clone => &self.copied,
            ChangeKind::Update => &self.updated,
            ChangeKind::Mkdir | ChangeKind::Symlink | ChangeKind::Special => &self.created,
            ChangeKind::Link | ChangeKind::LinkDest => &self.linked,
            ChangeKind::Rename => &self.renamed,
            ChangeKind::Share => &self.shared,
            ChangeKind::Delete => &self.deleted,
            ChangeKind::RemoveTemp => &self.strays,
            ChangeKind::Backup => &self.backups,
        };
        let n = if change.kind == ChangeKind::Delete { entries } else { 1 };
        counter.fetch_add(n, Relaxed);
        self.bytes.fetch_add(change.bytes, Relaxed);
    }

    /// Count one entry that could not be made right.
    pub fn failed(&self) {
        self.failed.fetch_add(1, Relaxed);
    }

    /// The counts as a summary.
    pub fn summary(&self, checked: u64, duration: Duration) -> Summary {
        Summary {
            checked,
            copied: self.copied.load(Relaxed),
            updated: self.updated.load(Relaxed),
            created: self.created.load(Relaxed),
            linked: self.linked.load(Relaxed),
            renamed: self.renamed.load(Relaxed),
            shared: self.shared.load(Relaxed),
            deleted: self.deleted.load(Relaxed),
            strays_removed: self.strays.load(Relaxed),
            backed_up: self.backups.load(Relaxed),
            bytes_copied: self.bytes.load(Relaxed),
            failed: self.failed.load(Relaxed),
            unread: 0,
            deletions_skipped: false,
            duration,
        }
    }
}
