//! The volume's side of the repository: chunks in (each looked up in the index held in memory;
//! only new ones are compressed, sealed and packed), chunks out (through a small cache, and
//! from memory while their pack is still open), and the chunks a hole stands for at a commit.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dedup_store::blob::{blob_id, BlobKind};
use dedup_store::repo::{BlobSink, Repository};
use dedup_store::{Error, Id};

use super::seal_pool::SealPool;

/// Threads that compress, seal and pack new chunks beside the FUSE threads.
const SEAL_THREADS: usize = 2;

/// Chunks kept after a read: a reader going through a file in 128 KiB requests reads each
/// chunk once, and two readers at once do not evict each other's.
const CACHED_CHUNKS: usize = 8;

/// Stored chunks kept in memory until their pack is written, when they become readable from it.
struct Unpacked {
    chunks: HashMap<Id, Arc<Vec<u8>>>,
    bytes: usize,
}

/// Bytes of unpacked chunks from which those whose pack has been written are let go.
const UNPACKED_SWEEP: usize = 64 << 20;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Chunks in and out of the repository.
pub struct VolumeStore {
    repo: &'static Repository,
    sink: Arc<BlobSink<'static>>,
    /// Seals new chunks off the FUSE threads (`None`: on them, no thread could be started).
    pool: Option<SealPool>,
    /// Write failures met so far, by anyone: a commit during which one happened is not written.
    failures: Arc<AtomicU64>,
    cache: Mutex<VecDeque<(Id, Arc<Vec<u8>>)>>,
    unpacked: Mutex<Unpacked>,
    /// The id of a run of `len` zeros, by `len`.
    zeros: Mutex<HashMap<usize, Id>>,
    /// How long the chunker cuts a long run of zeros.
    zero_chunk: usize,
}

impl VolumeStore {
    /// Over the repository `repo` and a session `sink` of it.
    pub fn new(repo: &'static Repository, sink: BlobSink<'static>) -> VolumeStore {
        let max = repo.chunker().max_size();
        let zero_chunk = repo.chunker().cut(&vec![0; max]);
        let sink = Arc::new(sink);
        let failures = Arc::new(AtomicU64::new(0));
        let pool = SealPool::start(&sink, SEAL_THREADS, &failures);
        VolumeStore {
            repo,
            sink,
            pool,
            failures,
            cache: Mutex::new(VecDeque::new()),
            unpacked: Mutex::new(Unpacked { chunks: HashMap::new(), bytes: 0 }),
            zeros: Mutex::new(HashMap::new()),
            zero_chunk,
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
        if let Some((_, bytes)) = lock(&self.cache).iter().find(|(cached, _)| cached == id) {
            return Ok(Arc::clone(bytes));
        }
        let location = self.sink.locate(id, BlobKind::Data).ok_or_else(|| Error::Missing {
            object: format!("data blob {id} (not in the index)"),
        })?;
        let bytes = Arc::new(self.repo.read_blob_at(&location, BlobKind::Data)?);
        let mut cache = lock(&self.cache);
        if cache.len() >= CACHED_CHUNKS {
            cache.pop_front();
        }
        cache.push_back((*id, Arc::clone(&bytes)));
        Ok(bytes)
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
    /// is one); returns its id. The bytes are held until their pack is written, for reads and
    /// for storing again after a failure.
    pub fn store(&self, bytes: &[u8]) -> Result<Id, Error> {
        let id = blob_id(&self.repo.keys().id, bytes);
        if self.sink.contains(&id, BlobKind::Data) {
            return Ok(id);
        }
        let held = {
            let mut unpacked = lock(&self.unpacked);
            if let Some(held) = unpacked.chunks.get(&id) {
                Arc::clone(held)
            } else {
                let held = Arc::new(bytes.to_vec());
                unpacked.bytes += bytes.len();
                unpacked.chunks.insert(id, Arc::clone(&held));
                if unpacked.bytes > UNPACKED_SWEEP {
                    self.sweep(&mut unpacked);
                }
                held
            }
        };
        let unqueued = match &self.pool {
            Some(pool) => pool.submit(id, held).err(),
            None => Some(held),
        };
        if let Some(bytes) = unqueued {
            self.written(self.sink.store_with_id(id, BlobKind::Data, &bytes))?;
        }
        Ok(id)
    }

    /// Waits until every chunk given to the sealing threads is stored; the first error they
    /// met since the last call.
    pub fn settled(&self) -> Result<(), Error> {
        self.pool.as_ref().map_or(Ok(()), SealPool::settled)
    }

    /// Lets go of the unpacked chunks whose pack has been written.
    fn sweep(&self, unpacked: &mut Unpacked) {
        unpacked.chunks.retain(|id, _| self.sink.locate(id, BlobKind::Data).is_none());
        unpacked.bytes = unpacked.chunks.values().map(|b| b.len()).sum();
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

    /// Writes the open packs and indexes them: every chunk stored so far is durable.
    pub fn flush(&self) -> Result<(), Error> {
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
        let id = self.store(&vec![0; len])?;
        lock(&self.zeros).insert(len, id);
        Ok(id)
    }
}
