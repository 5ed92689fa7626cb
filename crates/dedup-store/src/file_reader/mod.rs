//! One reader of regular files' content from snapshots, for every command that reads a file back
//! (the mount, `dump`, restore's verification): a file is opened from its node ([`FileReader::open`])
//! and read at any offset ([`SnapshotFile::read_at`], as `pread`) or chunk after chunk
//! ([`SnapshotFile::chunks`]).
//!
//! Files opened from one [`FileReader`] share its cache of opened chunks (`chunk_cache.rs`) and its
//! read-ahead threads (`read_ahead.rs`): a reader going on from where it stopped has the next
//! chunks fetched in the background, random readers get no read-ahead. Chunks are looked up in
//! the index of the moment ([`LiveIndex`]), so a file reads on across a prune. Exact by
//! construction: the bytes returned are the chunks' plaintext at the file's offsets, and a chunk
//! whose plaintext length disagrees with the index fails the read rather than shifting the file.

mod chunk_cache;
mod layout;
mod read_ahead;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

// Public for a reader of chunks that are not a snapshot's file (a writable volume's).
pub use self::chunk_cache::ChunkCache;
pub use self::read_ahead::ReadAhead;
use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::Node;
use crate::id::Id;
use crate::index::Index;
use crate::live_index::LiveIndex;
use crate::pack::pack_path;
use crate::repo::Repository;

pub use self::layout::FileLayout;

/// Chunks read ahead of a sequential reader...
const READ_AHEAD_CHUNKS: usize = 4;
/// ... or fewer, once they add up to this many bytes (a chunk may be large).
const READ_AHEAD_BYTES: u64 = 16 << 20;

/// How much a reader keeps and how many threads read ahead.
#[derive(Debug, Clone, Copy)]
pub struct ReaderOptions {
    /// Bytes of opened chunks kept for all files (read-ahead fills them too, so at least
    /// 16 MiB and a chunk for read-ahead to pay).
    pub cache_bytes: usize,
    /// Background threads that read ahead (0: none).
    pub read_ahead_threads: usize,
}

impl Default for ReaderOptions {
    /// For readers that come back: the mount, where the kernel asks for 128 KiB - 1 MiB at a
    /// time, so that a chunk serves several reads, and several files are read at once.
    fn default() -> Self {
        ReaderOptions { cache_bytes: 64 << 20, read_ahead_threads: 2 }
    }
}

impl ReaderOptions {
    /// For one pass over files, each chunk read once in order (`dump`, verification): room for
    /// the read-ahead window and the chunk being read.
    pub fn sequential() -> Self {
        ReaderOptions { cache_bytes: READ_AHEAD_BYTES as usize + (8 << 20), read_ahead_threads: 2 }
    }
}

/// What the files of one reader share.
struct Shared {
    index: Arc<LiveIndex>,
    cache: Arc<ChunkCache>,
    ahead: ReadAhead,
}

/// Opens regular files of snapshots of one repository; cheap to clone (the clones share the
/// cache and the threads, which end when the last clone and the last file opened are dropped).
#[derive(Clone)]
pub struct FileReader {
    shared: Arc<Shared>,
}

impl FileReader {
    /// A reader of `repo`'s files, looking chunks up in `index`.
    pub fn new(repo: Arc<Repository>, index: Arc<LiveIndex>, options: ReaderOptions) -> Self {
        let cache = Arc::new(ChunkCache::new(repo, options.cache_bytes));
        let ahead = ReadAhead::start(&cache, options.read_ahead_threads);
        FileReader { shared: Arc::new(Shared { index, cache, ahead }) }
    }

    /// The index chunks are looked up in.
    pub fn index(&self) -> &Arc<LiveIndex> {
        &self.shared.index
    }

    /// The layout of `node` in the index of now; `None` unless it is a regular file. Callers
    /// that open a file often keep it and open it with [`FileReader::open_layout`].
    pub fn layout(&self, node: &Node) -> Option<FileLayout> {
        FileLayout::of(node, &self.shared.index.current())
    }

    /// The regular file `node`, opened for reading.
    pub fn open(&self, node: &Node) -> Result<SnapshotFile> {
        let layout = self.layout(node).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: not a regular file in the snapshot",
                String::from_utf8_lossy(&node.name)
            ))
        })?;
        Ok(self.open_layout(Arc::new(layout)))
    }

    /// A file of `layout`, opened for reading.
    pub fn open_layout(&self, layout: Arc<FileLayout>) -> SnapshotFile {
        SnapshotFile {
            shared: Arc::clone(&self.shared),
            layout,
            last_chunk: AtomicUsize::new(NO_CHUNK),
        }
    }
}

/// `SnapshotFile::last_chunk` before the first read.
const NO_CHUNK: usize = usize::MAX;

/// A regular file of a snapshot, open for reading from any number of threads.
pub struct SnapshotFile {
    shared: Arc<Shared>,
    layout: Arc<FileLayout>,
    /// The chunk the previous read ended in: a read going on from there is sequential.
    last_chunk: AtomicUsize,
}

/// One chunk of a file and where it starts in it.
#[derive(Debug, Clone)]
pub struct FileChunk {
    /// Where the chunk starts in the file.
    pub offset: u64,
    /// Its plaintext.
    pub bytes: Arc<Vec<u8>>,
}

fn not_indexed(id: &Id) -> Error {
    Error::Missing { object: format!("data blob {id} (not in the index)") }
}

impl SnapshotFile {
    /// Bytes of content: the file's size, unless a chunk of it was missing from the index when
    /// it was opened (then the content ends before that chunk and reading past it fails).
    pub fn len(&self) -> u64 {
        self.layout.len()
    }

    /// Whether the file has no content.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    /// Its chunks and where each starts.
    pub fn layout(&self) -> &FileLayout {
        &self.layout
    }

    /// Reads up to `buf.len()` bytes at `offset` into `buf`, as `pread`: fewer only at the end of
    /// the file, 0 at or past it. Reading past the end of a file whose content ends early (a
    /// chunk missing from the index) fails, naming the chunk.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let end = offset.saturating_add(buf.len() as u64).min(self.len());
        if offset >= end {
            return match self.layout.missing() {
                Some(id) if !buf.is_empty() => Err(not_indexed(id)),
                _ => Ok(0),
            };
        }
        let first = self.layout.chunk_at(offset);
        let last = self.last_chunk.load(Ordering::Relaxed);
        let sequential = offset == 0 || (last != NO_CHUNK && (first == last || first == last + 1));
        let shared = &self.shared;
        let ended = shared.index.retry(shared.cache.repo(), |index| {
            let mut chunk = first;
            let mut at = offset;
            while at < end {
                if sequential {
                    self.queue_ahead(index, chunk + 1);
                }
                let (start, stop) = self.layout.span(chunk);
                let bytes = self.fetch(index, chunk)?;
                let to = end.min(stop);
                buf[(at - offset) as usize..(to - offset) as usize]
                    .copy_from_slice(&bytes[(at - start) as usize..(to - start) as usize]);
                at = to;
                chunk += 1;
            }
            Ok(chunk - 1)
        })?;
        self.last_chunk.store(ended, Ordering::Relaxed);
        Ok((end - offset) as usize)
    }

    /// The file's chunks in order, the next ones read ahead; memory stays within the cache and
    /// the chunks the caller holds, whatever the file's size. Ends after the first error (a
    /// chunk missing from the index, damaged, unreadable).
    pub fn chunks(&self) -> Chunks<'_> {
        Chunks { file: self, next: 0, done: false }
    }

    /// Chunk `n`, from the cache or read now, checked against its length in the layout.
    fn fetch(&self, index: &Index, n: usize) -> Result<Arc<Vec<u8>>> {
        let id = self.layout.id(n);
        let location = index.lookup(id, BlobKind::Data).ok_or_else(|| not_indexed(id))?;
        let bytes = self.shared.cache.get(&location)?;
        let (start, stop) = self.layout.span(n);
        if bytes.len() as u64 != stop - start {
            return Err(Error::damaged(
                format!("data blob {id} in {}", pack_path(&location.pack)),
                format!("opens to {} bytes, the index says {}", bytes.len(), stop - start),
            ));
        }
        Ok(bytes)
    }

    /// Asks the read-ahead threads for the chunks from `from` on that are not cached yet.
    fn queue_ahead(&self, index: &Index, from: usize) {
        let layout = &self.layout;
        let mut bytes = 0;
        for chunk in from..layout.chunk_count().min(from + READ_AHEAD_CHUNKS) {
            if bytes >= READ_AHEAD_BYTES {
                break;
            }
            let (start, stop) = layout.span(chunk);
            bytes += stop - start;
            let id = layout.id(chunk);
            if self.shared.cache.holds(id) {
                continue;
            }
            let Some(location) = index.lookup(id, BlobKind::Data) else { break };
            if !self.shared.ahead.ask(location) {
                break;
            }
        }
    }
}

/// The chunks of a file in order ([`SnapshotFile::chunks`]).
pub struct Chunks<'a> {
    file: &'a SnapshotFile,
    next: usize,
    done: bool,
}

impl Iterator for Chunks<'_> {
    type Item = Result<FileChunk>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (file, n) = (self.file, self.next);
        if n == file.layout.chunk_count() {
            self.done = true;
            return file.layout.missing().map(|id| Err(not_indexed(id)));
        }
        let shared = &file.shared;
        let fetched = shared.index.retry(shared.cache.repo(), |index| {
            file.queue_ahead(index, n + 1);
            file.fetch(index, n)
        });
        match fetched {
            Ok(bytes) => {
                self.next += 1;
                Some(Ok(FileChunk { offset: file.layout.span(n).0, bytes }))
            }
            Err(err) => {
                self.done = true;
                Some(Err(err))
            }
        }
    }
}

impl std::iter::FusedIterator for Chunks<'_> {}

#[cfg(test)]
mod tests;
