//! Restoring a snapshot (or a path in it) into a target directory: regular files (sparse where
//! their content has zero blocks), directories (their metadata set after their children),
//! symlinks, hard links, FIFOs and devices, with mode, owner, times in ns and xattrs.
//!
//! Everything below the target is reached from the target's open directory, one name at a time,
//! through dedup-fs: no symlink in the target is ever followed, whatever was planted there, and
//! paths of any length restore. What the target already holds at a name the snapshot fills is
//! kept or replaced as [`Overwrite`] says ([`conflict`]); a user's directory goes only with
//! `delete`, and so do names the snapshot does not have. Every replacement and deletion is told
//! to [`Events::change`], and a dry run tells the same without changing anything. A new file is
//! written under a temporary name and renamed into place whole.
//!
//! The trees are walked on the calling thread ([`walk`]), which creates directories ([`dirs`],
//! lazily where a filter only passes through them), symlinks and special files, and removes
//! what `--delete` removes ([`delete`]); file content is written
//! in batches, in pack order, by several threads ([`file`]), and each batch is sent to the disk
//! in an order a disk that seeks can follow ([`writeback`]); a directory gets its metadata once
//! everything in it is in place ([`commit`]). Problems with single entries go to the observer
//! and the restore carries on. A file the backup could not read whole is never created.

mod commit;
mod conflict;
mod delete;
mod dirs;
mod file;
mod levels;
mod links;
mod meta;
mod selection;
mod strays;
mod verify;
mod walk;
mod writeback;

use std::path::{Path, PathBuf};

use dedup_core::Observer;

use crate::error::Result;
use crate::format::Node;
use crate::repo::Repository;

pub use conflict::Overwrite;
pub(crate) use delete::{HOLDS_PASSWORD_FILE, HOLDS_REPOSITORY, IS_PASSWORD_FILE};
pub use selection::Selection;
pub use verify::{verify, VerifySummary};

/// What a restore says of a file the backup could not read whole (flagged incomplete in its
/// tree): it is not created, and `dump` and `--verify` refuse it with the same words.
pub const NOT_READ_WHOLE: &str = "not restored: the backup could not read it whole";

/// What a restore says of a directory the backup could not list (flagged incomplete): it is
/// made, but its snapshot says nothing of what it held, so nothing is restored into it and
/// `--delete` removes nothing from it.
pub const NOT_LISTED: &str =
    "restored empty: the backup could not list this directory, so nothing in it was kept or deleted";

/// What a filter makes of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Restore it, and (a directory) what is below it as the filter says with `within` set.
    Restore,
    /// A directory that is not restored itself but may hold entries that are: walk into it,
    /// creating it only when one of them is restored.
    Enter,
    /// Leave it out, with everything below it.
    Skip,
}

/// Which entries to restore: called with each entry's path below the restored node, the entry,
/// and whether a directory above it was picked ([`Pick::Restore`]).
pub type Filter<'a> = &'a (dyn Fn(&[u8], &Node, bool) -> Pick + Sync);

/// How a restore treats the target.
#[derive(Clone, Copy, Default)]
pub struct RestoreOptions<'a> {
    /// Whether an entry of the snapshot replaces what stands at its name.
    pub overwrite: Overwrite,
    /// Remove what the target holds that the snapshot does not (in the directories restored),
    /// and let a file of the snapshot replace a directory of the user's.
    pub delete: bool,
    /// Decide and report every change, make none.
    pub dry_run: bool,
    /// Which entries to restore (all without one).
    pub filter: Option<Filter<'a>>,
    /// Entries never removed nor replaced, with the reason: the repository restored from,
    /// its password file and the directories holding them, so that `--delete` over a tree
    /// that holds them reports them instead of deleting every snapshot or the only key.
    pub protected: &'a [Protected],
    /// The repository restored from, as (device, inode), when it is on this machine: never
    /// restored into.
    pub repository: Option<(u64, u64)>,
}

/// An entry a restore never removes nor replaces ([`RestoreOptions::protected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protected {
    /// Its device and inode.
    pub id: (u64, u64),
    /// Why, as the problem reported in its place.
    pub why: &'static str,
}

/// A change to something that was already in the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The entry at the path was replaced by the snapshot's.
    Replace,
    /// The entry at the path (with everything below it) was removed: the snapshot has none.
    Delete,
    /// The entry at the path was left as it is (the overwrite policy).
    Keep,
}

impl ChangeKind {
    /// The word that names it in a line of output.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Replace => "replace",
            ChangeKind::Delete => "delete",
            ChangeKind::Keep => "keep",
        }
    }
}

/// One change, at a path of the target (the target joined with the entry's path below it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What happened.
    pub kind: ChangeKind,
    /// Where.
    pub path: PathBuf,
}

/// Receives what a restore changes besides creating entries, and its problems.
pub trait Events: Observer {
    /// Called once per change, when it is made (or, in a dry run, decided).
    fn change(&self, change: &Change);
    /// Called with the counts so far after each batch of files is in place, for a progress
    /// display.
    fn progress(&self, _so_far: &RestoreSummary) {}
}

/// Drops everything.
impl Events for () {
    fn change(&self, _change: &Change) {}
}

/// What a restore did (or, in a dry run, would do).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RestoreSummary {
    /// Regular files written.
    pub files: u64,
    /// Directories created or restored into.
    pub dirs: u64,
    /// Hard links made.
    pub links: u64,
    /// Symlinks, FIFOs, devices.
    pub others: u64,
    /// Bytes of file content written (holes excluded).
    pub bytes: u64,
    /// Entries that stood in the target and were replaced.
    pub replaced: u64,
    /// Entries of the target removed (each with everything below it).
    pub deleted: u64,
    /// Entries of the target kept where the snapshot has an entry of the same name.
    pub kept: u64,
    /// Entries that could not be restored.
    pub errors: u64,
}

/// Restores `node` into `target`: a directory's entries go into `target` (created if need be,
/// and reached through a symlink if the user gives one), any other node becomes
/// `target/<name>`.
pub fn restore(
    repo: &Repository,
    node: &Node,
    target: &Path,
    options: RestoreOptions<'_>,
    events: &dyn Events,
) -> Result<RestoreSummary> {
    let index = repo.index()?;
    let walk = || walk::Restorer::new(repo, &index, target, options, events).run(node);
    crate::deep_stack::on_deep_stack(walk)
}
