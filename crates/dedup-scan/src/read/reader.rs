//! Reading files under the I/O scheduler: each read holds a permit of its device's gate, counts
//! its bytes for progress, and turns every failure into a problem for the observer (the caller
//! then simply drops the file). Reads run on a crew of threads that grows with the scheduler's
//! level, so a warm tree is read by as many threads as it has cores and a cold one by as many as
//! the device answers at once.
//!
//! A path is asked for only when a problem must name it, so a caller that keeps paths in a
//! compact arena builds none for the reads that succeed.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use dedup_core::{FileMeta, Observer, Problem, ProblemKind, Progress};

use crate::crew::{map_each, Staffing};
use crate::io::IoScheduler;
use crate::open::{
    check_recorded, is_recorded, meta_from_stat, meta_of, open_for_read, OpenRecordedError,
};

/// What reads need from the run: where problems go, what counts progress, who grants reads.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    /// Receives a problem for every failed open or read.
    pub observer: &'a dyn Observer,
    /// Counts bytes read.
    pub progress: &'a Progress,
    /// Grants each read a permit of its device.
    pub io: &'a IoScheduler,
}

impl Reader<'_> {
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

    /// Open `path`, checking that it is still the file described by `meta`; `follow` allows a
    /// symlink at its last component.
    pub fn open(&self, path: &Path, meta: FileMeta, follow: bool) -> Option<File> {
        self.open_by(|| path.to_path_buf(), meta, || open_for_read(path, follow))
    }

    /// Open with `open` the file recorded as `meta` (named by `path` in problems), checking
    /// that it is still that file, as [`Reader::open`] does.
    pub fn open_by(
        &self,
        path: impl FnOnce() -> PathBuf,
        meta: FileMeta,
        open: impl FnOnce() -> io::Result<File>,
    ) -> Option<File> {
        match open().map_err(OpenRecordedError::Io).and_then(|f| check_recorded(f, &meta)) {
            Ok(file) => Some(file),
            Err(OpenRecordedError::Io(e)) => self.failed(path, e),
            Err(OpenRecordedError::Replaced) => {
                self.observer.problem(Problem::left_out(path(), ProblemKind::Replaced));
                None
            }
        }
    }

    /// Open with `open` a file that [`Reader::read_then_check`] will read whole and only then
    /// check: a failure is reported, but what was opened is not yet known to be the file meant.
    pub fn open_unchecked(
        &self,
        path: impl FnOnce() -> PathBuf,
        open: impl FnOnce() -> io::Result<File>,
    ) -> Option<File> {
        match open() {
            Ok(file) => Some(file),
            Err(e) => self.failed(path, e),
        }
    }

    /// Run `read`, which reads the whole of `file` (`len` bytes) opened by
    /// [`Reader::open_unchecked`], then check with one `fstat` both that it is the regular file
    /// the walk recorded as `meta` and that it did not change: the check of identity that
    /// [`Reader::open`] makes before reading and the check of [`Reader::unchanged_after_read`]
    /// share one answer. Nothing read is returned unless both hold.
    ///
    /// Reading before knowing what was opened is safe: it was opened without following a
    /// symlink, without blocking, without a controlling terminal, and `pread` takes nothing from
    /// a stream (a FIFO, socket, terminal or input device refuses it: `ESPIPE`) and at most
    /// `len` bytes of anything else, which are dropped unless the check passes.
    pub fn read_then_check<R>(
        &self,
        path: impl FnOnce() -> PathBuf,
        meta: FileMeta,
        file: &File,
        read: impl FnOnce() -> io::Result<R>,
    ) -> Option<R> {
        let permit = self.io.acquire(meta.id.dev);
        let read = read();
        permit.done(meta.size);
        let st = match rustix::fs::fstat(file) {
            Ok(st) => st,
            Err(e) => return self.failed(path, e.into()),
        };
        if !is_recorded(&st, &meta) {
            self.observer.problem(Problem::left_out(path(), ProblemKind::Replaced));
            return None;
        }
        let result = match read {
            Ok(result) => result,
            Err(e) => return self.failed(path, e),
        };
        if !meta.same_content_stamp(&meta_from_stat(&st)) {
            self.observer.problem(Problem::left_out(path(), ProblemKind::Changed));
            return None;
        }
        self.progress.read(meta.size);
        Some(result)
    }

    /// Fill `buf` from `offset` of `file` (on device `dev`, named by `path` in problems). A file
    /// that ends early has shrunk since the walk.
    pub fn read_at(
        &self,
        path: impl FnOnce() -> PathBuf,
        dev: u64,
        file: &File,
        buf: &mut [u8],
        offset: u64,
    ) -> Option<()> {
        self.read_with(path, dev, buf.len() as u64, || file.read_exact_at(buf, offset))
    }

    /// Run `read`, which reads `len` bytes of a file on device `dev` in as many requests as it
    /// likes, as one read in the scheduler's eyes.
    pub fn read_with<R>(
        &self,
        path: impl FnOnce() -> PathBuf,
        dev: u64,
        len: u64,
        read: impl FnOnce() -> io::Result<R>,
    ) -> Option<R> {
        let permit = self.io.acquire(dev);
        let read = read();
        permit.done(len);
        match read {
            Ok(result) => {
                self.progress.read(len);
                Some(result)
            }
            Err(e) => self.failed(path, e),
        }
    }

    /// After the last byte was read: the file must still have the size and mtime of `meta`, or
    /// what was read may be a mix of two versions.
    pub fn unchanged_after_read(
        &self,
        path: impl FnOnce() -> PathBuf,
        meta: FileMeta,
        file: &File,
    ) -> bool {
        match meta_of(file) {
            Ok(now) if meta.same_content_stamp(&now) => true,
            Ok(_) => {
                self.observer.problem(Problem::left_out(path(), ProblemKind::Changed));
                false
            }
            Err(e) => self.failed::<()>(path, e).is_some(),
        }
    }

    fn failed<T>(&self, path: impl FnOnce() -> PathBuf, e: io::Error) -> Option<T> {
        let problem = if e.kind() == io::ErrorKind::UnexpectedEof {
            Problem::left_out(path(), ProblemKind::Changed)
        } else {
            Problem::error(path(), ProblemKind::Io(e))
        };
        self.observer.problem(problem);
        None
    }
}
