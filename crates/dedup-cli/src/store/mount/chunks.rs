//! File content for the mount, read chunk by chunk: a file's layout (its chunks and where each
//! starts in the file), a small cache of opened chunks (decrypted,
//! decompressed, verified) shared by every open file, and read-ahead of the chunks after a
//! sequential read on background threads, so that the next chunk is usually opened before the
//! kernel asks for it.
//!
//! A chunk is fetched once however many readers want it at the same moment: the first one reads
//! it, the others wait on its slot. The cache is bounded in bytes and forgets the chunk least
//! recently used; the kernel's page cache keeps what was read, so this cache only bridges the
//! kernel's small reads (128 KiB - 1 MiB) within one chunk and holds what read-ahead fetched.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

use dedup_store::blob::BlobKind;
use dedup_store::index::{Index, Location};
use dedup_store::repo::Repository;
use dedup_store::Id;

/// Bytes of opened chunks kept.
pub const CACHE_BYTES: usize = 64 << 20;
/// Chunks read ahead of a sequential reader...
const READ_AHEAD_CHUNKS: usize = 4;
/// ... or fewer, once they add up to this many bytes (chunks may be up to 64 MiB).
const READ_AHEAD_BYTES: u64 = 16 << 20;
/// Background threads that read ahead.
const READ_AHEAD_THREADS: usize = 2;
/// Read-ahead requests waiting at most; more are dropped (the reader fetches itself).
const READ_AHEAD_QUEUE: usize = 64;

/// A regular file's chunks and where each starts in the file. Where a chunk lies in the
/// repository is looked up at each read, in the index of the moment: a prune while mounted
/// moves chunks to other packs, and the index read again after it finds them there.
pub struct Layout {
    ids: Vec<Id>,
    /// Where each chunk starts in the file, and one more entry: the end of the last.
    starts: Vec<u64>,
    /// A chunk is missing from the index: the file's content ends before it (reads past
    /// `len()` fail).
    broken: bool,
}

impl Layout {
    /// The layout of `chunks`, their lengths looked up in `index` (in memory, no I/O).
    pub fn new(index: &Index, chunks: &[Id]) -> Layout {
        let mut ids = Vec::with_capacity(chunks.len());
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0u64;
        starts.push(0);
        let mut broken = false;
        for id in chunks {
            let Some(location) = index.lookup(id, BlobKind::Data) else {
                broken = true;
                break;
            };
            at += u64::from(location.entry.raw_len);
            ids.push(*id);
            starts.push(at);
        }
        Layout { ids, starts, broken }
    }

    /// Bytes of content the layout can give.
    pub fn len(&self) -> u64 {
        *self.starts.last().expect("starts holds one more entry than the chunks")
    }

    /// Whether a chunk could not be found.
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// The chunk holding byte `offset` (which is below `len()`).
    fn chunk_at(&self, offset: u64) -> usize {
        self.starts.partition_point(|&start| start <= offset) - 1
    }
}

/// A chunk being fetched or fetched: `Err` holds the message of a failed fetch.
type Slot = OnceLock<Result<Arc<Vec<u8>>, String>>;

#[derive(Default)]
struct Slots {
    map: HashMap<Id, (Arc<Slot>, u64)>,
    clock: u64,
}

/// The opened chunks, bounded in bytes.
pub struct ChunkCache {
    repo: Arc<Repository>,
    slots: Mutex<Slots>,
    capacity: usize,
}

impl ChunkCache {
    /// A cache of at most `capacity` bytes of chunks of `repo`.
    pub fn new(repo: Arc<Repository>, capacity: usize) -> ChunkCache {
        ChunkCache { repo, slots: Mutex::new(Slots::default()), capacity }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the chunk is cached or being fetched.
    fn holds(&self, id: &Id) -> bool {
        self.lock().map.contains_key(id)
    }

    /// The plaintext of the chunk at `location`, from the cache or read now.
    pub fn get(&self, location: &Location) -> Result<Arc<Vec<u8>>, String> {
        let id = location.entry.id;
        let slot = {
            let mut slots = self.lock();
            slots.clock += 1;
            let now = slots.clock;
            let (slot, used) = slots.map.entry(id).or_insert_with(|| (Arc::default(), now));
            *used = now;
            Arc::clone(slot)
        };
        let mut fetched = false;
        let result = slot
            .get_or_init(|| {
                fetched = true;
                self.repo
                    .read_blob_at(location, BlobKind::Data)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone();
        if fetched {
            let mut slots = self.lock();
            let ours = slots.map.get(&id).is_some_and(|(kept, _)| Arc::ptr_eq(kept, &slot));
            if result.is_err() && ours {
                // A failure is not kept: the next read tries again (a network error may pass).
                slots.map.remove(&id);
            }
            self.evict(&mut slots);
        }
        result
    }

    /// Forgets the least recently used chunks until the cache is within its capacity; chunks
    /// still being fetched stay.
    fn evict(&self, slots: &mut Slots) {
        let mut filled: Vec<(u64, Id, usize)> = slots
            .map
            .iter()
            .filter_map(|(id, (slot, used))| match slot.get() {
                Some(Ok(bytes)) => Some((*used, *id, bytes.len())),
                _ => None,
            })
            .collect();
        let mut total: usize = filled.iter().map(|f| f.2).sum();
        if total <= self.capacity {
            return;
        }
        filled.sort_unstable_by_key(|f| f.0);
        for (_, id, len) in filled {
            if total <= self.capacity {
                break;
            }
            slots.map.remove(&id);
            total -= len;
        }
    }
}

/// A request to fetch one chunk into the cache ahead of its reader.
struct Ahead {
    location: Location,
}

/// Why a read failed.
#[derive(Debug)]
pub enum ReadError {
    /// A chunk is not in the index (a prune may have moved it since the index was read).
    NotIndexed(Id),
    /// Anything else, as a message.
    Failed(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotIndexed(id) => write!(f, "data blob {id} is not in the index"),
            ReadError::Failed(message) => f.write_str(message),
        }
    }
}

/// Reads files' content through the chunk cache and reads ahead for sequential readers.
pub struct ContentReader {
    cache: Arc<ChunkCache>,
    ahead: SyncSender<Ahead>,
}

impl ContentReader {
    /// A reader of `repo`'s chunks with its read-ahead threads (they end with the reader).
    pub fn new(repo: Arc<Repository>) -> ContentReader {
        let cache = Arc::new(ChunkCache::new(repo, CACHE_BYTES));
        let (ahead, requests) = sync_channel(READ_AHEAD_QUEUE);
        let requests = Arc::new(Mutex::new(requests));
        for n in 0..READ_AHEAD_THREADS {
            let (cache, requests) = (Arc::clone(&cache), Arc::clone(&requests));
            // Without its threads the mount still reads, only without read-ahead.
            let _ = std::thread::Builder::new()
                .name(format!("dedup-read-ahead-{n}"))
                .spawn(move || read_ahead(&cache, &requests));
        }
        ContentReader { cache, ahead }
    }

    /// Up to `size` bytes of the file at `offset` (fewer only at its end), its chunks found in
    /// `index`. `after` is the last chunk the reader's previous read ended in: going on from
    /// there, the chunks after are read ahead. Returns the bytes and the last chunk read.
    pub fn read(
        &self,
        layout: &Layout,
        index: &Index,
        offset: u64,
        size: u32,
        after: Option<usize>,
    ) -> Result<(Vec<u8>, Option<usize>), ReadError> {
        let end = offset.saturating_add(u64::from(size)).min(layout.len());
        if offset >= end {
            if layout.broken() && size > 0 {
                return Err(ReadError::Failed(
                    "a chunk of this file is not in the repository's index".into(),
                ));
            }
            return Ok((Vec::new(), after));
        }
        let first = layout.chunk_at(offset);
        let sequential =
            offset == 0 || after.is_some_and(|last| first == last || first == last + 1);
        let locate = |chunk: usize| {
            let id = layout.ids[chunk];
            index.lookup(&id, BlobKind::Data).ok_or(ReadError::NotIndexed(id))
        };
        let mut out = Vec::with_capacity((end - offset) as usize);
        let mut chunk = first;
        let mut at = offset;
        while at < end {
            let (start, stop) = (layout.starts[chunk], layout.starts[chunk + 1]);
            if sequential {
                self.queue_ahead(layout, index, chunk + 1);
            }
            let location = locate(chunk)?;
            let bytes = self.cache.get(&location).map_err(ReadError::Failed)?;
            if bytes.len() as u64 != stop - start {
                return Err(ReadError::Failed(format!(
                    "data blob {} opens to {} bytes, the index says {}",
                    layout.ids[chunk],
                    bytes.len(),
                    stop - start
                )));
            }
            let to = end.min(stop);
            out.extend_from_slice(&bytes[(at - start) as usize..(to - start) as usize]);
            at = to;
            chunk += 1;
        }
        Ok((out, Some(chunk - 1)))
    }

    /// Asks the read-ahead threads for the chunks from `from` on that are not cached yet.
    fn queue_ahead(&self, layout: &Layout, index: &Index, from: usize) {
        let mut bytes = 0;
        for chunk in from..layout.ids.len().min(from + READ_AHEAD_CHUNKS) {
            if bytes >= READ_AHEAD_BYTES {
                break;
            }
            bytes += layout.starts[chunk + 1] - layout.starts[chunk];
            let id = layout.ids[chunk];
            if self.cache.holds(&id) {
                continue;
            }
            let Some(location) = index.lookup(&id, BlobKind::Data) else { break };
            if self.ahead.try_send(Ahead { location }).is_err() {
                break;
            }
        }
    }
}

/// A read-ahead thread: fetches each requested chunk into the cache (errors are left to the
/// reader, which fetches again and reports them). Ends when the reader is dropped.
fn read_ahead(cache: &ChunkCache, requests: &Mutex<Receiver<Ahead>>) {
    loop {
        let next = requests.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(Ahead { location }) = next else { return };
        let _ = cache.get(&location);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_store::format::{BlobEntry, Compression};

    fn id(n: u8) -> Id {
        Id([n; 32])
    }

    fn index_of(lengths: &[u32]) -> Index {
        let mut offset = 0;
        let blobs: Vec<BlobEntry> = lengths
            .iter()
            .enumerate()
            .map(|(n, &raw_len)| {
                let entry = BlobEntry {
                    id: id(n as u8 + 1),
                    compression: Compression::None,
                    offset,
                    stored_len: raw_len + 40,
                    raw_len,
                };
                offset += raw_len + 40;
                entry
            })
            .collect();
        let mut index = Index::new();
        index.add_pack(id(200), BlobKind::Data, &blobs);
        index
    }

    #[test]
    fn each_offset_falls_in_the_chunk_that_holds_it() {
        let index = index_of(&[10, 5, 20]);
        let layout = Layout::new(&index, &[id(1), id(2), id(3), id(2)]);
        assert_eq!(layout.len(), 40);
        assert!(!layout.broken());
        let chunks: Vec<usize> = [0, 9, 10, 14, 15, 34, 35, 39].map(|o| layout.chunk_at(o)).into();
        assert_eq!(chunks, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(layout.ids[3], id(2));
    }

    #[test]
    fn a_chunk_missing_from_the_index_ends_the_content_before_it() {
        let index = index_of(&[10, 5]);
        let layout = Layout::new(&index, &[id(1), id(9), id(2)]);
        assert!(layout.broken());
        assert_eq!(layout.len(), 10);
        assert_eq!(Layout::new(&index, &[]).len(), 0);
    }
}
