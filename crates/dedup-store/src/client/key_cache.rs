//! The client's key cache: after a password opened a repository's key slot with its costly
//! argon2 parameters, the master key is kept on this machine wrapped under the same password
//! with cheap ones, so that the next open of that location costs milliseconds instead of the
//! full KDF (docs/store-format.md, "The client's key cache", argues the trade).
//!
//! One file per location, `$XDG_CACHE_HOME/dedup/keys/<hash of the location>` (`~/.cache`
//! without XDG_CACHE_HOME), in a directory 0700 marked with a `CACHEDIR.TAG` (so that backups
//! honouring it leave it out). The file is a key file (the repository's own format, §4) whose
//! label names the slot it mirrors and the location; the label is associated data of the
//! wrapped key, so a file edited, moved from another location or made for another slot does
//! not open. A cached key is used only while that slot is still in the repository: removing
//! the slot (`key remove`, `key passwd`) retires it, and a password that does not open it is
//! tried against the repository's slots as if there were no cache.
//!
//! A file that is not a private regular file of this user (group or world bits, another
//! owner, a link) is never read: the caller is told why, and it is replaced by a private one
//! when the key is next kept.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::crypto::keys::{self, MasterKey};
use crate::format::{Kdf, KdfParams, KeyFile};
use crate::id::Id;

/// argon2 parameters of a cached key: a try costs about a millisecond (against the repository
/// slot's default of 64 MiB and three passes), yet still far more than a bare hash.
pub const CACHE_KDF: KdfParams = KdfParams { memory_kib: 1024, iterations: 1, lanes: 1 };

const LABEL_PREFIX: &str = "dedup client key cache 1";
const CACHE_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file marks dedup's key cache: backup tools that honour it leave it out.\n";
/// A cache file is a key file: a few hundred bytes. Anything much longer is not one.
const MOST_BYTES: u64 = 4096;

/// Why the cache of a location was not used or not kept.
#[derive(Debug, thiserror::Error)]
pub enum KeyCacheError {
    /// Reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file is not private to this user: never read.
    #[error("{}: ignored: {reason} (a cached key must be a regular file of yours, mode 0600)", path.display())]
    Unsafe {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The file does not read as a cache of this location.
    #[error("{}: ignored: {reason}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// A cached key as read, not yet opened: the key slot it mirrors, and its wrapped key.
#[derive(Debug, Clone)]
pub struct CachedKey {
    /// The repository's key slot whose master key this is.
    pub slot: Id,
    file: KeyFile,
}

impl CachedKey {
    /// The master key, if `password` opens it; None for any other password.
    pub(crate) fn open(&self, password: &[u8]) -> Option<MasterKey> {
        keys::unwrap(&self.file, password).ok()
    }
}

/// The key cache: a directory of files, one per location.
#[derive(Debug, Clone)]
pub struct KeyCache {
    dir: PathBuf,
}

impl KeyCache {
    /// The cache kept in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        KeyCache { dir }
    }

    /// `$XDG_CACHE_HOME/dedup/keys`, else `~/.cache/dedup/keys`; None without a home.
    pub fn default_dir() -> Option<PathBuf> {
        Some(dedup_core::xdg::xdg_dir("XDG_CACHE_HOME", ".cache")?.join("dedup/keys"))
    }

    /// The file of `location`.
    pub fn path_of(&self, location: &str) -> PathBuf {
        self.dir.join(location_hash(location))
    }

    /// The cached key of `location`, if there is one that reads.
    pub fn load(&self, location: &str) -> Result<Option<CachedKey>, KeyCacheError> {
        let path = self.path_of(location);
        let mut file = match File::options()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
        {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) if err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                return Err(KeyCacheError::Unsafe { path, reason: "a symbolic link".into() })
            }
            Err(source) => return Err(KeyCacheError::Io { path, source }),
        };
        let meta =
            file.metadata().map_err(|source| KeyCacheError::Io { path: path.clone(), source })?;
        if let Some(reason) = unsafe_because(&meta) {
            return Err(KeyCacheError::Unsafe { path, reason });
        }
        let mut bytes = Vec::new();
        Read::take(&mut file, MOST_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|source| KeyCacheError::Io { path: path.clone(), source })?;
        let damaged = |reason: String| KeyCacheError::Damaged { path: path.clone(), reason };
        let key_file = KeyFile::decode(&bytes).map_err(|e| damaged(e.to_string()))?;
        if key_file.kdf != Kdf::Argon2id || key_file.params != CACHE_KDF {
            return Err(damaged("not the key cache's KDF parameters".into()));
        }
        let slot = parse_label(&key_file.label, location)
            .ok_or_else(|| damaged("the cache of another location, or not a cache".into()))?;
        Ok(Some(CachedKey { slot, file: key_file }))
    }

    /// Keeps `master`, the key of `slot` at `location`, wrapped under `password`: a private
    /// temporary file, flushed, renamed over the old one.
    pub(crate) fn keep(
        &self,
        location: &str,
        slot: Id,
        master: &MasterKey,
        password: &[u8],
    ) -> Result<(), KeyCacheError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| KeyCacheError::Io { path, source }
        };
        self.make_dir()?;
        let label = label(location, slot);
        let file =
            keys::wrap(master, Kdf::Argon2id, CACHE_KDF, password, label, 0).map_err(|e| {
                KeyCacheError::Io { path: self.dir.clone(), source: io::Error::other(e) }
            })?;
        let path = self.path_of(location);
        let temp = self.dir.join(format!(".tmp-{}", Id::random().short(16)));
        let written = (|| {
            let mut out = File::options().write(true).create_new(true).mode(0o600).open(&temp)?;
            out.write_all(&file.encode())?;
            out.sync_all()?;
            fs::rename(&temp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written.map_err(io(&path))
    }

    /// Removes the cached key of `location` (after its slot was removed or its password
    /// changed); none there is no error.
    pub fn forget(&self, location: &str) -> Result<(), KeyCacheError> {
        let path = self.path_of(location);
        match fs::remove_file(&path) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => {
                Err(KeyCacheError::Io { path, source: err })
            }
            _ => Ok(()),
        }
    }

    /// Creates the directory, private, with its `CACHEDIR.TAG`; refuses one that others can
    /// enter or that is not this user's.
    fn make_dir(&self) -> Result<(), KeyCacheError> {
        let io = |source| KeyCacheError::Io { path: self.dir.clone(), source };
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir).map_err(io)?;
        let meta = fs::symlink_metadata(&self.dir).map_err(io)?;
        if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(KeyCacheError::Unsafe {
                path: self.dir.clone(),
                reason: "not a directory of yours".into(),
            });
        }
        if meta.mode() & 0o077 != 0 {
            return Err(KeyCacheError::Unsafe {
                path: self.dir.clone(),
                reason: format!("mode {:o}: others can enter it", meta.mode() & 0o777),
            });
        }
        let tag = self.dir.join("CACHEDIR.TAG");
        if !tag.exists() {
            // Best effort: without the tag the cache is only more likely to be backed up.
            let _ = File::options()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tag)
                .and_then(|mut f| f.write_all(CACHE_TAG.as_bytes()));
        }
        Ok(())
    }
}

/// Why a cache file with metadata `meta` must not be read, if it must not.
fn unsafe_because(meta: &fs::Metadata) -> Option<String> {
    if !meta.is_file() {
        Some("not a regular file".into())
    } else if meta.uid() != rustix::process::geteuid().as_raw() {
        Some(format!("owned by user {}, not by this user", meta.uid()))
    } else if meta.mode() & 0o077 != 0 {
        Some(format!("mode {:o}: others can read or write it", meta.mode() & 0o777))
    } else {
        None
    }
}

fn location_hash(location: &str) -> String {
    Id::of_file(location.as_bytes()).short(32)
}

fn label(location: &str, slot: Id) -> String {
    format!("{LABEL_PREFIX} keys/{slot} at {}", location_hash(location))
}

/// The slot a cache file's label names, if it is the label of a cache of `location`.
fn parse_label(text: &str, location: &str) -> Option<Id> {
    let rest = text.strip_prefix(LABEL_PREFIX)?.strip_prefix(" keys/")?;
    let (slot, at) = rest.split_once(" at ")?;
    let slot = Id::from_hex(slot)?;
    (at == location_hash(location)).then_some(slot)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn kept(dir: &Path) -> (KeyCache, MasterKey, Id) {
        let cache = KeyCache::new(dir.join("keys"));
        let master = MasterKey::generate();
        let slot = Id([7; 32]);
        cache.keep("/srv/repo", slot, &master, b"pw").unwrap();
        (cache, master, slot)
    }

    #[test]
    fn a_kept_key_opens_with_its_password_only_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, master, slot) = kept(dir.path());
        let cached = cache.load("/srv/repo").unwrap().unwrap();
        assert_eq!(cached.slot, slot);
        assert_eq!(cached.open(b"pw").unwrap().fingerprint(), master.fingerprint());
        assert!(cached.open(b"pW").is_none());
        assert!(cache.load("/srv/other").unwrap().is_none());
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&cache.path_of("/srv/repo")), 0o600);
        assert_eq!(mode(&dir.path().join("keys")), 0o700);
        assert!(dir.path().join("keys/CACHEDIR.TAG").exists());
        cache.forget("/srv/repo").unwrap();
        assert!(cache.load("/srv/repo").unwrap().is_none());
        cache.forget("/srv/repo").unwrap();
    }

    #[test]
    fn a_file_others_can_read_or_a_link_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _, _) = kept(dir.path());
        let path = cache.path_of("/srv/repo");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let err = cache.load("/srv/repo").unwrap_err();
        assert!(matches!(err, KeyCacheError::Unsafe { .. }), "{err}");
        assert!(err.to_string().contains("mode 640"), "{err}");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let moved = dir.path().join("elsewhere");
        fs::rename(&path, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &path).unwrap();
        let err = cache.load("/srv/repo").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }

    #[test]
    fn an_edited_or_moved_file_does_not_open() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _, _) = kept(dir.path());
        let path = cache.path_of("/srv/repo");
        // The file of another location under this one's name.
        fs::copy(&path, cache.path_of("/srv/other")).unwrap();
        let err = cache.load("/srv/other").unwrap_err();
        assert!(err.to_string().contains("another location"), "{err}");
        // Any byte changed: either it no longer decodes, or the password no longer opens it.
        let bytes = fs::read(&path).unwrap();
        for at in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            let mut edited = bytes.clone();
            edited[at] ^= 1;
            fs::write(&path, &edited).unwrap();
            if let Ok(Some(cached)) = cache.load("/srv/repo") {
                assert!(cached.open(b"pw").is_none(), "byte {at}");
            }
        }
    }

    #[test]
    fn a_directory_others_can_enter_is_not_written_to() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KeyCache::new(dir.path().join("keys"));
        fs::create_dir(dir.path().join("keys")).unwrap();
        fs::set_permissions(dir.path().join("keys"), fs::Permissions::from_mode(0o755)).unwrap();
        let err = cache.keep("/srv/repo", Id([1; 32]), &MasterKey::generate(), b"pw").unwrap_err();
        assert!(matches!(err, KeyCacheError::Unsafe { .. }), "{err}");
        assert!(!cache.path_of("/srv/repo").exists());
    }
}
