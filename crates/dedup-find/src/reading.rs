//! Opening and reading candidate files for the content stages, turning every failure into a
//! problem for the observer (the file then simply drops out of its class), and the crew of
//! threads the stages read on: it grows with the read scheduler's level, so a warm tree is read
//! by as many threads as it has cores and a cold one by as many as the device answers at once.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use dedup_core::{Observer, Problem, ProblemKind, Progress};
use dedup_scan::crew::{map_each, Staffing};
use dedup_scan::io::IoScheduler;
use dedup_scan::{meta_of, open_recorded, OpenRecordedError};

use crate::tree::Tree;

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
    /// `f` of every item, in order, computed on a crew of at most `most` threads that grows
    /// while the read scheduler raises its level.
    pub fn each<T: Send, R: Send>(
        &self,
        items: Vec<T>,
        most: usize,
        f: &(dyn Fn(T) -> R + Sync),
    ) -> Vec<R> {
        let wanted = || self.io.workers_wanted();
        map_each(items, Staffing { most, wanted: &wanted, name: "dedup-read" }, f)
    }

    /// Each set's members with their key (`key` is given the set's index), all sets read on one
    /// crew; a member without a key (it could not be read, and its reader has reported why)
    /// drops out.
    pub fn keyed_sets<T: Copy + Send + Sync, K: Send>(
        &self,
        sets: Vec<Vec<T>>,
        key: &(dyn Fn(usize, &T) -> Option<K> + Sync),
    ) -> Vec<Vec<(K, T)>> {
        let sizes: Vec<usize> = sets.iter().map(Vec::len).collect();
        let members: Vec<(usize, T)> = sets
            .into_iter()
            .enumerate()
            .flat_map(|(set, members)| members.into_iter().map(move |m| (set, m)))
            .collect();
        let keyed = self.each(members, self.io.threads(), &|(set, m)| (set, key(set, &m), m));
        let mut out: Vec<Vec<(K, T)>> = sizes.into_iter().map(Vec::with_capacity).collect();
        for (set, key, member) in keyed {
            if let Some(key) = key {
                out[set].push((key, member));
            }
        }
        out
    }

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
        self.read_with(inode, buf.len() as u64, || file.read_exact_at(buf, offset))
    }

    /// Run `read`, which reads `len` bytes of the inode in as many requests as it likes, as one
    /// read in the scheduler's eyes. A file that ends early has shrunk since the walk.
    pub fn read_with<R>(
        &self,
        inode: &Inode,
        len: u64,
        read: impl FnOnce() -> io::Result<R>,
    ) -> Option<R> {
        let permit = self.io.acquire(inode.meta(self.tree).id.dev);
        let read = read();
        permit.done(len);
        match read {
            Ok(result) => {
                self.progress.read(len);
                Some(result)
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
