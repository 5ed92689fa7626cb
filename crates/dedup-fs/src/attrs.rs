//! Setting an entry's metadata: mode, owner, access and modification times, one call each, so a
//! caller can go on when one is refused (chown without privilege) and warn about that field
//! once ([`FsError::Metadata`] names it). Set them in this order: owner (a change of owner
//! clears set-user-ID and set-group-ID bits), mode, extended attributes, times last (writing
//! changes the modification time).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use rustix::fs::{
    chmodat, chownat, fchmod, fchown, fstat, futimens, openat, utimensat, AtFlags, FileType, Gid,
    Mode, OFlags, Timespec, Timestamps, Uid, CWD,
};

use crate::dirent::check_name;
use crate::error::{FsError, MetaField};

/// The entry whose metadata is read or set.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// An open file or directory (opened for reading or writing, not with `O_PATH`).
    Fd(BorrowedFd<'a>),
    /// The entry `name` (one component) in the open directory `dir`, of any kind. A symlink
    /// there is changed itself, never followed.
    At(BorrowedFd<'a>, &'a OsStr),
}

/// Set the permission bits and the set-user-ID, set-group-ID and sticky bits (`mode & 0o7777`).
/// On a symlink this does nothing: Linux gives every symlink mode 0777 and ignores it.
pub fn set_mode(target: Target<'_>, mode: u32) -> Result<(), FsError> {
    let mode = Mode::from_raw_mode(mode & 0o7777);
    let fail =
        |e: rustix::io::Errno| FsError::Metadata { field: MetaField::Mode, source: e.into() };
    match target {
        Target::Fd(fd) => fchmod(fd, mode).map_err(fail),
        Target::At(dir, name) => {
            check_name(name)?;
            // `fchmodat` has no flag not to follow a symlink, so the entry is pinned with an
            // `O_PATH` descriptor first and changed through its /proc name, which names that
            // very inode (what glibc does for `fchmodat(AT_SYMLINK_NOFOLLOW)`).
            let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let pinned = openat(dir, name, flags, Mode::empty()).map_err(fail)?;
            if FileType::from_raw_mode(fstat(&pinned).map_err(fail)?.st_mode) == FileType::Symlink {
                return Ok(());
            }
            chmodat(CWD, proc_path(pinned.as_fd(), None), mode, AtFlags::empty()).map_err(fail)
        }
    }
}

/// Set the owner and group (`None` leaves one as it is), of a symlink itself too. Without
/// privilege this is refused (`EPERM`) unless nothing changes.
pub fn set_owner(target: Target<'_>, uid: Option<u32>, gid: Option<u32>) -> Result<(), FsError> {
    let (uid, gid) = (uid.map(Uid::from_raw), gid.map(Gid::from_raw));
    let result = match target {
        Target::Fd(fd) => fchown(fd, uid, gid),
        Target::At(dir, name) => {
            check_name(name)?;
            chownat(dir, name, uid, gid, AtFlags::SYMLINK_NOFOLLOW)
        }
    };
    result.map_err(|e| FsError::Metadata { field: MetaField::Owner, source: e.into() })
}

/// Set the access and modification times, in nanoseconds since the Unix epoch (negative before
/// it), of a symlink itself too.
pub fn set_times(target: Target<'_>, atime_ns: i64, mtime_ns: i64) -> Result<(), FsError> {
    let times =
        Timestamps { last_access: timespec(atime_ns), last_modification: timespec(mtime_ns) };
    let result = match target {
        Target::Fd(fd) => futimens(fd, &times),
        Target::At(dir, name) => {
            check_name(name)?;
            utimensat(dir, name, &times, AtFlags::SYMLINK_NOFOLLOW)
        }
    };
    result.map_err(|e| FsError::Metadata { field: MetaField::Times, source: e.into() })
}

fn timespec(ns: i64) -> Timespec {
    Timespec { tv_sec: ns.div_euclid(1_000_000_000), tv_nsec: ns.rem_euclid(1_000_000_000) as _ }
}

/// `/proc/self/fd/<fd>`, or `/proc/self/fd/<fd>/<name>`: a path that reaches an open
/// descriptor's file (or an entry of an open directory) without looking up any other name, for
/// the calls that have no form relative to a descriptor.
pub(crate) fn proc_path(fd: BorrowedFd<'_>, name: Option<&OsStr>) -> OsString {
    // By hand, not `format!`: on kernels without the `*xattrat` calls every attribute list of
    // a walk or a copy goes through one of these, and `format!`'s machinery costs many times
    // the few copies below.
    let mut path = Vec::with_capacity(32 + name.map_or(0, |n| n.len()));
    path.extend_from_slice(b"/proc/self/fd/");
    let mut digits = [0u8; 10];
    let mut n = fd.as_raw_fd().unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    path.extend_from_slice(&digits[at..]);
    if let Some(name) = name {
        path.push(b'/');
        path.extend_from_slice(name.as_bytes());
    }
    OsString::from_vec(path)
}

/// The error of a failed metadata call, for the callers that build it from `io::Error`.
pub(crate) fn metadata_error(field: MetaField, source: io::Error) -> FsError {
    FsError::Metadata { field, source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_scan::open_dir;
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn is_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    #[test]
    fn mode_is_set_on_the_entry_and_never_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("file"), b"x").unwrap();
        fs::set_permissions(d.join("file"), fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink("file", d.join("link")).unwrap();
        rustix::fs::mkfifoat(CWD, d.join("fifo"), Mode::from_raw_mode(0o600)).unwrap();
        let dir = open_dir(d, true).unwrap();
        let mode = |n: &str| fs::symlink_metadata(d.join(n)).unwrap().mode() & 0o7777;

        set_mode(Target::At(dir.as_fd(), OsStr::new("link")), 0o600).unwrap();
        assert_eq!(mode("file"), 0o644, "the symlink's target was changed");
        set_mode(Target::At(dir.as_fd(), OsStr::new("fifo")), 0o1640).unwrap();
        assert_eq!(mode("fifo"), 0o1640);
        let f = fs::File::open(d.join("file")).unwrap();
        set_mode(Target::Fd(f.as_fd()), 0o2751).unwrap();
        assert_eq!(mode("file"), 0o2751);
        let e = set_mode(Target::At(dir.as_fd(), OsStr::new("missing")), 0o600).unwrap_err();
        assert!(matches!(e, FsError::Metadata { field: MetaField::Mode, .. }), "{e:?}");
    }

    #[test]
    fn times_are_set_to_the_nanosecond_on_a_symlink_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("file", d.join("link")).unwrap();
        let dir = open_dir(d, true).unwrap();
        let file_mtime = fs::metadata(d.join("file")).unwrap().mtime_nsec();
        let (atime, mtime) = (1_000_000_123_456_789, 999_999_999_987_654_321);
        set_times(Target::At(dir.as_fd(), OsStr::new("link")), atime, mtime).unwrap();
        let m = fs::symlink_metadata(d.join("link")).unwrap();
        assert_eq!((m.atime(), m.atime_nsec()), (1_000_000, 123_456_789));
        assert_eq!((m.mtime(), m.mtime_nsec()), (999_999_999, 987_654_321));
        assert_eq!(fs::metadata(d.join("file")).unwrap().mtime_nsec(), file_mtime);
        let f = fs::File::open(d.join("file")).unwrap();
        set_times(Target::Fd(f.as_fd()), -1_500_000_000, -1).unwrap();
        let m = fs::metadata(d.join("file")).unwrap();
        assert_eq!((m.atime(), m.atime_nsec()), (-2, 500_000_000));
        assert_eq!((m.mtime(), m.mtime_nsec()), (-1, 999_999_999));
    }

    #[test]
    fn owner_is_set_on_a_symlink_itself_or_refused_by_field() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("file", d.join("link")).unwrap();
        let dir = open_dir(d, true).unwrap();
        let owner = fs::metadata(d.join("file")).unwrap().uid();
        let result = set_owner(Target::At(dir.as_fd(), OsStr::new("link")), Some(4321), Some(8765));
        if is_root() {
            result.unwrap();
            let m = fs::symlink_metadata(d.join("link")).unwrap();
            assert_eq!((m.uid(), m.gid()), (4321, 8765));
            assert_eq!(fs::metadata(d.join("file")).unwrap().uid(), owner);
        } else {
            let e = result.unwrap_err();
            assert!(matches!(e, FsError::Metadata { field: MetaField::Owner, .. }), "{e:?}");
            assert_eq!(e.raw_os_error(), Some(rustix::io::Errno::PERM.raw_os_error()));
        }
    }
}
