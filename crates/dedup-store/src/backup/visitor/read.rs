//! Reading one file for the snapshot so that what is stored is a state the file really had:
//! read at most what its `stat` promised (one byte more shows that it grew), then `fstat` the
//! descriptor and compare size, times and kind with the `stat` the read started from. A file
//! that changed is read once more, from its new `stat`; one that changes again, or cannot be
//! read, goes into the snapshot flagged incomplete without content, with a message saying so.
//! A pseudo file system's file is read up to a limit instead of its size, so that `/proc` ends,
//! and is taken as it reads: its size and times say nothing about its content (the kernel gives
//! a `/proc` inode the time it made it, and may make it again between two lookups).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

use dedup_scan::{EntryKind, Metadata};

use super::dir_state::Home;
use super::{BackupVisitor, FileJob};
use crate::backup::file::{chunk_file, Scheduled, StreamError};
use crate::backup::pipeline::FileStage;
use crate::backup::problems;
use crate::backup::pseudo_fs::PSEUDO_FILE_LIMIT;
use crate::chunker::ChunkStream;
use crate::format::{Content, Node};
use crate::id::Id;

/// What a read found the file to be when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The bytes read are the file as the `stat` it started from describes it.
    Whole,
    /// The file changed (size, times or kind) or is longer than its size said.
    Changed,
    /// A pseudo file system's file longer than [`PSEUDO_FILE_LIMIT`].
    TooLong,
}

/// How many bytes a read of `node` may take: more than it may hold, so that a file longer than
/// that shows; a pseudo file's by a whole page, since some take only reads of whole records
/// (`pagemap`: 8 bytes).
fn read_limit(node: &Node, pseudo: bool) -> u64 {
    if pseudo {
        PSEUDO_FILE_LIMIT + 4096
    } else {
        node.size.saturating_add(1)
    }
}

/// Judges a read of `read` bytes of the file `node` described when the read began, `after`
/// its `fstat` once the read ended (`None` when that failed).
fn judge(node: &Node, pseudo: bool, read: u64, after: Option<&Metadata>) -> Outcome {
    if pseudo && read > PSEUDO_FILE_LIMIT {
        return Outcome::TooLong;
    }
    let Some(after) = after else { return Outcome::Changed };
    // Not the device and inode: a file put in place of the one listed has other times (its
    // ctime is set when it is made or renamed), and an overlay file system of before Linux
    // 4.19 gives a descriptor another device and inode than a `stat` of its path.
    let same = after.kind == EntryKind::File
        && (pseudo
            || (after.mtime_ns == node.mtime
                && after.ctime_ns == node.ctime
                && read == node.size
                && after.size == read));
    if same {
        Outcome::Whole
    } else {
        Outcome::Changed
    }
}

/// `node` made to describe the file as `after` found it, for a second read (its atime stays the
/// one from before the backup touched it).
fn describe_again(node: &mut Node, after: &Metadata) {
    node.mode = after.mode;
    node.uid = after.uid;
    node.gid = after.gid;
    node.size = after.size;
    node.mtime = after.mtime_ns;
    node.ctime = after.ctime_ns;
    node.dev = after.dev;
    node.ino = after.ino;
    node.nlink = after.nlink;
}

/// A reader that counts what it hands out: how far a read that failed got.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// The end of one read of a file.
enum Attempt {
    /// Read to the end or the limit: the chunks, the length read and what `fstat` said after.
    Read(Vec<Id>, u64, Option<Metadata>),
    /// Reading failed after this many bytes.
    Failed(io::Error, u64),
    /// The repository failed: the backup stops.
    Stopped,
}

impl BackupVisitor<'_, '_> {
    /// The file stage's work on one queued file: read, chunk, hash, look up, queue new chunks
    /// for sealing; then the node goes to its directory.
    pub(super) fn run_queued_file(&self, job: FileJob, buf: &mut Vec<u8>) {
        let FileJob { mut node, file, home, shown } = job;
        if !self.failed() {
            let window = ChunkStream::<&[u8]>::usual_window(self.sink.repo().chunker());
            self.progress.start_reading(&shown);
            self.read_file(&mut node, &file, || shown.clone(), buf, window);
            self.progress.done_reading(&shown);
        }
        self.deliver(home.clone(), node);
        if let Home::Dir(dir) = home {
            self.release(dir);
        }
    }

    /// Reads `file` through a window of `window` bytes in `buf` and gives `node` its chunks, or
    /// flags it incomplete; `shown` names it in a problem.
    pub(super) fn read_file(
        &self,
        node: &mut Node,
        file: &File,
        shown: impl Fn() -> PathBuf,
        buf: &mut Vec<u8>,
        window: usize,
    ) {
        let pseudo = self.pseudo.contains(node.dev, file);
        let mut again = false;
        loop {
            let (chunks, read, after) = match self.attempt(node, file, pseudo, buf, window) {
                Attempt::Read(chunks, read, after) => (chunks, read, after),
                Attempt::Failed(err, read) => {
                    return self.unread(node, problems::unreadable_after(shown(), &err, read));
                }
                Attempt::Stopped => return,
            };
            match judge(node, pseudo, read, after.as_ref()) {
                Outcome::Whole => {
                    node.content = Content::Chunks(chunks);
                    if pseudo {
                        node.size = read;
                    }
                    if again {
                        self.report(problems::changed_once(shown()));
                    }
                    return;
                }
                Outcome::TooLong => {
                    return self
                        .unread(node, problems::pseudo_too_long(shown(), PSEUDO_FILE_LIMIT));
                }
                Outcome::Changed if again => {
                    return self.unread(node, problems::changed_twice(shown()));
                }
                Outcome::Changed => {
                    let Some(after) = after.filter(|a| a.kind == EntryKind::File) else {
                        return self.unread(node, problems::changed_twice(shown()));
                    };
                    describe_again(node, &after);
                    if let Err(err) = (&mut &*file).seek(SeekFrom::Start(0)) {
                        return self.unread(node, problems::unreadable(shown(), &err));
                    }
                    again = true;
                }
            }
        }
    }

    /// One read of `file` from its start, up to what `node` says it may hold.
    fn attempt(
        &self,
        node: &Node,
        file: &File,
        pseudo: bool,
        buf: &mut Vec<u8>,
        window: usize,
    ) -> Attempt {
        let scheduled = Scheduled { file, io: &self.stages.reads, dev: node.dev };
        let mut reader = Counted { inner: scheduled.take(read_limit(node, pseudo)), count: 0 };
        let seal = &self.stages.seal;
        match chunk_file(self.sink, &mut reader, buf, window, seal, self.progress) {
            Ok((chunks, read)) => {
                let after = rustix::fs::fstat(file).ok();
                Attempt::Read(chunks, read, after.as_ref().and_then(Metadata::from_stat))
            }
            Err(StreamError::Read(err)) => Attempt::Failed(err, reader.count),
            Err(StreamError::Store(err)) => {
                self.fail(err);
                Attempt::Stopped
            }
        }
    }

    /// Flags `node` incomplete, without content, and reports why.
    fn unread(&self, node: &mut Node, problem: dedup_core::Problem) {
        node.incomplete = true;
        node.content = Content::Chunks(Vec::new());
        self.report(problem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::NodeKind;

    fn node(size: u64) -> Node {
        Node { kind: NodeKind::File, size, mtime: 10, ctime: 20, dev: 1, ino: 2, ..Node::default() }
    }

    fn meta(size: u64, mtime: i64, ctime: i64, ino: u64) -> Metadata {
        Metadata {
            kind: EntryKind::File,
            mode: 0o644,
            uid: 0,
            gid: 0,
            size,
            blocks: 0,
            nlink: 1,
            dev: 1,
            ino,
            rdev: 0,
            atime_ns: 0,
            mtime_ns: mtime,
            ctime_ns: ctime,
        }
    }

    #[test]
    fn a_read_is_whole_only_when_size_times_and_kind_held() {
        let n = node(100);
        assert_eq!(judge(&n, false, 100, Some(&meta(100, 10, 20, 2))), Outcome::Whole);
        // Grew during the read: more than the stat said was there.
        assert_eq!(judge(&n, false, 101, Some(&meta(150, 10, 20, 2))), Outcome::Changed);
        // Shrank.
        assert_eq!(judge(&n, false, 40, Some(&meta(40, 10, 20, 2))), Outcome::Changed);
        // Rewritten in place, same size.
        assert_eq!(judge(&n, false, 100, Some(&meta(100, 11, 21, 2))), Outcome::Changed);
        // Metadata changed (ctime alone).
        assert_eq!(judge(&n, false, 100, Some(&meta(100, 10, 21, 2))), Outcome::Changed);
        // Another file, made at another time, now stands at the path.
        assert_eq!(judge(&n, false, 100, Some(&meta(100, 12, 22, 3))), Outcome::Changed);
        assert_eq!(judge(&n, false, 100, None), Outcome::Changed);
        let mut dir = meta(100, 10, 20, 2);
        dir.kind = EntryKind::Dir;
        assert_eq!(judge(&n, false, 100, Some(&dir)), Outcome::Changed);
    }

    #[test]
    fn a_pseudo_file_is_whole_whatever_its_size_says_up_to_the_limit() {
        let n = node(0);
        assert_eq!(judge(&n, true, 1500, Some(&meta(0, 10, 20, 2))), Outcome::Whole);
        let over = PSEUDO_FILE_LIMIT + 1;
        assert_eq!(judge(&n, true, over, Some(&meta(0, 10, 20, 2))), Outcome::TooLong);
        // Its times and inode say nothing either.
        assert_eq!(judge(&n, true, 10, Some(&meta(0, 11, 21, 3))), Outcome::Whole);
        let mut dir = meta(0, 10, 20, 2);
        dir.kind = EntryKind::Dir;
        assert_eq!(judge(&n, true, 10, Some(&dir)), Outcome::Changed);
        assert!(read_limit(&n, true) > PSEUDO_FILE_LIMIT);
        assert_eq!(read_limit(&node(7), false), 8);
        assert_eq!(read_limit(&node(u64::MAX), false), u64::MAX);
    }

    #[test]
    fn a_second_read_starts_from_what_the_file_became() {
        let mut n = node(100);
        n.atime = 5;
        describe_again(&mut n, &meta(150, 11, 21, 2));
        assert_eq!((n.size, n.mtime, n.ctime, n.atime), (150, 11, 21, 5));
        assert_eq!(judge(&n, false, 150, Some(&meta(150, 11, 21, 2))), Outcome::Whole);
    }
}
