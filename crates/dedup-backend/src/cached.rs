//! A local cache in front of a remote backend for the small objects every command reads whole:
//! index files and snapshots. They are write-once and named by the BLAKE3 hash of their bytes,
//! so a cached copy is valid exactly when its bytes still hash to its name; a listing of
//! `index/` or `snapshots/` drops cached files the repository no longer has (prune deleted them).
//! Packs of tree blobs (read again by every backup from its parent) are kept too, whole, under
//! `trees/<pack id>`, fetched in one request at the first tree read from them; the caller opens
//! each tree (authenticated) and drops a pack that fails; a listing of `data/` drops the copies of
//! packs that are gone.
//! Copies are kept as stored (sealed), so the cache holds no plaintext. The cache directory is
//! attached after the repository is opened, because it is named by the repository id, which only
//! the key reveals; until then every call goes straight to the remote backend.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::local_files::{PRIVATE_DIR, PRIVATE_FILE};
use super::{Backend, DeleteFailure, ObjectInfo, ObjectWriter, PutOutcome};
use crate::Id;

/// The folders whose objects are cached.
const CACHED: [&str; 2] = ["index", "snapshots"];

/// A backend with a local copy of its index files and snapshots.
pub struct CachedBackend {
    inner: Arc<dyn Backend>,
    dir: OnceLock<PathBuf>,
}

impl CachedBackend {
    /// A cache in front of `inner`, not yet attached to a directory.
    pub fn new(inner: Arc<dyn Backend>) -> Self {
        CachedBackend { inner, dir: OnceLock::new() }
    }

    /// Keeps copies under `dir` from now on (`dir` is created when first written to).
    pub fn attach(&self, dir: PathBuf) {
        let _ = self.dir.set(dir);
    }

    /// The cache directory of a repository: `$XDG_CACHE_HOME/dedup/store/<repo id>`, or under
    /// `~/.cache` when XDG_CACHE_HOME is unset; None without a home.
    pub fn default_dir(repo_id: &Id) -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
        Some(base.join("dedup/store").join(repo_id.to_hex()))
    }

    /// Where `name` is cached, if it is of a cached kind and the cache is attached.
    fn path(&self, name: &str) -> Option<PathBuf> {
        let dir = self.dir.get()?;
        let (folder, file) = name.split_once('/')?;
        (CACHED.contains(&folder) && Id::from_hex(file).is_some())
            .then(|| dir.join(folder).join(file))
    }

    /// The cached bytes of `name` when they are whole (they hash to the name).
    fn cached(&self, name: &str, path: &Path) -> Option<Vec<u8>> {
        let bytes = fs::read(path).ok()?;
        let (_, file) = name.split_once('/')?;
        if Id::of_file(&bytes).to_hex() == file {
            Some(bytes)
        } else {
            let _ = fs::remove_file(path);
            None
        }
    }

    /// Stores a copy, private to the user (files 0600 in directories 0700, as the repository's
    /// own); a cache that cannot be written is only slower, never an error.
    fn keep(path: &Path, bytes: &[u8]) {
        let Some(dir) = path.parent() else { return };
        let temp = dir.join(format!(".tmp-{}", Id::random().short(16)));
        let written =
            fs::DirBuilder::new().recursive(true).mode(PRIVATE_DIR).create(dir).and_then(|()| {
                let mut file = fs::File::options()
                    .write(true)
                    .create_new(true)
                    .mode(PRIVATE_FILE)
                    .open(&temp)?;
                file.write_all(bytes)?;
                fs::rename(&temp, path)
            });
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
    }

    /// Where pack `name` is kept (whole: a pack holding trees holds only trees), if attached.
    fn pack_path(&self, name: &str) -> Option<PathBuf> {
        let pack = name.strip_prefix("data/")?.rsplit('/').next()?;
        Id::from_hex(pack)?;
        Some(self.dir.get()?.join("trees").join(pack))
    }

    /// Drops the copies of `name`, which the repository no longer has: the file itself, or the
    /// tree ranges of a pack.
    fn drop_copies(&self, name: &str) {
        for path in [self.path(name), self.pack_path(name)].into_iter().flatten() {
            let _ = fs::remove_file(path);
        }
    }

    /// Drops kept tree ranges of packs the listing of `data/` no longer has.
    fn prune_trees(&self, listing: &[ObjectInfo]) {
        let Some(dir) = self.dir.get() else { return };
        let Ok(entries) = fs::read_dir(dir.join("trees")) else { return };
        let present: HashSet<&str> =
            listing.iter().filter_map(|o| o.name.rsplit('/').next()).collect();
        for entry in entries.flatten() {
            if !entry.file_name().to_str().is_some_and(|n| present.contains(n)) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    /// Drops cached copies of `folder` that the listing no longer has.
    fn prune(&self, folder: &str, listing: &[ObjectInfo]) {
        let Some(dir) = self.dir.get() else { return };
        let Ok(entries) = fs::read_dir(dir.join(folder)) else { return };
        let present: HashSet<&str> =
            listing.iter().filter_map(|o| o.name.strip_prefix(folder)?.strip_prefix('/')).collect();
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_str().is_some_and(|n| present.contains(n)) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

impl Backend for CachedBackend {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        let outcome = self.inner.put(name, bytes)?;
        if let Some(path) = self.path(name) {
            Self::keep(&path, bytes);
        }
        Ok(outcome)
    }

    fn begin_object(&self, folder: &str) -> io::Result<Option<Box<dyn ObjectWriter>>> {
        // Objects of the cached folders go through `put`, which keeps their copy.
        if CACHED.contains(&folder) {
            return Ok(None);
        }
        self.inner.begin_object(folder)
    }

    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        let Some(path) = self.path(name) else { return self.inner.get(name) };
        if let Some(bytes) = self.cached(name, &path) {
            return Ok(bytes);
        }
        let bytes = self.inner.get(name)?;
        Self::keep(&path, &bytes);
        Ok(bytes)
    }

    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.inner.get_range(name, offset, len)
    }

    fn get_metadata_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let Some(path) = self.pack_path(name) else {
            return self.inner.get_range(name, offset, len);
        };
        let slice = |pack: &[u8]| {
            let from = usize::try_from(offset).ok()?;
            pack.get(from..from.checked_add(usize::try_from(len).ok()?)?).map(<[u8]>::to_vec)
        };
        if let Some(bytes) = fs::read(&path).ok().as_deref().and_then(slice) {
            return Ok(bytes);
        }
        // The whole pack in one request: the next trees of a walk are mostly in it.
        let pack = self.inner.get(name)?;
        Self::keep(&path, &pack);
        slice(&pack).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{name}: shorter than {offset}+{len}"),
            )
        })
    }

    fn forget_metadata_range(&self, name: &str, _offset: u64, _len: u64) {
        if let Some(path) = self.pack_path(name) {
            let _ = fs::remove_file(path);
        }
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
        let listing = self.inner.list(prefix)?;
        let folder = prefix.trim_end_matches('/');
        if CACHED.contains(&folder) {
            self.prune(folder, &listing);
        } else if folder == "data" {
            self.prune_trees(&listing);
        }
        Ok(listing)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        self.inner.delete(name)?;
        self.drop_copies(name);
        Ok(())
    }

    fn delete_many(&self, names: &[String]) -> Result<(), DeleteFailure> {
        let deleted = self.inner.delete_many(names);
        // Even when one failed: those before it may be gone, and a copy dropped too many is
        // only read again.
        for name in names {
            self.drop_copies(name);
        }
        deleted
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        self.inner.exists(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalBackend;

    /// Counts the reads that reach the backend behind the cache.
    struct Counting {
        inner: LocalBackend,
        gets: std::sync::atomic::AtomicUsize,
    }

    impl Backend for Counting {
        fn location(&self) -> String {
            self.inner.location()
        }
        fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
            self.inner.put(name, bytes)
        }
        fn get(&self, name: &str) -> io::Result<Vec<u8>> {
            self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.get(name)
        }
        fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            self.inner.get_range(name, offset, len)
        }
        fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
            self.inner.list(prefix)
        }
        fn delete(&self, name: &str) -> io::Result<()> {
            self.inner.delete(name)
        }
        fn exists(&self, name: &str) -> io::Result<bool> {
            self.inner.exists(name)
        }
    }

    #[test]
    fn index_files_are_read_once_checked_and_dropped_when_the_repository_drops_them() {
        let dir = tempfile::tempdir().unwrap();
        let remote = Arc::new(Counting {
            inner: LocalBackend::new(dir.path().join("repo")),
            gets: Default::default(),
        });
        let cache_dir = dir.path().join("cache");
        let cached = CachedBackend::new(remote.clone());
        let bytes = b"an index file".to_vec();
        let name = format!("index/{}", Id::of_file(&bytes).to_hex());
        remote.put(&name, &bytes).unwrap();
        remote.put("data/ab/abcd", b"pack").unwrap();
        let gets = || remote.gets.load(std::sync::atomic::Ordering::Relaxed);

        assert_eq!(cached.get(&name).unwrap(), bytes, "not attached: straight through");
        cached.attach(cache_dir.clone());
        assert_eq!(cached.get(&name).unwrap(), bytes);
        assert_eq!(cached.get(&name).unwrap(), bytes);
        assert_eq!(gets(), 2, "the second read after attaching came from the cache");
        cached.get("data/ab/abcd").unwrap();
        cached.get("data/ab/abcd").unwrap();
        assert_eq!(gets(), 4, "packs are not cached");

        let copy = cache_dir.join(&name);
        fs::write(&copy, b"damaged").unwrap();
        assert_eq!(cached.get(&name).unwrap(), bytes, "a damaged copy is fetched again");
        assert_eq!(gets(), 5);
        assert_eq!(fs::read(&copy).unwrap(), bytes);

        remote.delete(&name).unwrap();
        assert!(cached.list("index").unwrap().is_empty());
        assert!(!copy.exists(), "a listing drops copies the repository no longer has");

        let pack = format!("data/ab/{}", Id::of_file(b"a pack").to_hex());
        remote.put(&pack, b"a pack with a tree").unwrap();
        assert_eq!(cached.get_metadata_range(&pack, 2, 4).unwrap(), b"pack");
        remote.delete(&pack).unwrap();
        remote.put(&pack, b"a PACK with a tree").unwrap();
        assert_eq!(cached.get_metadata_range(&pack, 2, 4).unwrap(), b"pack", "kept");
        cached.forget_metadata_range(&pack, 2, 4);
        assert_eq!(cached.get_metadata_range(&pack, 2, 4).unwrap(), b"PACK", "dropped, read again");
        remote.delete(&pack).unwrap();
        cached.list("data").unwrap();
        assert!(!cache_dir.join("trees").join(&pack[8..]).exists(), "gone with its pack");
        assert!(cached.get_metadata_range(&pack, 2, 4).is_err(), "a missing pack is an error");
    }

    /// The copies are as private as the repository's files.
    #[test]
    fn copies_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let remote = Arc::new(LocalBackend::new(dir.path().join("repo")));
        let cached = CachedBackend::new(remote.clone());
        cached.attach(dir.path().join("cache/dedup/store/abc"));
        let bytes = b"an index file".to_vec();
        let index = format!("index/{}", Id::of_file(&bytes).to_hex());
        remote.put(&index, &bytes).unwrap();
        let pack = format!("data/ab/{}", Id::of_file(b"a pack").to_hex());
        remote.put(&pack, b"a pack with a tree").unwrap();
        let read = cached.get(&index).and_then(|_| cached.get_metadata_range(&pack, 2, 4));
        read.unwrap();
        let mode =
            |rel: &str| fs::metadata(dir.path().join(rel)).unwrap().permissions().mode() & 0o777;
        let base = "cache/dedup/store/abc";
        assert_eq!(mode(&format!("{base}/{index}")), 0o600);
        assert_eq!(mode(&format!("{base}/trees/{}", &pack[8..])), 0o600);
        for folder in ["cache", "cache/dedup", "cache/dedup/store", base, &format!("{base}/index")]
        {
            assert_eq!(mode(folder), 0o700, "{folder}");
        }
    }

    #[test]
    fn deleting_many_objects_drops_their_copies_and_absent_ones_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let remote = Arc::new(LocalBackend::new(dir.path().join("repo")));
        let cached = CachedBackend::new(remote.clone());
        let cache_dir = dir.path().join("cache");
        cached.attach(cache_dir.clone());
        let bytes = b"an index file".to_vec();
        let index = format!("index/{}", Id::of_file(&bytes).to_hex());
        remote.put(&index, &bytes).unwrap();
        let pack = format!("data/ab/{}", Id::of_file(b"a pack").to_hex());
        remote.put(&pack, b"a pack with a tree").unwrap();
        cached.get(&index).unwrap();
        cached.get_metadata_range(&pack, 2, 4).unwrap();
        assert!(cache_dir.join(&index).exists());
        assert!(cache_dir.join("trees").join(&pack[8..]).exists());

        let absent = format!("data/cd/{}", Id::of_file(b"never written").to_hex());
        cached.delete_many(&[index.clone(), pack.clone(), absent]).unwrap();
        assert!(!remote.exists(&index).unwrap() && !remote.exists(&pack).unwrap());
        assert!(!cache_dir.join(&index).exists(), "the index file's copy went with it");
        assert!(!cache_dir.join("trees").join(&pack[8..]).exists(), "and the pack's trees");
        assert!(cached.get_metadata_range(&pack, 2, 4).is_err(), "not served from a copy");
    }
}
