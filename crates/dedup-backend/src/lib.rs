//! Where the store keeps its files: write-once objects named by paths such as `data/ab/ab12…`.
//! The trait every backend implements (shaped after OpenDAL's operations), the local-directory
//! backend and the local cache in front of a remote one, and, behind the cargo features `s3` and
//! `sftp`, the S3 and SFTP backends with their network stack (OpenDAL, HTTP, TLS, ssh, a tokio
//! runtime). A build without those features opens local repositories only, and says so for an
//! `s3:` or `sftp:` location. Also the two things every backend names objects with: content
//! ids ([`Id`]) and this machine ([`host`]).

mod cached;
#[cfg(any(feature = "s3", feature = "sftp"))]
mod dal;
pub mod host;
#[cfg(feature = "sftp")]
mod host_keys;
mod id;
mod local;
mod local_files;
mod local_object;
mod remote_options;
#[cfg(feature = "s3")]
mod s3;
mod s3_location;
#[cfg(feature = "sftp")]
mod sftp;
mod sftp_location;
mod temporary;

pub use cached::CachedBackend;
pub use id::Id;
pub use local::LocalBackend;
pub use remote_options::S3Options;
#[cfg(feature = "s3")]
pub use s3::{S3Backend, MULTIPART_THRESHOLD, PART_SIZE};
pub use s3_location::{plain_http_warning, S3Location};
#[cfg(feature = "sftp")]
pub use sftp::SftpBackend;
pub use sftp_location::SftpLocation;

use std::io;
use std::path::Path;
use std::sync::Arc;

/// Whether `location` names object storage rather than a local directory.
pub fn is_remote(location: &Path) -> bool {
    location.to_str().is_some_and(|text| text.starts_with("s3:") || text.starts_with("sftp:"))
}

/// The backend for `location`: S3 for `s3:…`, SFTP for `sftp:…`, otherwise a local directory.
/// `remote` sets the connections, retries and timeouts of both remote kinds. A kind this build
/// leaves out (cargo features `s3`, `sftp`) is refused with a message that says so.
pub fn open_backend(location: &Path, remote: &S3Options) -> io::Result<Arc<dyn Backend>> {
    match location.to_str() {
        Some(text) if text.starts_with("s3:") => open_s3(text, remote),
        Some(text) if text.starts_with("sftp:") => open_sftp(text, remote),
        _ => Ok(Arc::new(LocalBackend::new(location))),
    }
}

#[cfg(feature = "s3")]
fn open_s3(location: &str, remote: &S3Options) -> io::Result<Arc<dyn Backend>> {
    Ok(Arc::new(S3Backend::new(location, remote)?))
}

#[cfg(not(feature = "s3"))]
fn open_s3(_location: &str, _remote: &S3Options) -> io::Result<Arc<dyn Backend>> {
    Err(left_out("S3", "s3"))
}

#[cfg(feature = "sftp")]
fn open_sftp(location: &str, remote: &S3Options) -> io::Result<Arc<dyn Backend>> {
    Ok(Arc::new(SftpBackend::new(location, remote)?))
}

#[cfg(not(feature = "sftp"))]
fn open_sftp(_location: &str, _remote: &S3Options) -> io::Result<Arc<dyn Backend>> {
    Err(left_out("SFTP", "sftp"))
}

/// The error for a kind of storage this build leaves out.
#[cfg(not(all(feature = "s3", feature = "sftp")))]
fn left_out(kind: &str, feature: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("this dedup was built without {kind} support (cargo feature `{feature}`)"),
    )
}

/// Whether a listed name can be an object of a repository: none has a control character, and
/// one that has (planted by whoever can write to the storage) would reach the user's terminal
/// in messages that name it, so listings leave such names out, as they leave out hidden ones.
pub(crate) fn listable(name: &str) -> bool {
    !name.chars().any(char::is_control)
}

/// `text` from the other side (a server's error message, what ssh printed) made safe to print:
/// control characters but the newline escaped, so that no escape sequence reaches the terminal.
#[cfg_attr(not(any(feature = "s3", feature = "sftp")), allow(dead_code))]
pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> =
                if c.is_control() && c != '\n' { c.escape_default().collect() } else { vec![c] };
            escaped
        })
        .collect()
}

/// An object in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Its path relative to the repository, with `/` separators.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When the storage last wrote it, where the storage says (the one clock that all hosts
    /// writing to a repository share, §12).
    pub modified: Option<std::time::SystemTime>,
}

/// What `put` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutOutcome {
    /// The object was written.
    Created,
    /// An object of that name existed and was left alone.
    AlreadyExisted,
}

/// A deletion of several objects that stopped: the object that could not be deleted, and why.
/// Objects before it may be gone, others not; deleting them again is harmless.
#[derive(Debug)]
pub struct DeleteFailure {
    /// The object that failed.
    pub name: String,
    /// What the storage said.
    pub cause: io::Error,
}

/// An object written as its bytes come, for a name known only once they are all written (a
/// pack, named by the hash of its bytes): the bytes go to the storage instead of memory.
/// Dropped without [`ObjectWriter::commit`], it removes what it wrote; a process killed before
/// then leaves a temporary that every reader ignores (docs/store-format.md §1, §11).
pub trait ObjectWriter: Send {
    /// Appends `bytes`.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes the object durable under `name`, write-once as [`Backend::put`]: an object of that
    /// name is left alone (`AlreadyExisted`), and an error leaves no object.
    fn commit(self: Box<Self>, name: &str) -> io::Result<PutOutcome>;
    /// Marks the unfinished object as a live writer's, for a storage that judges leftovers by
    /// age (prune removes temporaries untouched for an hour, §11).
    fn keep_alive(&self) -> io::Result<()> {
        Ok(())
    }
}

/// An object opened for reads of byte ranges ([`Backend::open_ranges`]).
pub trait RangeReader: Send {
    /// Appends exactly `len` bytes of the object from `offset` to `buf`, or nothing and an error
    /// (`UnexpectedEof` if the object is shorter).
    fn read_range_into(&mut self, offset: u64, len: u64, buf: &mut Vec<u8>) -> io::Result<()>;
}

/// A store of write-once objects.
pub trait Backend: Send + Sync {
    /// A human-readable location, for messages.
    fn location(&self) -> String;
    /// Writes `name` whole and durably; never replaces an existing object.
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome>;
    /// Starts an object for the folder `folder` (e.g. `data`) that is written as its bytes come,
    /// where the storage can hold them outside memory until the object is named (a local
    /// directory); `None` where objects are written whole, and the caller buffers them for
    /// [`Backend::put`].
    fn begin_object(&self, _folder: &str) -> io::Result<Option<Box<dyn ObjectWriter>>> {
        Ok(None)
    }
    /// Reads `name` whole (`NotFound` if absent).
    fn get(&self, name: &str) -> io::Result<Vec<u8>>;
    /// Reads `name` whole into `buf`, replacing what it held: a caller reading many objects in
    /// turn (`check` reading every pack) reuses one buffer, whose memory is then not faulted in
    /// afresh for each. The default reads with `get`.
    fn get_into(&self, name: &str, buf: &mut Vec<u8>) -> io::Result<()> {
        *buf = self.get(name)?;
        Ok(())
    }
    /// Reads `len` bytes of `name` from `offset` (`UnexpectedEof` if the object is shorter).
    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>>;
    /// Opens `name` for reads of many ranges that cost little each (a local file, kept open):
    /// a caller then reads each blob's own bytes rather than joining neighbours and their gaps
    /// into one request. `None` where every range is a request of its own (object storage,
    /// SFTP), which callers join.
    fn open_ranges(&self, _name: &str) -> io::Result<Option<Box<dyn RangeReader>>> {
        Ok(None)
    }
    /// Like `get_range`, for a range holding metadata (a tree blob) that a caching backend may
    /// keep a copy of.
    fn get_metadata_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.get_range(name, offset, len)
    }
    /// Drops the kept copy of such a range (it did not open).
    fn forget_metadata_range(&self, _name: &str, _offset: u64, _len: u64) {}
    /// Every object under the folder `prefix` (e.g. `data`), at any depth.
    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>>;
    /// Deletes `name`; deleting an absent object succeeds.
    fn delete(&self, name: &str) -> io::Result<()>;
    /// Deletes every object of `names`, in no particular order (a caller that needs one deletion
    /// before another makes two calls); absent ones succeed, as with `delete`. Object storage
    /// sends many in one request; the default deletes them one by one.
    fn delete_many(&self, names: &[String]) -> Result<(), DeleteFailure> {
        for name in names {
            self.delete(name).map_err(|cause| DeleteFailure { name: name.clone(), cause })?;
        }
        Ok(())
    }
    /// Whether `name` exists.
    fn exists(&self, name: &str) -> io::Result<bool>;
    /// Removes the partial objects that writers which are gone left behind (a backend whose
    /// writes are whole, as object storage's, has none); returns how many.
    fn remove_stale_temporaries(&self, _stale_after: std::time::Duration) -> io::Result<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_from_the_other_side_prints_without_escape_sequences() {
        assert_eq!(super::printable("a\x1b]2;x\x07\nb\tc"), "a\\u{1b}]2;x\\u{7}\nb\\tc");
        assert!(super::listable("data/ab/abc") && !super::listable("data/ab/a\x1bb"));
    }
}
