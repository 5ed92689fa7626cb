//! The backup's visitor of the engine's walk: turns each listed entry into a tree node, takes
//! the parent snapshot's chunks for files unchanged since (a `stat`, no read), and queues the
//! other files for the file stage, or reads small ones on the walk's own thread. A directory's
//! tree is stored once the walk has left it and every file and subdirectory below it is done,
//! whichever thread finishes last; its node then goes up to its parent.
//!
//! This file holds the visitor's state and counts; each of its jobs is a file below it: `walk`
//! (the walker's callbacks), `node` (an entry as a node), `parent` (matching the parent
//! snapshot), `xattrs` (which attributes are kept or read), `file_route` (where a file's content
//! comes from), `read` (reading one file), `dir_state` and `assemble` (directory assembly).

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use dedup_core::{Observer, Problem};

use super::pipeline::{FileStage, Stages};
use super::pseudo_fs::PseudoDevices;
use super::select::Selection;
use super::{bump, BackupProgress};
use crate::error::{Error, Result};
use crate::format::{Node, Summary};
use crate::repo::BlobSink;

mod assemble;
mod dir_state;
mod file_route;
mod node;
mod parent;
mod read;
mod walk;
mod xattrs;

use dir_state::Home;

pub use node::node_of;

/// A file for the file stage: its node, to be given its chunks, and where the node goes.
pub struct FileJob {
    pub(super) node: Node,
    pub(super) file: File,
    pub(super) home: Home,
    pub(super) shown: PathBuf,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The walk's visitor and observer during a backup.
pub struct BackupVisitor<'a, 'r> {
    sink: &'a BlobSink<'r>,
    stages: &'a Stages<FileJob>,
    observer: &'a dyn Observer,
    progress: &'a BackupProgress,
    parent_time: Option<i64>,
    one_file_system: bool,
    /// Which devices are pseudo file systems, read up to a limit rather than to their size.
    pseudo: PseudoDevices,
    /// Each root's node in the parent snapshot, and whether its status (inode, ctime) is known.
    parent_roots: Mutex<Vec<Option<(Node, bool)>>>,
    found: Mutex<Vec<Option<Node>>>,
    fatal: Mutex<Option<Error>>,
    files_new: AtomicU64,
    files_changed: AtomicU64,
    files_unchanged: AtomicU64,
    dirs: AtomicU64,
    others: AtomicU64,
    errors: AtomicU64,
    bytes_total: AtomicU64,
    selection: Selection,
}

impl<'a, 'r> BackupVisitor<'a, 'r> {
    /// Leave out, besides the walk's exclusion globs, what `selection` leaves out.
    pub fn with_selection(mut self, selection: Selection) -> Self {
        self.selection = selection;
        self
    }

    pub fn new(
        sink: &'a BlobSink<'r>,
        stages: &'a Stages<FileJob>,
        observer: &'a dyn Observer,
        progress: &'a BackupProgress,
        parent_time: Option<i64>,
        one_file_system: bool,
    ) -> Self {
        BackupVisitor {
            sink,
            stages,
            observer,
            progress,
            parent_time,
            one_file_system,
            pseudo: PseudoDevices::default(),
            parent_roots: Mutex::new(Vec::new()),
            found: Mutex::new(Vec::new()),
            fatal: Mutex::new(None),
            files_new: AtomicU64::new(0),
            files_changed: AtomicU64::new(0),
            files_unchanged: AtomicU64::new(0),
            dirs: AtomicU64::new(0),
            others: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            bytes_total: AtomicU64::new(0),
            selection: Selection::default(),
        }
    }

    fn report(&self, problem: Problem) {
        self.problem(problem);
    }

    /// The found root nodes (by root index) and the counts; or the error that stopped the backup.
    pub fn finish(self) -> Result<(Vec<Option<Node>>, Summary)> {
        if let Some(err) = self.fatal.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(err);
        }
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let summary = Summary {
            files_new: load(&self.files_new),
            files_changed: load(&self.files_changed),
            files_unchanged: load(&self.files_unchanged),
            dirs: load(&self.dirs),
            others: load(&self.others),
            errors: load(&self.errors),
            bytes_read: self.progress.bytes_read.load(Ordering::Relaxed),
            bytes_total: load(&self.bytes_total),
            ..Summary::default()
        };
        Ok((self.found.into_inner().unwrap_or_else(PoisonError::into_inner), summary))
    }
}

impl FileStage<FileJob> for BackupVisitor<'_, '_> {
    fn run_file(&self, job: FileJob, buf: &mut Vec<u8>) {
        self.run_queued_file(job, buf);
    }

    /// Whether a repository error stopped the backup.
    fn failed(&self) -> bool {
        lock(&self.fatal).is_some()
    }

    /// Stops the backup with `err` (the first error is kept).
    fn fail(&self, err: Error) {
        lock(&self.fatal).get_or_insert(err);
    }
}

impl Observer for BackupVisitor<'_, '_> {
    fn problem(&self, problem: Problem) {
        if problem.incomplete {
            bump(&self.errors, 1);
        }
        self.observer.problem(problem);
    }
}

#[cfg(test)]
mod tests;
