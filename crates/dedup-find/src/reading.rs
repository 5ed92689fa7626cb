//! Opening and reading candidate files for the content stages, turning every failure into a
//! problem for the observer (the file then simply drops out of its class).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use dedup_core::{Observer, Problem, ProblemKind, Progress};
use dedup_scan::io::IoScheduler;
use dedup_scan::{meta_of, open_recorded, OpenRecordedError, Tree};

use crate::candidates::Inode;

/// What the content stages need from the run: where paths live and where problems go.
pub(crate) struct Reading<'a> {
    pub tree: &'a Tree,
    pub observer: &'a dyn Observer,
    pub progress: &'a Progress,
    pub io: &'a IoScheduler,
    pub follow_links: bool,
}

impl Reading<'_> {
    /// The path the inode is read through (its first path).
    pub fn path(&self, inode: &Inode) -> PathBuf {
        self.tree.arena.path(self.tree.files[inode.first()].node)
    }

    /// Whether opening the inode's first path may follow a symlink at its last component: when
    /// links are followed, and always for a path argument itself (the walk followed it too).
    fn follows(&self, inode: &Inode) -> bool {
        let node = self.tree.files[inode.first()].node;
        self.follow_links || self.tree.arena.parent(node).is_none()
    }

    /// Open the inode, checking that it is still the file the walk saw.
    pub fn open(&self, inode: &Inode) -> Option<File> {
        match open_recorded(&self.path(inode), inode.meta(self.tree), self.follows(inode)) {
            Ok(file) => Some(file),
            Err(OpenRecordedError::Io(e)) => self.failed(inode, e),
            Err(OpenRecordedError::Replaced) => {
                self.observer.problem(Problem::left_out(self.path(inode), ProblemKind::Replaced));
                None
            }
        }
    }

    /// Fill `buf` from `offset`. A file that ends early has shrunk since the walk.
    pub fn read_at(&self, inode: &Inode, file: &File, buf: &mut [u8], offset: u64) -> Option<()> {
        let permit = self.io.acquire(inode.meta(self.tree).id.dev);
        let read = file.read_exact_at(buf, offset);
        permit.done(buf.len() as u64);
        match read {
            Ok(()) => {
                self.progress.read(buf.len() as u64);
                Some(())
            }
            Err(e) => self.failed(inode, e),
        }
    }

    /// After the last byte was read: the file must still have the size and mtime of the walk,
    /// or what was read may be a mix of two versions.
    pub fn unchanged_after_read(&self, inode: &Inode, file: &File) -> bool {
        match meta_of(file) {
            Ok(now) if inode.meta(self.tree).same_content_stamp(&now) => true,
            Ok(_) => {
                self.observer.problem(Problem::left_out(self.path(inode), ProblemKind::Changed));
                false
            }
            Err(e) => self.failed::<()>(inode, e).is_some(),
        }
    }

    fn failed<T>(&self, inode: &Inode, e: io::Error) -> Option<T> {
        let problem = if e.kind() == io::ErrorKind::UnexpectedEof {
            Problem::left_out(self.path(inode), ProblemKind::Changed)
        } else {
            Problem::error(self.path(inode), ProblemKind::Io(e))
        };
        self.observer.problem(problem);
        None
    }
}
