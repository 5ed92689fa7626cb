//! What the library's integration tests share: a small, fast repository, reproducible data, a
//! backend seen as object storage sees it, and a writer of hand-made (hostile) trees.

pub mod hand_made;

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dedup_store::backend::{Backend, LocalBackend, ObjectInfo, PutOutcome};
use dedup_store::backup::BackupOptions;
use dedup_store::format::{ChunkerParams, KdfParams};
use dedup_store::repo::{InitOptions, Repository};

/// A new repository in `dir` with small chunks and packs and a key derivation cheap enough for
/// tests; encrypted unless asked otherwise.
pub fn small_repo(dir: &Path, encrypted: bool) -> Repository {
    let options = InitOptions {
        password: encrypted.then(|| b"pw".to_vec()),
        chunker: ChunkerParams::FastCdc { min: 1024, avg: 4096, max: 16384 },
        pack_size: 1 << 20,
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    Repository::init(Arc::new(LocalBackend::new(dir)), options).unwrap()
}

/// The options of a backup of `path` alone, from host `h`.
pub fn backup_of(path: &Path) -> BackupOptions {
    BackupOptions {
        paths: vec![path.to_path_buf()],
        host: "h".into(),
        program: "test".into(),
        ..BackupOptions::default()
    }
}

/// `len` bytes that do not compress, the same for the same `seed`.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut out = vec![0u8; len];
    blake3::Hasher::new_keyed(&key).finalize_xof().fill(&mut out);
    out
}

/// A local directory seen as object storage sees it: only the required methods of [`Backend`]
/// are forwarded, so every optional fast path (streamed writes, kept descriptors, ranged
/// readers) takes the trait's default, one request per call. It counts the listings of `data/`
/// and the index files read, and can refuse new packs as a full disk refuses them.
pub struct ObjectLike {
    /// The directory behind it, reached directly.
    pub inner: LocalBackend,
    /// Listings of `data/` so far.
    pub data_listings: AtomicU64,
    /// Index files read so far.
    pub index_reads: AtomicU64,
    /// Packs accepted before the next is refused with ENOSPC (`u64::MAX`: never).
    pub packs_left: AtomicU64,
    /// Reads of packs refused as by a server gone away (connection refused).
    pub packs_unreachable: std::sync::atomic::AtomicBool,
    /// Reads of packs asked for so far.
    pub pack_reads: AtomicU64,
}

impl ObjectLike {
    /// The directory `root`, accepting every pack.
    pub fn new(root: &Path) -> ObjectLike {
        ObjectLike {
            inner: LocalBackend::new(root),
            data_listings: AtomicU64::new(0),
            index_reads: AtomicU64::new(0),
            packs_left: AtomicU64::new(u64::MAX),
            packs_unreachable: std::sync::atomic::AtomicBool::new(false),
            pack_reads: AtomicU64::new(0),
        }
    }

    /// Counts a read of `name` when it is a pack, refused while packs are unreachable.
    fn pack_read(&self, name: &str) -> io::Result<()> {
        if !name.starts_with("data/") {
            return Ok(());
        }
        self.pack_reads.fetch_add(1, Ordering::Relaxed);
        match self.packs_unreachable.load(Ordering::Relaxed) {
            true => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
            false => Ok(()),
        }
    }

    /// The directory `root`, refusing packs after the first `packs`.
    pub fn filling_up(root: &Path, packs: u64) -> ObjectLike {
        let backend = ObjectLike::new(root);
        backend.packs_left.store(packs, Ordering::Relaxed);
        backend
    }
}

impl Backend for ObjectLike {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        if name.starts_with("data/")
            && self
                .packs_left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_err()
        {
            return Err(io::Error::from_raw_os_error(28));
        }
        self.inner.put(name, bytes)
    }
    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        if name.starts_with("index/") {
            self.index_reads.fetch_add(1, Ordering::Relaxed);
        }
        self.pack_read(name)?;
        self.inner.get(name)
    }
    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.pack_read(name)?;
        self.inner.get_range(name, offset, len)
    }
    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
        if prefix.trim_end_matches('/') == "data" {
            self.data_listings.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.list(prefix)
    }
    fn delete(&self, name: &str) -> io::Result<()> {
        self.inner.delete(name)
    }
    fn exists(&self, name: &str) -> io::Result<bool> {
        self.inner.exists(name)
    }
}
