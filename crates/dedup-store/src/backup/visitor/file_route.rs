//! Where a regular file's content comes from: the parent snapshot's chunks when its status
//! proves it unchanged (no read), a read on the walk thread that listed it when it is small, or
//! a job for the file stage when it is larger; a file that cannot be opened is named once.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::dir_state::Home;
use super::{BackupVisitor, FileJob};
use crate::backup::pipeline::FileStage;
use crate::backup::{bump, problems};
use crate::format::{Content, Node};

/// Files smaller than this are read, chunked and hashed on the walk thread that listed them, in
/// a buffer of this size: handing each over to a file worker cost more than reading it (two
/// queue operations, and a `futex` wake and a context switch whenever a side waited; a second
/// write of many small files spent a large share of its CPU there). Larger files go to the file
/// stage, so that a walk thread is never held long by one file. The size is above nearly every
/// file of a source tree, yet only one buffer per walk thread.
const SMALL_FILE: u64 = 256 << 10;

thread_local! {
    /// The walk thread's window for small files, kept from one file to the next.
    static SMALL_FILE_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl BackupVisitor<'_, '_> {
    /// Takes a regular file's chunks from the parent when unchanged, else reads a small one here
    /// and queues a larger one for the file stage (its directory's tree then waits for it).
    /// With `xattrs_by_fd`, the node's attributes are still to be read: through the descriptor
    /// once the file is open (no second name lookup), with that function when it is taken
    /// unopened from the parent, and not at all when it cannot be opened (its one message says
    /// why, and it is stored without content).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn file(
        &self,
        mut node: Node,
        before: Option<&mut Node>,
        known: bool,
        open: impl FnOnce() -> io::Result<File>,
        shown: impl Fn() -> PathBuf,
        home: Home,
        xattrs_by_fd: Option<&dyn Fn() -> io::Result<Vec<dedup_scan::Xattr>>>,
    ) {
        // The repository refused a write: no snapshot will be written, so reading on is waste.
        if self.failed() {
            return;
        }
        bump(&self.bytes_total, node.size);
        bump(&self.progress.files, 1);
        bump(&self.progress.bytes_done, node.size);
        let in_parent = before.is_some();
        if let Some(chunks) = self.unchanged(&node, before, known) {
            // (Attributes not proven unchanged mean contents not proven unchanged either.)
            if let Some(read) = xattrs_by_fd {
                node.xattrs = self.read_xattrs(read, &shown);
            }
            bump(&self.files_unchanged, 1);
            node.content = Content::Chunks(chunks);
            return self.deliver(home, node);
        }
        let file = match open() {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                // Removed since it was listed: the snapshot shows the directory without it, as
                // a listing taken a moment later would have. One message, nothing stored.
                return self.report(problems::vanished(shown()));
            }
            Err(err) => {
                // One message for the file: its attributes are not read by path either.
                bump(if in_parent { &self.files_changed } else { &self.files_new }, 1);
                node.incomplete = true;
                node.content = Content::Chunks(Vec::new());
                self.report(problems::unreadable(shown(), &err));
                return self.deliver(home, node);
            }
        };
        bump(if in_parent { &self.files_changed } else { &self.files_new }, 1);
        if xattrs_by_fd.is_some() {
            let read = || dedup_scan::read_xattrs_fd(std::os::fd::AsFd::as_fd(&file));
            node.xattrs = self.read_xattrs(read, &shown);
        }
        if node.size < SMALL_FILE {
            SMALL_FILE_BUFFER.with_borrow_mut(|buf| {
                self.read_file(&mut node, &file, shown, buf, SMALL_FILE as usize);
            });
            return self.deliver(home, node);
        }
        if let Home::Dir(dir) = &home {
            dir.pending.fetch_add(1, Ordering::AcqRel);
        }
        let shown = shown();
        if let Err(job) = self.stages.jobs.push(FileJob { node, file, home, shown }) {
            // The pipeline stopped on a repository error; the node only completes its tree.
            self.deliver(job.home.clone(), job.node);
            if let Home::Dir(dir) = job.home {
                self.release(dir);
            }
        }
    }
}
