//! A repository in a local directory: each object is written to a temporary name beginning with
//! `.` in its final directory (a pack written as it fills: in `data/`, its name being known only
//! at its end), fsynced, renamed without replacing, and the final directory fsynced. Packs of
//! trees stay open for the ranges read from them (a backup reads two tree blobs per directory
//! of its parent: one `pread` each rather than open, seek, read and close).

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::local_files::{create_dirs, object_path, publish, sync_dir, PRIVATE_FILE};
use super::local_object::LocalObject;
use super::temporary::{temporary_is_stale, temporary_name, TEMP_PREFIX};
use super::{Backend, DeleteFailure, ObjectInfo, ObjectWriter, PutOutcome, RangeReader};

/// Objects stored as files under a root directory.
pub struct LocalBackend {
    root: PathBuf,
    /// Packs that metadata ranges were read from, kept open (at most [`OPEN_TREE_PACKS`]).
    /// Packs never change once named, so a kept descriptor reads what a fresh open would.
    /// Deleting an object through this backend closes its kept descriptor, so that a long-lived
    /// process (a mount, a long backup) neither reads a deleted pack nor holds its disk space;
    /// a pack another process deletes stays readable here until the cache is cleared.
    open_tree_packs: Mutex<HashMap<String, Arc<File>>>,
}

/// Tree packs kept open at most; past this the kept ones are closed and the count starts over
/// (a repository's trees fill far fewer packs than its data).
const OPEN_TREE_PACKS: usize = 64;

impl LocalBackend {
    /// The repository at `root` (which need not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        LocalBackend {
            root: std::path::absolute(&root).unwrap_or(root),
            open_tree_packs: Mutex::new(HashMap::new()),
        }
    }

    fn path(&self, name: &str) -> io::Result<PathBuf> {
        object_path(&self.root, name)
    }

    /// Closes the kept descriptor of `name`, if any (the object is being deleted).
    fn forget_open(&self, name: &str) {
        self.open_tree_packs.lock().unwrap_or_else(PoisonError::into_inner).remove(name);
    }

    /// Removes every file of `names`, then fsyncs each directory that lost one, once.
    fn delete_part(&self, names: &[String]) -> Result<(), DeleteFailure> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for name in names {
            let failed = |cause| DeleteFailure { name: name.clone(), cause };
            let path = self.path(name).map_err(failed)?;
            self.forget_open(name);
            match fs::remove_file(&path) {
                Ok(()) => {
                    let dir = path.parent().expect("object paths have a parent").to_path_buf();
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => return Err(failed(err)),
            }
        }
        for dir in dirs {
            sync_dir(&dir)
                .map_err(|cause| DeleteFailure { name: dir.display().to_string(), cause })?;
        }
        Ok(())
    }
}

/// A local object kept open for range reads.
struct OpenFile(File);

impl RangeReader for OpenFile {
    fn read_range_into(&mut self, offset: u64, len: u64, buf: &mut Vec<u8>) -> io::Result<()> {
        let want = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "range too large"))?;
        buf.try_reserve(want).map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e))?;
        let start = buf.len();
        self.0.seek(SeekFrom::Start(offset))?;
        // Read into the spare capacity, which is not zeroed first.
        let read = (&mut self.0).take(len).read_to_end(buf);
        if !matches!(read, Ok(n) if n == want) {
            buf.truncate(start);
            read?;
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }
}

/// Batches of deletions from this many names up are shared among threads (fewer are not worth
/// starting one).
const SHARED_FROM: usize = 16;
/// Threads sharing a batch of deletions at most.
const MOST_DELETERS: usize = 4;

impl Backend for LocalBackend {
    fn location(&self) -> String {
        self.root.display().to_string()
    }

    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        let path = self.path(name)?;
        let dir = path.parent().expect("object paths have a parent");
        create_dirs(dir)?;
        let temp = dir.join(temporary_name(""));
        let written = (|| {
            let mut file =
                File::options().write(true).create_new(true).mode(PRIVATE_FILE).open(&temp)?;
            file.write_all(bytes)?;
            file.sync_all()
        })();
        if let Err(err) = written {
            let _ = fs::remove_file(&temp);
            return Err(err);
        }
        publish(&temp, &path)
    }

    fn begin_object(&self, folder: &str) -> io::Result<Option<Box<dyn ObjectWriter>>> {
        let dir = self.path(folder)?;
        create_dirs(&dir)?;
        Ok(Some(Box::new(LocalObject::create(&self.root, &dir)?)))
    }

    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path(name)?)
    }

    fn get_into(&self, name: &str, buf: &mut Vec<u8>) -> io::Result<()> {
        let mut file = File::open(self.path(name)?)?;
        buf.clear();
        let size = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
        buf.try_reserve(size).map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e))?;
        file.read_to_end(buf)?;
        Ok(())
    }

    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        // Read as a kept-open file reads (into memory not zeroed first): a stored chunk read
        // back (a restore, a mount) is a range of a megabyte or so per read.
        let mut buf = Vec::new();
        OpenFile(File::open(self.path(name)?)?).read_range_into(offset, len, &mut buf)?;
        Ok(buf)
    }

    fn get_metadata_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let kept =
            self.open_tree_packs.lock().unwrap_or_else(PoisonError::into_inner).get(name).cloned();
        let file = match kept {
            Some(file) => file,
            None => {
                let file = Arc::new(File::open(self.path(name)?)?);
                let mut open = self.open_tree_packs.lock().unwrap_or_else(PoisonError::into_inner);
                if open.len() >= OPEN_TREE_PACKS {
                    open.clear();
                }
                open.insert(name.to_string(), Arc::clone(&file));
                file
            }
        };
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "range too large"))?;
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }

    fn forget_metadata_range(&self, name: &str, _offset: u64, _len: u64) {
        self.forget_open(name);
    }

    fn open_ranges(&self, name: &str) -> io::Result<Option<Box<dyn RangeReader>>> {
        Ok(Some(Box::new(OpenFile(File::open(self.path(name)?)?))))
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
        let mut out = Vec::new();
        let mut pending = vec![(self.path(prefix)?, prefix.to_string())];
        while let Some((dir, name)) = pending.pop() {
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            };
            for entry in entries {
                let entry = entry?;
                let file_name = entry.file_name();
                let Some(file_name) = file_name.to_str() else { continue };
                if file_name.starts_with('.') || !super::listable(file_name) {
                    continue;
                }
                let child = format!("{name}/{file_name}");
                // Deleted since the directory was read (by a prune, a writer refreshing its
                // marker): not there, which is no error.
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                    Err(err) => return Err(err),
                };
                if meta.is_dir() {
                    pending.push((entry.path(), child));
                } else if meta.is_file() {
                    let modified = meta.modified().ok();
                    out.push(ObjectInfo { name: child, size: meta.len(), modified });
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        let path = self.path(name)?;
        self.forget_open(name);
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(path.parent().expect("object paths have a parent")),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// Removes every file, then fsyncs each directory that lost one, once: a prune deleting a
    /// hundred index files in `index/` waits for one directory flush, not a hundred. A power cut
    /// before the flushes may bring some of the files back, which the caller's next run deletes
    /// again (deletions are idempotent, §12); the flushes end before this returns, so a later
    /// batch (the plan after its packs) is never durable before this one. A long batch is shared
    /// among a few threads, each removing its part and then flushing the directories it touched:
    /// removing a pack is the kernel freeing its pages, one core's work per file, and a prune
    /// waits for nothing else while it deletes.
    fn delete_many(&self, names: &[String]) -> Result<(), DeleteFailure> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let threads = if names.len() >= SHARED_FROM { cores.clamp(1, MOST_DELETERS) } else { 1 };
        if threads <= 1 {
            return self.delete_part(names);
        }
        let per_thread = names.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = names
                .chunks(per_thread)
                .map(|part| {
                    std::thread::Builder::new()
                        .name("dedup-delete".into())
                        .spawn_scoped(scope, move || self.delete_part(part))
                        .expect("a thread can be started")
                })
                .collect();
            // Every part is waited for; the first failure in the order of `names` is reported.
            let results: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            results.into_iter().collect()
        })
    }

    fn remove_stale_temporaries(&self, stale_after: Duration) -> io::Result<u64> {
        let mut removed = 0;
        let mut pending = vec![self.root.clone()];
        while let Some(dir) = pending.pop() {
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            };
            for entry in entries {
                let entry = entry?;
                let Ok(meta) = entry.metadata() else { continue };
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if meta.is_dir() && !name.starts_with('.') {
                    pending.push(entry.path());
                } else if meta.is_file()
                    && name.starts_with(TEMP_PREFIX)
                    && temporary_is_stale(&name, meta.modified()?, stale_after)
                {
                    match fs::remove_file(entry.path()) {
                        Ok(()) => removed += 1,
                        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                        Err(err) => return Err(err),
                    }
                }
            }
        }
        Ok(removed)
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        match fs::symlink_metadata(self.path(name)?) {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::temporary::host_tag;
    use super::*;

    #[test]
    fn only_the_temporaries_of_dead_or_silent_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        backend.put("data/ab/x", b"kept").unwrap();
        let shard = dir.path().join("data/ab");
        let dead = shard.join(format!("{TEMP_PREFIX}{}-0-1111", host_tag()));
        let live = shard.join(format!("{TEMP_PREFIX}{}-{}-2222", host_tag(), std::process::id()));
        let elsewhere = shard.join(format!("{TEMP_PREFIX}ffffffff-1-3333"));
        for path in [&dead, &live, &elsewhere] {
            fs::write(path, b"partial").unwrap();
        }
        assert_eq!(backend.remove_stale_temporaries(Duration::from_secs(3600)).unwrap(), 1);
        assert!(!dead.exists() && live.exists() && elsewhere.exists());
        // Past the age limit, any writer's is removed; objects never are.
        assert_eq!(backend.remove_stale_temporaries(Duration::ZERO).unwrap(), 2);
        assert_eq!(backend.get("data/ab/x").unwrap(), b"kept");
    }

    #[test]
    fn objects_are_written_once_listed_read_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path().join("repo"));
        assert_eq!(backend.put("data/ab/abc", b"one").unwrap(), PutOutcome::Created);
        assert_eq!(backend.put("data/ab/abc", b"two").unwrap(), PutOutcome::AlreadyExisted);
        assert_eq!(backend.get("data/ab/abc").unwrap(), b"one");
        let mut buf = b"longer than one".to_vec();
        backend.get_into("data/ab/abc", &mut buf).unwrap();
        assert_eq!(buf, b"one");
        assert_eq!(backend.get_range("data/ab/abc", 1, 2).unwrap(), b"ne");
        let mut ranges = backend.open_ranges("data/ab/abc").unwrap().unwrap();
        let mut buf = b"x".to_vec();
        ranges.read_range_into(1, 2, &mut buf).unwrap();
        ranges.read_range_into(0, 1, &mut buf).unwrap();
        assert_eq!(buf, b"xneo");
        let eof = ranges.read_range_into(2, 5, &mut buf).unwrap_err();
        assert_eq!((eof.kind(), buf.as_slice()), (io::ErrorKind::UnexpectedEof, &b"xneo"[..]));
        let short = backend.get_range("data/ab/abc", 2, 5).unwrap_err();
        assert_eq!(short.kind(), io::ErrorKind::UnexpectedEof);
        backend.put("data/cd/cde", b"x").unwrap();
        fs::write(dir.path().join("repo/data/ab/.tmp-leftover"), b"junk").unwrap();
        fs::write(dir.path().join("repo/data/ab/\x1b]2;planted\x07"), b"junk").unwrap();
        let names: Vec<_> = backend.list("data").unwrap().into_iter().map(|o| o.name).collect();
        assert_eq!(names, ["data/ab/abc", "data/cd/cde"]);
        assert!(backend.list("snapshots").unwrap().is_empty());
        backend.delete("data/ab/abc").unwrap();
        backend.delete("data/ab/abc").unwrap();
        assert!(!backend.exists("data/ab/abc").unwrap());
        assert_eq!(backend.get("data/ab/abc").unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(backend.get("../escape").is_err());
    }

    /// Files 0600 and directories 0700, not what the umask leaves of 0666 and 0777 (the umask
    /// is the process's, shared by the tests running beside this one: an integration test,
    /// store_security.rs, runs the binary with the umask cleared).
    #[test]
    fn everything_the_backend_creates_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("new/repo");
        let backend = LocalBackend::new(&root);
        let made = (|| -> io::Result<()> {
            backend.put("keys/abc", b"key")?;
            backend.put("config", b"config")?;
            let mut object = backend.begin_object("data")?.expect("a local backend streams");
            object.write(b"pack")?;
            object.commit("data/ab/abc")?;
            Ok(())
        })();
        made.unwrap();
        let mode =
            |rel: &str| fs::metadata(dir.path().join(rel)).unwrap().permissions().mode() & 0o777;
        for file in ["new/repo/keys/abc", "new/repo/config", "new/repo/data/ab/abc"] {
            assert_eq!(mode(file), 0o600, "{file}");
        }
        for folder in ["new", "new/repo", "new/repo/keys", "new/repo/data", "new/repo/data/ab"] {
            assert_eq!(mode(folder), 0o700, "{folder}");
        }
    }

    #[test]
    fn a_deleted_pack_is_no_longer_read_from_its_kept_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        for name in ["data/ab/one", "data/ab/two"] {
            backend.put(name, b"tree bytes").unwrap();
            assert_eq!(backend.get_metadata_range(name, 5, 5).unwrap(), b"bytes");
        }
        backend.delete("data/ab/one").unwrap();
        backend.delete_many(&["data/ab/two".to_string()]).unwrap();
        for name in ["data/ab/one", "data/ab/two"] {
            let gone = backend.get_metadata_range(name, 5, 5).unwrap_err();
            assert_eq!(gone.kind(), io::ErrorKind::NotFound, "{name}");
        }
        assert!(backend.open_tree_packs.lock().unwrap().is_empty());
    }

    #[test]
    fn many_objects_are_deleted_absent_ones_included_and_a_bad_name_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        for name in ["index/a", "index/b", "data/ab/abc", "index/keep"] {
            backend.put(name, b"x").unwrap();
        }
        let names = ["index/a", "data/ab/abc", "index/b", "index/absent"].map(String::from);
        backend.delete_many(&names).unwrap();
        let left: Vec<_> = backend.list("index").unwrap().into_iter().map(|o| o.name).collect();
        assert_eq!(left, ["index/keep"]);
        assert!(backend.list("data").unwrap().is_empty());
        let bad = ["index/keep".to_string(), "../escape".to_string()];
        assert_eq!(backend.delete_many(&bad).unwrap_err().name, "../escape");
        assert!(!backend.exists("index/keep").unwrap());
    }

    /// A batch long enough to be shared among threads: every file goes, and of two bad names
    /// the first one in the batch is reported, however the parts were scheduled.
    #[test]
    fn a_long_batch_is_deleted_in_parts_and_its_first_bad_name_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let names: Vec<String> =
            (0..3 * SHARED_FROM).map(|i| format!("data/{:02x}/{i:03}", i % 7)).collect();
        for name in &names {
            backend.put(name, b"x").unwrap();
        }
        let mut with_bad = names.clone();
        with_bad.insert(names.len() - 2, "../late".into());
        with_bad.insert(3, "../early".into());
        assert_eq!(backend.delete_many(&with_bad).unwrap_err().name, "../early");
        backend.delete_many(&names).unwrap();
        assert!(backend.list("data").unwrap().is_empty());
    }
}
