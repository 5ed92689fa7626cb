//! What a user can ask of a sync: the settings the binary builds from `dedup sync`'s arguments.

use std::path::PathBuf;

use dedup_fs::Reflink;
use dedup_scan::io::Concurrency;

use crate::backup::BackupOptions;
use crate::files_from::FilesFromOptions;
use crate::filter::FilterRule;

/// How `--dedup` makes identical files copied in one run share storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DedupMode {
    /// Clone the first copy's extents (FICLONE) where the file system can; otherwise copy.
    Reflink,
    /// Hard-link them to the first copy (they then share one set of metadata).
    Hardlink,
}

/// A sync's settings.
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    /// Remove from DST what is not in SRC (after everything else, never after a source read
    /// failed).
    pub delete: bool,
    /// Refuse before any change when more than this many entries would be deleted.
    pub max_delete: Option<u64>,
    /// Let `delete` empty DST when SRC is an empty directory (refused otherwise: the mark of a
    /// disk not mounted at SRC).
    pub allow_empty_source: bool,
    /// Change nothing; report the changes a real run would make.
    pub dry_run: bool,
    /// Compare content, not size and modification time.
    pub checksum: bool,
    /// The include and exclude rules in the order given (the first that matches an entry
    /// decides), for both sides.
    pub filters: Vec<FilterRule>,
    /// Limit the run to these paths below SRC (`--files-from`).
    pub files_from: Option<FilesFromOptions>,
    /// Keep what the run replaces or deletes (`--backup`, `--backup-dir`, `--suffix`).
    pub backup: Option<BackupOptions>,
    /// Excluded paths in DST are deleted too (with `delete`).
    pub delete_excluded: bool,
    /// Do not descend into directories on another file system than SRC.
    pub one_file_system: bool,
    /// Whether content may be cloned instead of copied.
    pub reflink: Reflink,
    /// Files unchanged against this directory's copy become hard links to it (where it lies in
    /// DST, it is left out of the mirror on both sides, never deleted).
    pub link_dest: Option<PathBuf>,
    /// The `--log` file: where it lies in DST it is left out of the mirror on both sides, as a
    /// backup directory there is, so that `--delete` does not remove the log being written.
    pub log: Option<PathBuf>,
    /// Identical files copied in this run share storage.
    pub dedup: Option<DedupMode>,
    /// Concurrency per device (measured unless fixed).
    pub io: Concurrency,
    /// Whether file contents are copied in the order of the disk (by default where the source
    /// device rotates and measures slow).
    pub disk_order: DiskOrder,
    /// The caller's process ends right after the sync: the walked trees and the plan are not
    /// freed one entry at a time (the process's exit returns their memory at once). Never set
    /// it in a process that goes on: the memory stays taken.
    pub exit_after: bool,
}

/// Whether file contents are copied in the order of the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiskOrder {
    /// On a source device that says it rotates and whose reads measure slow.
    #[default]
    Measured,
    /// Always (benchmarks and tests).
    Always,
    /// Never.
    Never,
}
