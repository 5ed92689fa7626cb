//! The persistent content cache: per file (device, inode), what a scan learned of its content
//! (an [`Entry`]: a fingerprint, and the BLAKE3 digest of its whole content when it had a copy),
//! content, valid only while its size, mtime and ctime are unchanged to the nanosecond.
//!
//! One file per cache directory (`files.v1`, see [`format`]), loaded whole when a run starts and
//! written whole, once, when a run that learned something ends: a new file beside the old one,
//! then renamed over it, so a crash or `kill -9` at any point leaves either the old cache or the
//! new one. A run that learned nothing new (an unchanged rescan) leaves it alone and records its
//! counters for `dedup cache stats` in the small `last-run` file beside it. A file that does
//! not decode (bad magic, version, length or checksum) is renamed to `files.bad-<unix time>` and
//! the cache starts empty: damage costs a rescan, never a wrong answer.
//!
//! One process uses a cache at a time: [`Cache::open`] takes an exclusive advisory lock
//! (`flock`) on `lock` in the directory and gives [`Opened::Busy`] at once when another process
//! holds it; the caller then works without the cache. Paths are stored only as a hint for
//! [`Cache::prune`]; lookups never use them, so a rename or move keeps a file's entry and any
//! path bytes are fine.

#[cfg(feature = "clap")]
pub mod args;
mod command;
pub mod format;
pub mod settings;
mod stats_lines;

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_core::{FileId, FileMeta};
use rustix::fs::{flock, FlockOperation};

pub use command::{run_command, CacheCommand, CommandError};
pub use format::{
    Contents, Damaged, Digest, Entry, Fingerprint, FingerprintKind, LastRun, Record, MAX_SAMPLE_LEN,
};

/// Name of the cache file in its directory.
pub const FILE_NAME: &str = "files.v1";
const LOCK_NAME: &str = "lock";
/// Counters of the last run, when it had nothing else to write: `lookups hits unix_secs`.
const LAST_RUN_NAME: &str = "last-run";

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

/// One file learned: its metadata at the walk, its entry, and its path as a range of bytes.
pub type LearnedFile = (FileMeta, Entry, (usize, usize));

/// What one run learned, to be merged into the cache when it ends.
#[derive(Debug, Default)]
pub struct Update {
    /// Files read: their metadata at the walk, entry and path (a range of `names`).
    learned: Vec<LearnedFile>,
    /// The paths of the learned files, end to end (one buffer, not an allocation per file).
    names: Vec<u8>,
    /// Files whose entry no longer matched their metadata.
    pub stale: Vec<FileId>,
    /// Candidates looked up, and how many had a valid entry.
    pub lookups: u64,
    /// Valid entries found.
    pub hits: u64,
}

impl Update {
    /// Record what was learned of many files at once: each file's metadata at the walk, its
    /// entry, and its path as a range of `names`, in any order (paths are cheapest to build in
    /// the order of the tree, entries to merge in the order of the cache).
    pub fn learn_many(&mut self, files: Vec<LearnedFile>, names: Vec<u8>) {
        if self.learned.is_empty() && self.names.is_empty() {
            (self.learned, self.names) = (files, names);
            return;
        }
        let offset = self.names.len();
        self.names.extend_from_slice(&names);
        let shifted =
            files.into_iter().map(|(m, e, (start, end))| (m, e, (start + offset, end + offset)));
        self.learned.extend(shifted);
    }
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
            Ok(bytes) => match format::decode(bytes) {
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
            Ok(i) => Self::judge(&self.contents.records[i], meta),
            Err(_) => Lookup::Missing,
        }
    }

    /// The entry of `record`'s file if it still describes it.
    fn judge(record: &Record, meta: &FileMeta) -> Lookup {
        if record.meta == *meta {
            Lookup::Valid(record.entry)
        } else {
            Lookup::Stale
        }
    }

    /// [`lookup`](Self::lookup) of many files at once, answers in the order asked. The files
    /// are visited in key order and each search gallops on from where the last one ended, so
    /// the records are read front to back instead of binary-searched from scratch: a rescan
    /// asks for every file, and a binary search's scattered reads per file add up on a large
    /// tree (docs/benchmarks/journal.md, "From \"The persistent content cache\"").
    pub fn lookup_all(&self, metas: &[FileMeta]) -> Vec<Lookup> {
        if self.contents.records.is_empty() {
            // A first scan: nothing to find, and no need to sort what is asked.
            return vec![Lookup::Missing; metas.len()];
        }
        let mut order: Vec<(FileId, u32)> =
            metas.iter().enumerate().map(|(i, m)| (m.id, i as u32)).collect();
        order.sort_unstable();
        let records = &self.contents.records;
        let mut out = vec![Lookup::Missing; metas.len()];
        let mut from = 0;
        for (id, i) in order {
            // Gallop: the next key asked is most often the next record or one soon after it.
            let (mut past, mut step) = (from, 1);
            while past < records.len() && records[past].meta.id < id {
                from = past + 1;
                past = from + step;
                step *= 2;
            }
            let past = past.min(records.len());
            from += records[from..past].partition_point(|r| r.meta.id < id);
            if let Some(r) = records.get(from).filter(|r| r.meta.id == id) {
                out[i as usize] = Self::judge(r, &metas[i as usize]);
            }
        }
        out
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
        let Update { mut learned, names, mut stale, lookups, hits } = update;
        let name_of = |range: (usize, usize)| &names[range.0..range.1];
        let last = LastRun { lookups, hits, unix_secs: unix_secs() };
        if stale.is_empty() && learned.iter().all(|&(m, d, name)| self.holds(&m, &d, name_of(name)))
        {
            self.contents.last = last;
            return self.write_last_run();
        }
        // Usually sorted already (by the caller); then this is one pass.
        learned.sort_by_key(|a| a.0.id);
        learned.dedup_by(|a, b| a.0.id == b.0.id);
        stale.sort_unstable();
        let old = std::mem::take(&mut self.contents);
        // The paths learned in this run stay where they are (records may name their bytes in
        // any order); those of the entries kept from before are appended. Copying all of them
        // into a new block would cost a first scan of a large tree a copy of every path.
        let mut merged = Contents {
            records: Vec::with_capacity(old.records.len() + learned.len()),
            names,
            last,
        };
        let add_learned = |(meta, entry, (start, end)): LearnedFile, out: &mut Contents| {
            let len = (end - start).min(u32::MAX as usize) as u32;
            out.records.push(Record { meta, entry, name: (start as u64, len) });
        };
        let add_kept = |r: &Record, out: &mut Contents| {
            let at = out.names.len() as u64;
            out.names.extend_from_slice(old.name(r));
            out.records.push(Record { name: (at, r.name.1), ..r.clone() });
        };
        let mut new = learned.into_iter().peekable();
        for r in &old.records {
            while let Some(n) = new.next_if(|n| n.0.id < r.meta.id) {
                add_learned(n, &mut merged);
            }
            if let Some((meta, mut entry, name)) = new.next_if(|n| n.0.id == r.meta.id) {
                // Read again without reaching a digest (it had no copy this time): the one known
                // for the same, unchanged content still holds.
                if meta == r.meta {
                    entry.digest = entry.digest.or(r.entry.digest);
                    entry.fingerprint = entry.fingerprint.or(r.entry.fingerprint);
                }
                add_learned((meta, entry, name), &mut merged);
            } else if stale.binary_search(&r.meta.id).is_err() {
                add_kept(r, &mut merged);
            }
        }
        for n in new {
            add_learned(n, &mut merged);
        }
        self.contents = merged;
        self.write()?;
        // The counters are in the file just written; an older side file would only mislead.
        let _ = fs::remove_file(self.dir.join(LAST_RUN_NAME));
        Ok(())
    }

    /// True when the cache already holds exactly this entry.
    fn holds(&self, meta: &FileMeta, entry: &Entry, name: &[u8]) -> bool {
        let records = &self.contents.records;
        records.binary_search_by(|r| r.meta.id.cmp(&meta.id)).is_ok_and(|i| {
            let r = &records[i];
            let known = entry.digest.is_none_or(|d| r.entry.digest == Some(d))
                && entry.fingerprint.is_none_or(|f| r.entry.fingerprint == Some(f));
            r.meta == *meta && known && self.contents.name(r) == name
        })
    }

    /// Record the last run's counters without rewriting the entries.
    fn write_last_run(&self) -> Result<(), CacheError> {
        let path = self.dir.join(LAST_RUN_NAME);
        let LastRun { lookups, hits, unix_secs } = self.contents.last;
        fs::write(&path, format!("{lookups} {hits} {unix_secs}\n")).map_err(io_err(&path))
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
            let alive =
                fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && FileMeta::of(&m) == r.meta);
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
        let _ = fs::remove_file(self.dir.join(LAST_RUN_NAME));
        let path = self.dir.join(FILE_NAME);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(&path)(e)),
            _ => Ok(()),
        }
    }

    /// Write the contents to a new file and rename it over the old one.
    fn write(&self) -> Result<(), CacheError> {
        let tmp = self.dir.join(format!("{FILE_NAME}.tmp-{}", std::process::id()));
        let written =
            File::create(&tmp).and_then(|mut f| format::write_encoded(&self.contents, &mut f));
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
    /// A valid entry: what is known of the file's content.
    Valid(Entry),
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
    let bytes_on_disk = bytes.len() as u64;
    let contents = format::decode(bytes)?;
    let side = last_run_file(dir).filter(|side| side.unix_secs >= contents.last.unix_secs);
    Ok(Stats {
        entries: contents.records.len() as u64,
        bytes_on_disk,
        last: side.unwrap_or(contents.last),
    })
}

/// The counters in the `last-run` side file, if it is there and whole.
fn last_run_file(dir: &Path) -> Option<LastRun> {
    let text = fs::read_to_string(dir.join(LAST_RUN_NAME)).ok()?;
    let line = text.strip_suffix('\n')?;
    let mut fields = line.split(' ').map(|f| f.parse::<u64>().ok());
    let (lookups, hits, unix_secs) = (fields.next()??, fields.next()??, fields.next()??);
    fields.next().is_none().then_some(LastRun { lookups, hits, unix_secs })
}

fn unix_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests;
