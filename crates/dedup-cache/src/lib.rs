//! The persistent content cache: per file (device, inode), the BLAKE3 digest of its whole
//! content, valid only while its size, mtime and ctime are unchanged to the nanosecond.
//!
//! One file per cache directory (`files.v1`, see [`format`]), loaded whole when a run starts and
//! written whole, once, when it ends: a new file beside the old one, then renamed over it, so a
//! crash or `kill -9` at any point leaves either the old cache or the new one. A file that does
//! not decode (bad magic, version, length or checksum) is renamed to `files.bad-<unix time>` and
//! the cache starts empty: damage costs a rescan, never a wrong answer.
//!
//! One process uses a cache at a time: [`Cache::open`] takes an exclusive advisory lock
//! (`flock`) on `lock` in the directory and gives [`Opened::Busy`] at once when another process
//! holds it; the caller then works without the cache. Paths are stored only as a hint for
//! [`Cache::prune`]; lookups never use them, so a rename or move keeps a file's entry and any
//! path bytes are fine.

pub mod format;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_core::{nanos, FileId, FileMeta};
use rustix::fs::{flock, FlockOperation};

pub use format::{Contents, Damaged, Digest, LastRun, Record};

/// Name of the cache file in its directory.
pub const FILE_NAME: &str = "files.v1";
const LOCK_NAME: &str = "lock";

/// A failure to use the cache directory at all.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The directory or one of its files could not be created, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CacheError + '_ {
    move |source| CacheError::Io { path: path.to_owned(), source }
}

/// The result of [`Cache::open`].
#[derive(Debug)]
pub enum Opened {
    /// The cache, locked for this process; `damaged` tells why an unusable file was set aside.
    Ready {
        /// The cache.
        cache: Cache,
        /// An unusable file that was moved aside (the cache then starts empty).
        damaged: Option<SetAside>,
    },
    /// Another process holds the lock.
    Busy,
}

/// A cache file that did not decode, and where it now is.
#[derive(Debug)]
pub struct SetAside {
    /// Why it could not be used.
    pub reason: Damaged,
    /// Its new name.
    pub moved_to: PathBuf,
}

/// What `dedup cache stats` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Files with an entry.
    pub entries: u64,
    /// Size of the cache file in bytes (0 when there is none).
    pub bytes_on_disk: u64,
    /// Counters of the last run that saved it.
    pub last: LastRun,
}

/// What one run learned, to be merged into the cache when it ends.
#[derive(Debug, Default)]
pub struct Update {
    /// Files read whole: their metadata at the walk, digest and path.
    pub learned: Vec<(FileMeta, Digest, Vec<u8>)>,
    /// Files whose entry no longer matched their metadata.
    pub stale: Vec<FileId>,
    /// Candidates looked up, and how many had a valid entry.
    pub lookups: u64,
    /// Valid entries found.
    pub hits: u64,
}

/// An open, locked cache.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    contents: Contents,
    /// Held for the life of the value: the advisory lock.
    _lock: File,
}

impl Cache {
    /// Lock and load the cache in `dir` (created if missing).
    pub fn open(dir: &Path) -> Result<Opened, CacheError> {
        // Private: the entries name the paths of the files scanned.
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io_err(dir))?;
        let lock_path = dir.join(LOCK_NAME);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
        match flock(&lock, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(Opened::Busy),
            Err(e) => return Err(io_err(&lock_path)(e.into())),
        }
        // A run killed while writing leaves its temporary file: nobody else can be writing now.
        for entry in fs::read_dir(dir).map_err(io_err(dir))?.flatten() {
            if entry.file_name().as_bytes().starts_with(format!("{FILE_NAME}.tmp-").as_bytes()) {
                let _ = fs::remove_file(entry.path());
            }
        }
        let path = dir.join(FILE_NAME);
        let (contents, damaged) = match fs::read(&path) {
            Ok(bytes) => match format::decode(&bytes) {
                Ok(contents) => (contents, None),
                Err(reason) => {
                    let moved_to = dir.join(format!("files.bad-{}", unix_secs()));
                    fs::rename(&path, &moved_to).map_err(io_err(&path))?;
                    (Contents::default(), Some(SetAside { reason, moved_to }))
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => (Contents::default(), None),
            Err(e) => return Err(io_err(&path)(e)),
        };
        Ok(Opened::Ready { cache: Cache { dir: dir.to_owned(), contents, _lock: lock }, damaged })
    }

    /// The digest of the file, if its entry is still valid: same device and inode, and the
    /// same size, mtime and ctime to the nanosecond.
    pub fn lookup(&self, meta: &FileMeta) -> Lookup {
        match self.contents.records.binary_search_by(|r| r.meta.id.cmp(&meta.id)) {
            Ok(i) if self.contents.records[i].meta == *meta => {
                Lookup::Valid(self.contents.records[i].digest)
            }
            Ok(_) => Lookup::Stale,
            Err(_) => Lookup::Missing,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.contents.records.len()
    }

    /// True when the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.contents.records.is_empty()
    }

    /// Merge what a run learned (new entries replace old ones of the same file; stale entries
    /// go) and write the cache.
    pub fn save(&mut self, update: Update) -> Result<(), CacheError> {
        let Update { mut learned, mut stale, lookups, hits } = update;
        learned.sort_by_key(|a| a.0.id);
        learned.dedup_by(|a, b| a.0.id == b.0.id);
        stale.sort_unstable();
        let old = std::mem::take(&mut self.contents);
        let mut merged = Contents {
            last: LastRun { lookups, hits, unix_secs: unix_secs() },
            ..Contents::default()
        };
        let push = |meta: FileMeta, digest: Digest, name: &[u8], out: &mut Contents| {
            let at = out.names.len() as u64;
            let name = &name[..name.len().min(u32::MAX as usize)];
            out.names.extend_from_slice(name);
            out.records.push(Record { meta, digest, name: (at, name.len() as u32) });
        };
        let mut new = learned.into_iter().peekable();
        for r in &old.records {
            while let Some((meta, digest, name)) = new.next_if(|n| n.0.id < r.meta.id) {
                push(meta, digest, &name, &mut merged);
            }
            if new.peek().is_some_and(|n| n.0.id == r.meta.id)
                || stale.binary_search(&r.meta.id).is_ok()
            {
                continue;
            }
            push(r.meta, r.digest, old.name(r), &mut merged);
        }
        for (meta, digest, name) in new {
            push(meta, digest, &name, &mut merged);
        }
        self.contents = merged;
        self.write()
    }

    /// Drop entries whose file is no longer at its recorded path with the recorded identity,
    /// size and times (deleted, modified, or moved: a moved file is learned again on its next
    /// scan). Returns how many were dropped; the cache is written.
    pub fn prune(&mut self) -> Result<u64, CacheError> {
        let old = std::mem::take(&mut self.contents);
        let mut kept = Contents { last: old.last, ..Contents::default() };
        for r in &old.records {
            let name = old.name(r);
            let path = Path::new(std::ffi::OsStr::from_bytes(name));
            let alive = fs::symlink_metadata(path).is_ok_and(|m| {
                m.is_file()
                    && FileMeta {
                        id: FileId { dev: m.dev(), ino: m.ino() },
                        size: m.size(),
                        mtime_ns: nanos(m.mtime(), m.mtime_nsec() as u64),
                        ctime_ns: nanos(m.ctime(), m.ctime_nsec() as u64),
                    } == r.meta
            });
            if alive {
                let at = kept.names.len() as u64;
                kept.names.extend_from_slice(name);
                kept.records.push(Record { name: (at, r.name.1), ..r.clone() });
            }
        }
        let dropped = (old.records.len() - kept.records.len()) as u64;
        self.contents = kept;
        self.write()?;
        Ok(dropped)
    }

    /// Remove every entry (and files set aside as damaged).
    pub fn clear(&mut self) -> Result<(), CacheError> {
        self.contents = Contents::default();
        for entry in fs::read_dir(&self.dir).map_err(io_err(&self.dir))?.flatten() {
            if entry.file_name().as_bytes().starts_with(b"files.bad-") {
                let _ = fs::remove_file(entry.path());
            }
        }
        let path = self.dir.join(FILE_NAME);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(&path)(e)),
            _ => Ok(()),
        }
    }

    /// Write the contents to a new file and rename it over the old one.
    fn write(&self) -> Result<(), CacheError> {
        let tmp = self.dir.join(format!("{FILE_NAME}.tmp-{}", std::process::id()));
        let bytes = format::encode(&self.contents);
        let written = File::create(&tmp).and_then(|mut f| f.write_all(&bytes));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io_err(&tmp)(e));
        }
        let path = self.dir.join(FILE_NAME);
        fs::rename(&tmp, &path).map_err(io_err(&path))
    }
}

impl Contents {
    fn name(&self, r: &Record) -> &[u8] {
        &self.names[r.name.0 as usize..r.name.0 as usize + r.name.1 as usize]
    }
}

/// What [`Cache::lookup`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// A valid entry: the digest of the file's content.
    Valid(Digest),
    /// An entry for the inode whose size or times no longer match.
    Stale,
    /// No entry.
    Missing,
}

/// Entries, size on disk and last run's counters of the cache in `dir`, without locking it
/// (the file is only ever replaced whole, so a reader sees a complete one).
pub fn stats(dir: &Path) -> Result<Stats, Damaged> {
    let path = dir.join(FILE_NAME);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Stats::default()),
        Err(e) => return Err(Damaged(e.to_string())),
    };
    let contents = format::decode(&bytes)?;
    Ok(Stats {
        entries: contents.records.len() as u64,
        bytes_on_disk: bytes.len() as u64,
        last: contents.last,
    })
}

fn unix_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(ino: u64, size: u64) -> FileMeta {
        FileMeta { id: FileId { dev: 1, ino }, size, mtime_ns: 5, ctime_ns: 6 }
    }

    fn open(dir: &Path) -> Cache {
        match Cache::open(dir).unwrap() {
            Opened::Ready { cache, damaged: None } => cache,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn entries_survive_a_reopen_and_are_valid_only_while_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = open(dir.path());
        let learned =
            vec![(meta(3, 10), [3; 32], b"c".to_vec()), (meta(1, 10), [1; 32], b"a".to_vec())];
        cache.save(Update { learned, lookups: 2, ..Update::default() }).unwrap();
        drop(cache);
        let mut cache = open(dir.path());
        assert_eq!(cache.lookup(&meta(1, 10)), Lookup::Valid([1; 32]));
        assert_eq!(cache.lookup(&meta(1, 11)), Lookup::Stale);
        let touched = FileMeta { ctime_ns: 7, ..meta(1, 10) };
        assert_eq!(cache.lookup(&touched), Lookup::Stale);
        assert_eq!(cache.lookup(&meta(2, 10)), Lookup::Missing);
        // A new entry replaces the old one; a stale one goes; others stay.
        let update = Update {
            learned: vec![(meta(3, 12), [9; 32], b"c2".to_vec())],
            stale: vec![meta(1, 0).id],
            ..Update::default()
        };
        cache.save(update).unwrap();
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.lookup(&meta(3, 12)), Lookup::Valid([9; 32]));
        let s = stats(dir.path()).unwrap();
        assert_eq!(s.entries, 1);
        cache.clear().unwrap();
        assert_eq!(stats(dir.path()).unwrap(), Stats::default());
    }

    #[test]
    fn a_second_opener_is_told_busy() {
        let dir = tempfile::tempdir().unwrap();
        let first = open(dir.path());
        assert!(matches!(Cache::open(dir.path()).unwrap(), Opened::Busy));
        drop(first);
        open(dir.path());
    }

    #[test]
    fn a_damaged_file_is_set_aside_and_the_cache_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(FILE_NAME), b"garbage").unwrap();
        match Cache::open(dir.path()).unwrap() {
            Opened::Ready { cache, damaged: Some(aside) } => {
                assert!(cache.is_empty());
                assert_eq!(fs::read(&aside.moved_to).unwrap(), b"garbage");
            }
            other => panic!("{other:?}"),
        }
        assert!(!dir.path().join(FILE_NAME).exists());
    }

    #[test]
    fn prune_keeps_only_files_still_at_their_path_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let stat = |p: &Path| {
            let m = fs::symlink_metadata(p).unwrap();
            FileMeta {
                id: FileId { dev: m.dev(), ino: m.ino() },
                size: m.size(),
                mtime_ns: nanos(m.mtime(), m.mtime_nsec() as u64),
                ctime_ns: nanos(m.ctime(), m.ctime_nsec() as u64),
            }
        };
        let (a, b) = (dir.path().join("a\nx"), dir.path().join("b"));
        fs::write(&a, b"1").unwrap();
        fs::write(&b, b"2").unwrap();
        let name = |p: &Path| p.as_os_str().as_bytes().to_vec();
        let learned = vec![(stat(&a), [1; 32], name(&a)), (stat(&b), [2; 32], name(&b))];
        let cache_dir = dir.path().join("cache");
        let mut cache = open(&cache_dir);
        cache.save(Update { learned, ..Update::default() }).unwrap();
        fs::remove_file(&b).unwrap();
        assert_eq!(cache.prune().unwrap(), 1);
        assert_eq!(cache.lookup(&stat(&a)), Lookup::Valid([1; 32]));
    }
}
