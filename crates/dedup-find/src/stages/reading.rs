//! The content stages' view of the shared read path ([`dedup_scan::read::Reader`]): files are
//! named by their inode's first path in the walked tree, and the tree decides whether that path
//! may be followed through a symlink. They are opened by that path; the identity check against
//! the walk (device, inode, size, times) decides whether what was opened may be used.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use dedup_cache::Digest;
use dedup_core::Progress;
use dedup_scan::read::{digest_opened, Reader};
use dedup_scan::{check_recorded, open_for_read, ReadBuf};

use crate::stages::candidates::Inode;
use crate::tree::Tree;

/// What the content stages need from the run: where paths live, and the reader.
pub(crate) struct Reading<'a> {
    pub tree: &'a Tree,
    pub reader: Reader<'a>,
    pub follow_links: bool,
}

impl<'a> Reading<'a> {
    /// Reading the files of `tree` through `reader`; `follow_links` as the walk was told.
    pub fn new(tree: &'a Tree, reader: Reader<'a>, follow_links: bool) -> Reading<'a> {
        Reading { tree, reader, follow_links }
    }
    /// Counts bytes read and stage progress.
    pub fn progress(&self) -> &Progress {
        self.reader.progress
    }

    /// `f` of every item, in order, on a crew of at most `most` threads ([`Reader::each`]).
    pub fn each<T: Send, R: Send>(
        &self,
        items: Vec<T>,
        most: usize,
        f: &(dyn Fn(T) -> R + Sync),
    ) -> Vec<R> {
        self.reader.each(items, most, f)
    }

    /// Each set's members with their key, all sets read on one crew ([`Reader::keyed_sets`]).
    pub fn keyed_sets<T: Copy + Send + Sync, K: Send>(
        &self,
        sets: Vec<Vec<T>>,
        key: &(dyn Fn(usize, &T) -> Option<K> + Sync),
    ) -> Vec<Vec<(K, T)>> {
        self.reader.keyed_sets(sets, key)
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

    /// Open the inode's first path, not yet knowing whether it is still the file the walk saw.
    fn open_path(&self, inode: &Inode) -> io::Result<File> {
        open_for_read(&self.path(inode), self.follows(inode))
    }

    /// Open the inode, checking that it is still the file the walk saw.
    pub fn open(&self, inode: &Inode) -> Option<File> {
        let meta = *inode.meta(self.tree);
        self.reader.open_by(|| self.path(inode), meta, || self.open_path(inode))
    }

    /// Open the inode as [`Reading::open`] does, but leave a failure unreported: for reads that
    /// only prepare (reading ahead, finding where a file lies), after which the file's real read
    /// reports what is wrong with it.
    pub fn open_quietly(&self, inode: &Inode) -> Option<File> {
        check_recorded(self.open_path(inode).ok()?, inode.meta(self.tree)).ok()
    }

    /// Open the inode for [`Reading::read_then_check`], which checks what was opened once it
    /// has read it whole.
    pub fn open_unchecked(&self, inode: &Inode) -> Option<File> {
        self.reader.open_unchecked(|| self.path(inode), || self.open_path(inode))
    }

    /// Run `read`, which reads the whole inode from `file` ([`Reading::open_unchecked`]), then
    /// check that it was the file the walk saw, unchanged ([`Reader::read_then_check`]).
    pub fn read_then_check<R>(
        &self,
        inode: &Inode,
        file: &File,
        read: impl FnOnce() -> io::Result<R>,
    ) -> Option<R> {
        self.reader.read_then_check(|| self.path(inode), *inode.meta(self.tree), file, read)
    }

    /// Read the whole inode into a buffer that is dropped, for a read whose bytes are wanted
    /// later from the page cache (a timed read of a file the full comparison reads anyway).
    /// Nothing is reported: the later read reports what is wrong. Counted as a read of its
    /// device in the scheduler's eyes, and in progress.
    pub fn read_into_cache(&self, inode: &Inode) -> bool {
        let Some(file) = self.open_quietly(inode) else { return false };
        let size = inode.meta(self.tree).size;
        let Ok(len) = usize::try_from(size) else { return false };
        let mut buf = ReadBuf::new(len);
        let permit = self.reader.io.acquire(self.dev(inode));
        let read = file.read_exact_at(buf.bytes_mut(), 0);
        permit.done(size);
        if read.is_ok() {
            self.reader.progress.read(size);
        }
        read.is_ok()
    }

    /// The device the inode lies on.
    pub fn dev(&self, inode: &Inode) -> u64 {
        inode.meta(self.tree).id.dev
    }

    /// Fill `buf` from `offset`. A file that ends early has shrunk since the walk.
    pub fn read_at(&self, inode: &Inode, file: &File, buf: &mut [u8], offset: u64) -> Option<()> {
        let dev = inode.meta(self.tree).id.dev;
        self.reader.read_at(|| self.path(inode), dev, file, buf, offset)
    }

    /// Run `read`, which reads `len` bytes of the inode in as many requests as it likes, as one
    /// read in the scheduler's eyes.
    pub fn read_with<R>(
        &self,
        inode: &Inode,
        len: u64,
        read: impl FnOnce() -> io::Result<R>,
    ) -> Option<R> {
        let dev = inode.meta(self.tree).id.dev;
        self.reader.read_with(|| self.path(inode), dev, len, read)
    }

    /// After the last byte was read: the file must still have the size and mtime of the walk.
    pub fn unchanged_after_read(&self, inode: &Inode, file: &File) -> bool {
        self.reader.unchanged_after_read(|| self.path(inode), *inode.meta(self.tree), file)
    }

    /// The BLAKE3 digest of the whole inode, read start to end; `None` when it cannot be read
    /// or changed while being read (the reader has reported why).
    pub fn digest(&self, inode: &Inode) -> Option<Digest> {
        let file = self.open(inode)?;
        digest_opened(&self.reader, || self.path(inode), &file, *inode.meta(self.tree))
    }
}
