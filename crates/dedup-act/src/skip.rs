//! Why a file was not acted on. Each reason is one line a user can act on.

use std::fmt;
use std::io;

use dedup_fs::{Found, FsError};

/// A step that was not carried out, and why. Nothing was changed for it.
#[derive(Debug)]
pub enum SkipReason {
    /// The path no longer exists.
    Vanished,
    /// Another file (another inode) now stands at the path.
    Replaced,
    /// Something other than a regular file now stands at the path (symlink, directory…).
    NotRegular(&'static str),
    /// Same inode, but its size, mtime or ctime differ from the scan.
    Changed,
    /// The content is no longer equal to the kept file's.
    ContentDiffers,
    /// The kept file itself cannot be used (it changed, vanished or was replaced).
    Kept(Box<SkipReason>),
    /// A hard link (or a move without copying) cannot cross file systems.
    OtherFileSystem,
    /// The file system cannot share extents between these files.
    ReflinkUnsupported(String),
    /// The destination of a move already exists.
    DestinationExists,
    /// A directory still holds entries (files skipped or kept, or never scanned), so it stays.
    NotEmpty,
    /// The path lies under none of the report's roots (or climbs out of its root with `..`).
    OutsideRoots,
    /// A directory between the root and the file is now a symbolic link or a non-directory (or
    /// the way leaves the root): following it could act outside the trees scanned.
    SymlinkOnPath,
    /// The kept file or the duplicate lies on a stacking file system (overlayfs, FUSE), the
    /// other on another device: they may be one file, and removing the duplicate (or replacing
    /// it with a symlink) could take the kept file's data too.
    KeptMayBeThisFile,
    /// `link`, `symlink`: the duplicate's owner, group or mode differ from the kept file's.
    OtherOwner,
    /// `move`: a directory on the way to the destination below `--to` is a symbolic link or
    /// not a directory.
    DestinationThroughSymlink,
    /// `remove`: the duplicate belongs to another user than the kept file.
    OtherUser,
    /// The operating system refused (permission, read-only file system, I/O error…).
    Io(io::Error),
}

impl SkipReason {
    /// The reason for an error met while looking at or changing a path.
    pub(crate) fn from_io(err: io::Error) -> SkipReason {
        if err.kind() == io::ErrorKind::NotFound {
            SkipReason::Vanished
        } else {
            SkipReason::Io(err)
        }
    }

    /// Short machine-readable name, for the log.
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::Vanished => "vanished",
            SkipReason::Replaced => "replaced",
            SkipReason::NotRegular(_) => "not-regular",
            SkipReason::Changed => "changed",
            SkipReason::ContentDiffers => "content-differs",
            SkipReason::Kept(_) => "kept-unusable",
            SkipReason::OtherFileSystem => "other-file-system",
            SkipReason::ReflinkUnsupported(_) => "reflink-unsupported",
            SkipReason::DestinationExists => "destination-exists",
            SkipReason::NotEmpty => "not-empty",
            SkipReason::OutsideRoots => "outside-roots",
            SkipReason::SymlinkOnPath => "symlink-on-path",
            SkipReason::KeptMayBeThisFile => "kept-may-be-this-file",
            SkipReason::OtherOwner => "other-owner",
            SkipReason::DestinationThroughSymlink => "destination-through-symlink",
            SkipReason::OtherUser => "other-user",
            SkipReason::Io(_) => "io-error",
        }
    }
}

/// The reason a step is skipped when a file operation refused. The texts are this crate's
/// (dedup-fs names what happened; the messages a user reads about a plan are said here).
impl From<FsError> for SkipReason {
    fn from(e: FsError) -> Self {
        match e {
            FsError::Replaced => SkipReason::Replaced,
            FsError::NotRegular(found) => SkipReason::NotRegular(match found {
                Found::Symlink => "a symbolic link",
                Found::Directory => "a directory",
                Found::Special | Found::LoneFile => "a special file",
            }),
            FsError::Changed => SkipReason::Changed,
            FsError::ContentDiffers => SkipReason::ContentDiffers,
            FsError::SourceReplaced => SkipReason::Kept(Box::new(SkipReason::Replaced)),
            FsError::CrossDevice => SkipReason::OtherFileSystem,
            FsError::Unsupported(e) => SkipReason::ReflinkUnsupported(e.to_string()),
            FsError::Exists => SkipReason::DestinationExists,
            FsError::NotOurs(Found::LoneFile) => SkipReason::NotRegular(
                "a file with no other link (not one dedup left behind; left alone)",
            ),
            FsError::NotOurs(_) => {
                SkipReason::NotRegular("not a file dedup left behind (left alone)")
            }
            FsError::Metadata { source, .. } => SkipReason::from_io(source),
            FsError::Io(e) | FsError::Unwritten(e) => SkipReason::from_io(e),
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Vanished => f.write_str("no longer exists"),
            SkipReason::Replaced => f.write_str("was replaced by another file since the scan"),
            SkipReason::NotRegular(what) => write!(f, "is now {what}, not the file scanned"),
            SkipReason::Changed => f.write_str("was modified since the scan"),
            SkipReason::ContentDiffers => f.write_str("content no longer equals the kept file"),
            SkipReason::Kept(inner) => write!(f, "the file to keep {inner}"),
            SkipReason::OtherFileSystem => {
                f.write_str("is on another file system than the kept file (no copy is made)")
            }
            SkipReason::ReflinkUnsupported(why) => write!(
                f,
                "cannot share extents ({why}); the file system must support reflinks \
                 (btrfs, XFS with reflink=1); nothing was copied"
            ),
            SkipReason::DestinationExists => f.write_str("destination already exists"),
            SkipReason::NotEmpty => f.write_str(
                "directory not removed: it still holds entries that were not removed (skipped, \
                 or not part of the scan: symlinks, empty or excluded files)",
            ),
            SkipReason::OutsideRoots => {
                f.write_str("lies under none of the report's roots (left alone)")
            }
            SkipReason::SymlinkOnPath => f.write_str(
                "a directory on its path below the root is now a symbolic link or not a \
                 directory (left alone: following it could lead outside the trees scanned)",
            ),
            SkipReason::KeptMayBeThisFile => f.write_str(
                "left alone: it or the file to keep is on a stacking file system (overlayfs, \
                 FUSE), the other on another device: they may be one file seen twice",
            ),
            SkipReason::OtherOwner => f.write_str(
                "has another owner, group or mode than the file to keep: as a link it would \
                 take the kept file's, and that owner could change it (--any-owner allows it)",
            ),
            SkipReason::DestinationThroughSymlink => f.write_str(
                "not moved: a directory on the way to its destination below --to is a symbolic \
                 link or not a directory (never followed)",
            ),
            SkipReason::OtherUser => f.write_str(
                "belongs to another user than the file to keep: removing it would leave its \
                 owner without a copy of their own (--any-owner allows it)",
            ),
            SkipReason::Io(e) => write!(f, "{e}"),
        }
    }
}
