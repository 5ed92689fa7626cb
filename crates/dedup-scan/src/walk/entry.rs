//! What the walk tells a consumer about one directory entry: its kind and, as far as the walk
//! was asked to find out, its metadata, symlink target and extended attributes. A backup or a
//! mirror asks for everything; the finder only for the metadata of regular files.

use dedup_core::{nanos, FileId, FileMeta};
use rustix::fs::{FileType, Stat};

/// The kind of a directory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed, or dangling when following was asked for).
    Symlink,
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
}

impl EntryKind {
    /// The kind of a `stat` mode or a `getdents` type; `None` for an unknown type.
    pub fn from_file_type(kind: FileType) -> Option<EntryKind> {
        Some(match kind {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Dir,
            FileType::Symlink => EntryKind::Symlink,
            FileType::Fifo => EntryKind::Fifo,
            FileType::Socket => EntryKind::Socket,
            FileType::CharacterDevice => EntryKind::CharDevice,
            FileType::BlockDevice => EntryKind::BlockDevice,
            FileType::Unknown => return None,
        })
    }

    /// A short lower-case name for messages and listings.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Fifo => "fifo",
            EntryKind::Socket => "socket",
            EntryKind::CharDevice => "chardev",
            EntryKind::BlockDevice => "blockdev",
        }
    }
}

/// Everything `lstat` says about an entry that a backup or a mirror keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata {
    /// The entry's kind (of the link's target when the walk followed a link).
    pub kind: EntryKind,
    /// Permission bits with set-user-id, set-group-id and sticky (`st_mode & 0o7777`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Length in bytes (of the target path, for a symlink).
    pub size: u64,
    /// Space allocated, in 512-byte units: less than the size for a sparse file.
    pub blocks: u64,
    /// Number of hard links.
    pub nlink: u64,
    /// Device holding the entry.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Device number, for character and block devices.
    pub rdev: u64,
    /// Access time, nanoseconds since the Unix epoch.
    pub atime_ns: i64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Status-change time, nanoseconds since the Unix epoch.
    pub ctime_ns: i64,
}

impl Metadata {
    /// The metadata of a `stat` result; `None` for a mode of unknown type.
    // The nanosecond and count fields differ in width between architectures: the casts are needed.
    #[allow(clippy::unnecessary_cast)]
    pub fn from_stat(st: &Stat) -> Option<Metadata> {
        Some(Metadata {
            kind: EntryKind::from_file_type(FileType::from_raw_mode(st.st_mode))?,
            mode: st.st_mode & 0o7777,
            uid: st.st_uid,
            gid: st.st_gid,
            size: st.st_size.max(0) as u64,
            blocks: st.st_blocks.max(0) as u64,
            nlink: st.st_nlink as u64,
            dev: st.st_dev,
            ino: st.st_ino,
            rdev: st.st_rdev,
            atime_ns: nanos(st.st_atime, st.st_atime_nsec as u64),
            mtime_ns: nanos(st.st_mtime, st.st_mtime_nsec as u64),
            ctime_ns: nanos(st.st_ctime, st.st_ctime_nsec as u64),
        })
    }

    /// Device and inode.
    pub fn id(&self) -> FileId {
        FileId { dev: self.dev, ino: self.ino }
    }

    /// The identity, size and times that decide whether a file is still the one that was seen.
    pub fn file_meta(&self) -> FileMeta {
        FileMeta {
            id: self.id(),
            size: self.size,
            mtime_ns: self.mtime_ns,
            ctime_ns: self.ctime_ns,
        }
    }
}

/// One extended attribute: its full name (`user.comment`) and value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Xattr {
    /// The attribute's name, namespace included.
    pub name: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's name in its directory (never `.` or `..`).
    pub name: Vec<u8>,
    /// Its kind: of the target, when the walk followed a symlink ([`Entry::followed`]).
    pub kind: EntryKind,
    /// True when the listing holds a symlink here that the walk followed (`-L`).
    pub followed: bool,
    /// Its metadata: always for regular files, and for every kind when the walk was asked for
    /// [`crate::Detail::Everything`].
    pub meta: Option<Metadata>,
    /// A symlink's target, as raw bytes, with [`crate::Detail::Everything`].
    pub target: Option<Vec<u8>>,
    /// Extended attributes, when asked for, sorted by name.
    pub xattrs: Vec<Xattr>,
}
