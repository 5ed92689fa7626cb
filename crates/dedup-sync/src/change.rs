//! One change a run makes (or, with `--dry-run`, would make) to the destination, as the binary
//! prints it (`-n`, `-v`) and logs it (`--log`): what was done and to which path below DST.

use std::path::PathBuf;

pub use crate::item::{Differs, Item};

/// What was done to one destination path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// A regular file's content written (new, or changed in the source).
    Copy,
    /// Metadata set on an entry whose content was already right.
    Update,
    /// A directory created.
    Mkdir,
    /// A symlink created (or re-created with another target).
    Symlink,
    /// A FIFO, socket or device node created.
    Special,
    /// A hard link made to another destination path (`from`), as in the source.
    Link,
    /// A hard link made to the `--link-dest` copy (`from`, a path below that directory).
    LinkDest,
    /// A file made to share the storage of an identical one copied in this run (`from`).
    Clone,
    /// A file made to share the extents of an identical destination file (`from`) with
    /// `--dedup`; its content and metadata are unchanged.
    Share,
    /// A destination entry (`from`) renamed here, since the source entry moved.
    Rename,
    /// An entry (and everything below it) removed.
    Delete,
    /// A temporary name of ours, left by an interrupted run, removed.
    RemoveTemp,
    /// The destination entry at the path (with everything below it) moved into the backups
    /// (`--backup`, `--backup-dir`), just before the change that replaces or deletes it.
    Backup,
}

impl ChangeKind {
    /// The word shown first on a change's line and in its log record.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Copy => "copy",
            ChangeKind::Update => "update",
            ChangeKind::Mkdir => "mkdir",
            ChangeKind::Symlink => "symlink",
            ChangeKind::Special => "special",
            ChangeKind::Link => "link",
            ChangeKind::LinkDest => "link-dest",
            ChangeKind::Clone => "clone",
            ChangeKind::Share => "share",
            ChangeKind::Rename => "rename",
            ChangeKind::Delete => "delete",
            ChangeKind::RemoveTemp => "remove-temp",
            ChangeKind::Backup => "backup",
        }
    }
}

/// One change to the destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What was done.
    pub kind: ChangeKind,
    /// The path below DST that was changed (empty for DST itself).
    pub path: PathBuf,
    /// Where it came from: the renamed entry's old path below DST, the hard link's other path
    /// below DST, the `--link-dest` copy's path below that directory.
    pub from: Option<PathBuf>,
    /// Bytes of content written (data only: holes and shared extents are not counted).
    pub bytes: u64,
    /// The entry and what of it the change sets, as rsync's `--itemize-changes` shows it.
    pub item: Item,
}

impl Change {
    /// A change of `kind` at `path` below DST, with what it came from.
    pub fn new(kind: ChangeKind, path: PathBuf, from: Option<PathBuf>, item: Item) -> Change {
        Change { kind, path, from, bytes: 0, item }
    }
}

/// Receives what a run does as it happens, from any thread; problems go to the
/// [`dedup_core::Observer`] side.
pub trait Events: dedup_core::Observer {
    /// One change made (or, in a dry run, planned).
    fn change(&self, change: &Change);
}
