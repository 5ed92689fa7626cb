//! The volume's side of the repository: chunks in (each looked up in the index held in memory;
//! only new ones are compressed, sealed and packed), chunks out (through the snapshot reader's
//! chunk cache, filled ahead of a sequential reader by its read-ahead threads, and from memory
//! while their pack is still open), and the chunks a hole stands for at a commit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use dedup_store::blob::{blob_id, BlobKind};
use dedup_store::file_reader::{ChunkCache, ReadAhead};
use dedup_store::repo::{BlobSink, Repository};
use dedup_store::{Error, Id};

use super::seal_pool::{FileSealing, SealPool, Storage};

/// Threads that compress, seal and pack new chunks beside the FUSE threads: one per core, at
/// least two (on 2 cores sealing is most of a first write's work) and at most this many (the
/// kernel sends a file's pages 1 MiB at a time to two FUSE threads, and the chunker and the
/// hashing of a first write stay on those).
const MOST_SEAL_THREADS: usize = 8;

/// How many sealing threads this machine gets.
fn seal_threads() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from).clamp(2, MOST_SEAL_THREADS)
}

/// Chunks smaller than this are sealed on the thread that cut them: handing one to a sealing
/// thread, and waiting for it at `close`, costs two thread switches, more than sealing it (the
/// one chunk of a small file, cut at its `close`).
const SEAL_HERE_BELOW: usize = 64 << 10;

/// Bytes of opened chunks kept for reads: the read-ahead window ([`READ_AHEAD_BYTES`]) and the
/// chunks being read (a reader going through a file in requests smaller than a chunk opens each
/// chunk once). They stay resident once read, so no more than that.
const CACHED_BYTES: usize = 16 << 20;

/// Threads that open (read, decrypt, decompress, verify) the chunks ahead of a sequential
/// reader, so that the FUSE threads copy rather than decrypt; the machine kind has 2 cores.
const READ_AHEAD_THREADS: usize = 2;

/// How far ahead of a sequential reader chunks are opened, at most: enough to keep both
/// read-ahead threads busy while the kernel asks for its next 4 MiB.
pub const READ_AHEAD_BYTES: u64 = 8 << 20;

/// Chunks a file may take at most, its holes counted as chunks of zeros of the repository's
/// largest size (docs/store-format.md, "Volumes"): a commit holds a file's chunk list in memory,
/// 64 MiB of ids at this bound, so `truncate -s 1E` cannot take the mount's memory until the
/// kernel kills it (and every write since the last commit with it). 16 TiB with the default
/// chunker (8 MiB), as on ext4 with blocks of 4 KiB.
const MOST_CHUNKS_PER_FILE: u64 = 1 << 21;

/// Open data packs the volume spreads its new chunks over. A chunk is held in memory until its
/// pack is written: with the sink's four, incompressible data reaches [`HELD_MAX`] when each
/// pack is half full, and the thread that crosses it writes and syncs all four; with two, they
/// fill first and are written by the sealing threads, two at a time.
const DATA_SLOTS: usize = 2;

/// Stored chunks kept in memory until their pack is written, when they become readable from it.
struct Unpacked {
    chunks: HashMap<Id, Arc<Vec<u8>>>,
    bytes: usize,
    /// `bytes` from which the next sweep runs: a sweep looks at every chunk held, so it runs
    /// once per [`SWEEP_STEP`] bytes stored, not for every chunk while many are held.
    sweep_at: usize,
}

/// Bytes of chunks stored between two sweeps of those whose pack has been written.
const SWEEP_STEP: usize = 8 << 20;

/// Bytes of chunks held, at most, once a sweep has let go of those whose pack is written. A
/// chunk is held from its cut until its pack is written: queued for a sealing thread, then in
/// one of the sink's open packs, which fill up to a pack size (16 MiB) of *sealed* bytes each,
/// [`DATA_SLOTS`] of them, so behind them the raw bytes of compressible data are several times
/// that; above the slots' pack sizes, so that incompressible data fills its packs before it
/// comes to the bound. Past it the open packs are written at once (smaller packs rather than
/// more memory), so what is held stays below it plus [`SWEEP_STEP`] plus the chunks being
/// sealed meanwhile (the sealing queue's and one per thread), whatever the volume's size.
const HELD_MAX: usize = 64 << 20;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Chunks in and out of the repository.
pub struct VolumeStore {
    repo: &'static Repository,
    /// Opened chunks of written packs, shared with the read-ahead threads.
    cache: Arc<ChunkCache>,
    ahead: ReadAhead,
    sink: Arc<BlobSink<'static>>,
    /// Seals new chunks off the FUSE threads (`None`: on them, no thread could be started).
    pool: Option<SealPool>,
    /// Write failures met so far, by anyone: a commit during which one happened is not written.
    failures: Arc<AtomicU64>,
    /// Held shared by each [`VolumeStore::store`] until its chunk (and any pack it filled) is
    /// handed over: in an open pack, a sealing job, or written. A commit's
    /// [`VolumeStore::flush`] holds it alone while it waits for the sealing jobs and writes the
    /// open packs, so that no pack holding a chunk the commit names is still in a thread's
    /// hands (taken out of its slot, not yet written) when the index and snapshot are written.
    storing: RwLock<()>,
    /// Set while a thread writes the open packs to let go of what they hold ([`HELD_MAX`]).
    writing_packs: AtomicBool,
    unpacked: Mutex<Unpacked>,
    /// The id of a run of `len` zeros, by `len`.
    zeros: Mutex<HashMap<usize, Id>>,
    /// How long the chunker cuts a long run of zeros.
    zero_chunk: usize,
    /// The id of a chunk of `zero_chunk` zeros: the chunks a commit lists for a hole.
    zero_chunk_id: Id,
}

impl VolumeStore {
    /// Over the repository `repo` (`shared`, the same, for the reading threads) and a session
    /// `sink` of it.
    pub fn new(
        repo: &'static Repository,
        shared: Arc<Repository>,
        sink: BlobSink<'static>,
    ) -> VolumeStore {
        let cache = Arc::new(ChunkCache::new(shared, CACHED_BYTES));
        let ahead = ReadAhead::start(&cache, READ_AHEAD_THREADS);
        let max = repo.chunker().max_size();
        let zeros = vec![0; max];
        let zero_chunk = repo.chunker().cut(&zeros);
        let zero_chunk_id = blob_id(&repo.keys().id, &zeros[..zero_chunk]);
        sink.use_data_slots(DATA_SLOTS);
        let sink = Arc::new(sink);
        let failures = Arc::new(AtomicU64::new(0));
        let storage: Arc<dyn Storage> = Arc::clone(&sink) as _;
        let pool = SealPool::start(&storage, seal_threads(), &failures);
        VolumeStore {
            repo,
            cache,
            ahead,
            sink,
            pool,
            failures,
            storing: RwLock::new(()),
            writing_packs: AtomicBool::new(false),
            unpacked: Mutex::new(Unpacked {
                chunks: HashMap::new(),
                bytes: 0,
                sweep_at: SWEEP_STEP,
            }),
            zeros: Mutex::new(HashMap::new()),
            zero_chunk,
            zero_chunk_id,
        }
    }

    pub fn repo(&self) -> &'static Repository {
        self.repo
    }

    pub fn sink(&self) -> &BlobSink<'static> {
        &self.sink
    }

    /// The length of chunk `id` (`None`: the index does not know it).
    pub fn chunk_len(&self, id: &Id) -> Option<u64> {
        self.sink.locate(id, BlobKind::Data).map(|l| u64::from(l.entry.raw_len))
    }

    /// The bytes of chunk `id`.
    pub fn fetch(&self, id: &Id) -> Result<Arc<Vec<u8>>, Error> {
        if let Some(bytes) = lock(&self.unpacked).chunks.get(id) {
            return Ok(Arc::clone(bytes));
        }
        let location = self.sink.locate(id, BlobKind::Data).ok_or_else(|| Error::Missing {
            object: format!("data blob {id} (not in the index)"),
        })?;
        let bytes = self.cache.get(&location)?;
        if bytes.len() as u64 != u64::from(location.entry.raw_len) {
            // The caller slices the chunk by the length the index gave when the file was
            // loaded: a chunk that opens to another length is damage, not a panic.
            return Err(Error::damaged(
                format!("data blob {id} in pack {}", location.pack),
                format!(
                    "opens to {} bytes, the index says {}",
                    bytes.len(),
                    location.entry.raw_len
                ),
            ));
        }
        Ok(bytes)
    }

    /// Asks the read-ahead threads to open `ids` (chunks a sequential reader comes to next)
    /// unless they are open already or still held in memory; stops at the first the queue
    /// cannot take.
    pub fn read_ahead(&self, ids: &[Id]) {
        for id in ids {
            if self.cache.holds(id) || lock(&self.unpacked).chunks.contains_key(id) {
                continue;
            }
            let Some(location) = self.sink.locate(id, BlobKind::Data) else { continue };
            if !self.ahead.ask(location) {
                break;
            }
        }
    }

    /// `result` of a write to the storage: after an error every open pack is given up, so that
    /// the space it took (chunks of files perhaps deleted since) is free again; the chunks the
    /// next commit names are stored again from memory ([`VolumeStore::ensure_stored`]).
    fn written<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        if result.is_err() {
            self.failures.fetch_add(1, Ordering::SeqCst);
            self.sink.abandon_open_packs();
        }
        result
    }

    /// Write failures met so far: a commit compares them before and after it runs.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::SeqCst)
    }

    /// Stores `bytes` as a chunk unless the repository has it (on a sealing thread where there
    /// is one, counted in `file`'s sealing, made when it is the first, which the file's `close`
    /// waits for); returns its id. The bytes are held until their pack is written, for reads
    /// and for storing again after a failure.
    pub fn store(&self, bytes: &[u8], file: &mut Option<Arc<FileSealing>>) -> Result<Id, Error> {
        let id = blob_id(&self.repo.keys().id, bytes);
        if self.sink.contains(&id, BlobKind::Data) {
            return Ok(id);
        }
        let (held, too_much) = {
            let mut unpacked = lock(&self.unpacked);
            if let Some(held) = unpacked.chunks.get(&id) {
                (Arc::clone(held), false)
            } else {
                let held = Arc::new(bytes.to_vec());
                unpacked.bytes += bytes.len();
                unpacked.chunks.insert(id, Arc::clone(&held));
                let swept = unpacked.bytes > unpacked.sweep_at && {
                    self.sweep(&mut unpacked);
                    true
                };
                (held, swept && unpacked.bytes > HELD_MAX)
            }
        };
        let _storing = self.storing.read().unwrap_or_else(PoisonError::into_inner);
        let unqueued = match &self.pool {
            Some(pool) if bytes.len() >= SEAL_HERE_BELOW => {
                let file = file.get_or_insert_with(Arc::default);
                pool.submit(id, held, Some(file)).err()
            }
            _ => Some(held),
        };
        if let Some(bytes) = unqueued {
            self.seal_here(id, &bytes)?;
        }
        if too_much {
            self.write_open_packs()?;
        }
        Ok(id)
    }

    /// Seals and packs chunk `id` of `bytes` on this thread (a FUSE thread, for a small
    /// chunk). A pack it fills is written (fsync, rename, index entry) on a sealing thread, so
    /// that the request that filled it does not wait for the disk. That is safe because a
    /// chunk counts as written only once its pack is indexed: until then its bytes stay held
    /// here (reads and a commit's storing again find them), its claim in the sink makes it
    /// stored for [`BlobSink::contains`] only, and a commit waits for every sealing job
    /// ([`VolumeStore::flush`]) before it writes the index and the snapshot that name it. A
    /// failure writing the pack is counted, and kept for the next `close` (it belongs to no
    /// one file).
    fn seal_here(&self, id: Id, bytes: &[u8]) -> Result<(), Error> {
        let (_, full) =
            self.written(self.sink.store_leaving_full_pack(id, BlobKind::Data, bytes))?;
        let Some(pack) = full else { return Ok(()) };
        let unqueued = match &self.pool {
            Some(pool) => pool.finish(pack).err(),
            None => Some(pack),
        };
        if let Some(pack) = unqueued {
            self.written(self.sink.write_full_pack(pack))?;
        }
        Ok(())
    }

    /// Writes the sink's open data packs and lets go of their chunks ([`HELD_MAX`]); one
    /// thread at a time, the others go on storing meanwhile.
    fn write_open_packs(&self) -> Result<(), Error> {
        if self.writing_packs.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let written = self.written(self.sink.write_open_packs(BlobKind::Data));
        self.writing_packs.store(false, Ordering::SeqCst);
        written?;
        self.sweep(&mut lock(&self.unpacked));
        Ok(())
    }

    /// At a `close` of a file whose chunks counted in `file` (`None`: none queued): waits until
    /// they are stored; the first error they met since the last call, else the first error a
    /// sealing job of no file met since any `close` took one (not waiting for those jobs).
    pub fn settled(&self, file: Option<&FileSealing>) -> Result<(), Error> {
        // The file's own error first; another stays for the next `close`.
        file.map_or(Ok(()), FileSealing::settled)?;
        self.pool.as_ref().map_or(Ok(()), SealPool::take_error)
    }

    /// Lets go of the unpacked chunks whose pack has been written.
    fn sweep(&self, unpacked: &mut Unpacked) {
        unpacked.chunks.retain(|id, _| self.sink.locate(id, BlobKind::Data).is_none());
        unpacked.bytes = unpacked.chunks.values().map(|b| b.len()).sum();
        unpacked.sweep_at = unpacked.bytes + SWEEP_STEP;
    }

    /// Makes sure chunk `id`, named by a piece of a file, is stored or being stored: a chunk
    /// whose pack could not be written (a full disk) is stored again from memory. A chunk no
    /// longer held is an error, so that no commit names a blob that never landed.
    pub fn ensure_stored(&self, id: &Id) -> Result<(), Error> {
        if self.sink.contains(id, BlobKind::Data) {
            return Ok(());
        }
        let bytes = lock(&self.unpacked).chunks.get(id).cloned();
        let bytes = bytes.ok_or_else(|| Error::Missing {
            object: format!("data blob {id} (its pack was not written and it is not held)"),
        })?;
        self.written(self.sink.store_with_id(*id, BlobKind::Data, &bytes))?;
        Ok(())
    }

    /// Writes the open packs and indexes them: every chunk stored so far is durable. New
    /// chunks wait meanwhile ([`VolumeStore::storing`]).
    pub fn flush(&self) -> Result<(), Error> {
        let _alone = self.storing.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(pool) = &self.pool {
            pool.wait();
        }
        self.written(self.sink.flush())?;
        let mut unpacked = lock(&self.unpacked);
        self.sweep(&mut unpacked);
        Ok(())
    }

    /// The chunks held whose pack was not written (a write error) and that were not stored
    /// again since.
    pub fn lost_chunks(&self) -> Vec<Id> {
        let unpacked = lock(&self.unpacked);
        let lost = unpacked.chunks.keys().filter(|id| !self.sink.contains(id, BlobKind::Data));
        lost.copied().collect()
    }

    /// After a commit that began with `lost` ([`VolumeStore::lost_chunks`]) lost: lets go of
    /// those that no file of the commit named (the commit stored the named ones again), such as
    /// the chunks of a file deleted after its write failed. A chunk lost since the commit began
    /// stays held, as a file the next commit names may hold it.
    pub fn forget_lost(&self, lost: &[Id]) {
        if lost.is_empty() {
            return;
        }
        let mut unpacked = lock(&self.unpacked);
        for id in lost {
            if !self.sink.contains(id, BlobKind::Data) {
                unpacked.chunks.remove(id);
            }
        }
        self.sweep(&mut unpacked);
    }

    /// Whether chunk `id` is one of the zero chunks of the largest size that a commit lists
    /// for a hole: a loaded file makes them a hole again.
    pub fn is_zero_chunk(&self, id: &Id) -> bool {
        *id == self.zero_chunk_id
    }

    /// The largest size a file may have in the volume ([`MOST_CHUNKS_PER_FILE`]).
    pub fn largest_file(&self) -> u64 {
        self.zero_chunk as u64 * MOST_CHUNKS_PER_FILE
    }

    /// The chunks of a hole of `len` bytes, stored (once) where the repository lacks them.
    pub fn zero_chunks(&self, len: u64) -> Result<Vec<Id>, Error> {
        let step = self.zero_chunk as u64;
        let mut ids = Vec::new();
        let mut left = len;
        while left > 0 {
            let n = left.min(step) as usize;
            ids.push(self.zero_id(n)?);
            left -= n as u64;
        }
        Ok(ids)
    }

    fn zero_id(&self, len: usize) -> Result<Id, Error> {
        if let Some(id) = lock(&self.zeros).get(&len).copied() {
            self.ensure_stored(&id)?;
            return Ok(id);
        }
        let id = self.store(&vec![0; len], &mut None)?;
        lock(&self.zeros).insert(len, id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use dedup_store::backend::LocalBackend;
    use dedup_store::format::KdfParams;
    use dedup_store::index::Index;
    use dedup_store::repo::InitOptions;

    use super::*;

    /// A store over a new repository in `dir`, packs of the default size.
    fn volume_store(dir: &std::path::Path) -> VolumeStore {
        let options = InitOptions {
            kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
            ..InitOptions::default()
        };
        let repo = Arc::new(Repository::init(Arc::new(LocalBackend::new(dir)), options).unwrap());
        let leaked: &'static Repository = Box::leak(Box::new(Arc::clone(&repo)));
        VolumeStore::new(leaked, repo, BlobSink::new(leaked, Index::new(), false))
    }

    /// 1 MiB that compresses to a small part of it, unlike any other `n`.
    fn compressible(n: u64) -> Vec<u8> {
        let mut chunk = vec![0u8; 1 << 20];
        for (i, word) in chunk.chunks_mut(64).enumerate() {
            word[..8].copy_from_slice(&(n << 32 | i as u64).to_le_bytes());
        }
        chunk
    }

    #[test]
    fn chunks_held_until_their_pack_is_written_stay_bounded_however_well_they_compress() {
        let dir = tempfile::tempdir().unwrap();
        let store = volume_store(dir.path());
        // Sealed, 160 such chunks fill none of the four open packs of 16 MiB: without a bound
        // every one of them would be held until the commit.
        let mut ids = Vec::new();
        let mut most = 0;
        for n in 0..160 {
            ids.push(store.store(&compressible(n), &mut None).unwrap());
            most = most.max(lock(&store.unpacked).bytes);
        }
        // The chunks being sealed meanwhile: the queue's and one per sealing thread.
        let sealing = (8 + seal_threads()) << 20;
        assert!(most <= HELD_MAX + SWEEP_STEP + sealing, "{} MiB held", most >> 20);
        store.flush().unwrap();
        assert_eq!(lock(&store.unpacked).bytes, 0, "a flush lets go of every chunk");
        for (n, id) in ids.iter().enumerate() {
            assert!(*store.fetch(id).unwrap() == compressible(n as u64), "chunk {n} reads back");
        }
    }
}
