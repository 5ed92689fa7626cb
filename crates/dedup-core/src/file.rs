//! File identity and the metadata that decides whether a file is still the one we saw.

use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

/// The identity of a file on a running system: device and inode. Two paths with one `FileId`
/// name the same file (hard links, or one directory entry reached twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FileId {
    /// Device number (`st_dev`).
    pub dev: u64,
    /// Inode number (`st_ino`).
    pub ino: u64,
}

/// What a scan records about a regular file: enough to recognise it later and to notice that it
/// changed (size, and mtime/ctime to the nanosecond).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// Device and inode.
    pub id: FileId,
    /// Length in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Status-change time in nanoseconds since the Unix epoch.
    pub ctime_ns: i64,
}

impl FileMeta {
    /// The identity, size and times of `std` metadata (of the file itself when it came from
    /// `symlink_metadata`).
    pub fn of(m: &std::fs::Metadata) -> FileMeta {
        FileMeta {
            id: FileId { dev: m.dev(), ino: m.ino() },
            size: m.size(),
            mtime_ns: nanos(m.mtime(), m.mtime_nsec() as u64),
            ctime_ns: nanos(m.ctime(), m.ctime_nsec() as u64),
        }
    }

    /// True when `later` describes the same, unmodified file: a different inode, size, mtime or
    /// ctime means the content can no longer be trusted to be what was read.
    pub fn unchanged(&self, later: &FileMeta) -> bool {
        self == later
    }

    /// Like [`FileMeta::unchanged`] but ignoring ctime, for checks where only the content matters
    /// (reading a file does not change its ctime, but another tool setting xattrs would).
    pub fn same_content_stamp(&self, later: &FileMeta) -> bool {
        self.id == later.id && self.size == later.size && self.mtime_ns == later.mtime_ns
    }
}

/// Nanoseconds since the epoch from the seconds/nanoseconds pair that `stat` returns.
pub fn nanos(secs: i64, nsec: u64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(size: u64, mtime_ns: i64, ctime_ns: i64) -> FileMeta {
        FileMeta { id: FileId { dev: 1, ino: 2 }, size, mtime_ns, ctime_ns }
    }

    #[test]
    fn any_stamp_change_means_changed() {
        let a = meta(10, 5, 6);
        assert!(a.unchanged(&a));
        assert!(!a.unchanged(&meta(11, 5, 6)));
        assert!(!a.unchanged(&meta(10, 7, 6)));
        assert!(!a.unchanged(&meta(10, 5, 7)));
        assert!(a.same_content_stamp(&meta(10, 5, 7)));
    }

    #[test]
    fn nanos_combines_seconds_and_fraction() {
        assert_eq!(nanos(2, 5), 2_000_000_005);
        assert_eq!(nanos(-1, 0), -1_000_000_000);
    }
}
