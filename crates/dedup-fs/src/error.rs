//! The one error type of the crate: what stood in the way of an operation, distinguished where a
//! caller decides differently (the file changed, the file system cannot do it, the name is
//! taken), and the operating system's error otherwise.

use std::fmt;
use std::io;

use rustix::io::Errno;

/// Why an operation of this crate did not happen. Unless a function says otherwise, nothing was
/// changed when it returns an error.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// Another file (another inode) now stands at the path.
    #[error("was replaced by another file")]
    Replaced,
    /// Something other than a regular file stands at the path.
    #[error("is {0}, not a regular file")]
    NotRegular(Found),
    /// Same inode, but its size, mtime or ctime differ from what was expected (or it ended
    /// before the length it was expected to have).
    #[error("was modified")]
    Changed,
    /// The kernel compared two ranges and found them different.
    #[error("content differs")]
    ContentDiffers,
    /// The source of a new hard link was no longer the file validated when the link was made.
    #[error("the file to link to was replaced")]
    SourceReplaced,
    /// A link or a rename cannot cross file systems (and nothing is ever copied instead).
    #[error("is on another file system")]
    CrossDevice,
    /// The file system (or kernel) cannot do this at all: sharing extents, cloning, or copying
    /// in the kernel. The operating system's answer is kept for the message.
    #[error("not supported here ({0})")]
    Unsupported(io::Error),
    /// The name to create already exists.
    #[error("already exists")]
    Exists,
    /// A temporary name of ours holds something a crash of ours could not have left there, so
    /// it is not removed.
    #[error("is {0}, not something dedup left behind")]
    NotOurs(Found),
    /// One piece of metadata could not be set (chown without privilege, xattrs on a file system
    /// without them…); the others are independent of it.
    #[error("cannot set {field}: {source}")]
    Metadata {
        /// Which piece.
        field: MetaField,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file system said at close that the file's bytes were not written back (NFS, SMB and
    /// FUSE report a failed write of cached pages there): the file, not its source, failed.
    #[error("was not written: {0}")]
    Unwritten(io::Error),
    /// The operating system refused (permission, no such file, read-only file system, I/O
    /// error…).
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Errno> for FsError {
    fn from(e: Errno) -> Self {
        FsError::Io(e.into())
    }
}

impl FsError {
    /// True for an operating-system error saying the path does not exist (any more).
    pub fn is_not_found(&self) -> bool {
        matches!(self, FsError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }

    /// The operating system's error number, when there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            FsError::Io(e) | FsError::Unsupported(e) | FsError::Unwritten(e) => e.raw_os_error(),
            FsError::Metadata { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// The operating system's error itself where there is one, for a caller that reports
    /// I/O errors of its own files (a log that [`crate::flush`] found not written).
    pub fn into_io_error(self) -> io::Error {
        match self {
            FsError::Io(e) | FsError::Unsupported(e) | FsError::Unwritten(e) => e,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// What was found at a path that did not hold what an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A symbolic link.
    Symlink,
    /// A directory.
    Directory,
    /// A FIFO, socket or device.
    Special,
    /// A regular file with no other hard link.
    LoneFile,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Found::Symlink => "a symbolic link",
            Found::Directory => "a directory",
            Found::Special => "a special file",
            Found::LoneFile => "a file with no other link",
        })
    }
}

/// The pieces of metadata set separately, named in [`FsError::Metadata`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaField {
    /// Permission bits, set-user-ID, set-group-ID and sticky bits.
    Mode,
    /// Owner and group.
    Owner,
    /// Access and modification times.
    Times,
    /// Extended attributes.
    Xattr,
}

impl fmt::Display for MetaField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MetaField::Mode => "mode",
            MetaField::Owner => "owner",
            MetaField::Times => "times",
            MetaField::Xattr => "extended attributes",
        })
    }
}

/// The errno values that mean "this file system or kernel cannot do that" for the cloning and
/// copying calls, as opposed to a real failure.
pub(crate) fn unsupported(e: Errno, also: &[Errno]) -> bool {
    [Errno::XDEV, Errno::OPNOTSUPP, Errno::INVAL, Errno::NOTTY].contains(&e) || also.contains(&e)
}
