//! Extended attributes of an entry: list, get, set, remove. An open file goes through the `f*`
//! calls; an entry named in a directory through the `l*` calls on its `/proc/self/fd` path, so
//! a symlink is read and changed itself and no name but the entry's is looked up (the list, the
//! call made for every entry, through `listxattrat` where the kernel has it). Errors are
//! [`FsError::Metadata`] with [`MetaField::Xattr`] (a file system without them answers
//! `EOPNOTSUPP`; `user.` attributes are refused on symlinks and special files).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{
    fgetxattr, fgetxattr_query, flistxattr, flistxattr_query, fremovexattr, fsetxattr, lgetxattr,
    lgetxattr_query, llistxattr, llistxattr_query, lremovexattr, lsetxattr, XattrFlags,
};
use rustix::io::{Errno, Result as SysResult};

use crate::attrs::{metadata_error, proc_path, Target};
use crate::dirent::check_name;
use crate::error::{FsError, MetaField};
use dedup_scan::xattr_at;

/// The names of `target`'s extended attributes, in the order the file system gives them.
pub fn list_xattrs(target: Target<'_>) -> Result<Vec<OsString>, FsError> {
    let list = match target {
        Target::At(dir, name) if xattr_at::available() => {
            check_name(name)?;
            let name = CString::new(name.as_bytes()).expect("check_name refuses NUL");
            match read_sized(|buf| xattr_at::list(dir, &name, buf)) {
                Err(_) if !xattr_at::available() => {
                    let via = Via::of(target)?;
                    read_sized(|buf| via.list(buf))
                }
                other => other,
            }
        }
        _ => {
            let via = Via::of(target)?;
            read_sized(|buf| via.list(buf))
        }
    };
    let list = list?.unwrap_or_default();
    let names = list.split(|&b| b == 0).filter(|n| !n.is_empty());
    Ok(names.map(|n| OsStr::from_bytes(n).to_owned()).collect())
}

/// The value of the attribute `name`, or `None` when `target` has no such attribute.
pub fn get_xattr(target: Target<'_>, name: &OsStr) -> Result<Option<Vec<u8>>, FsError> {
    let via = Via::of(target)?;
    read_sized(|buf| via.get(name, buf))
}

/// Set the attribute `name` to `value`, creating or replacing it.
pub fn set_xattr(target: Target<'_>, name: &OsStr, value: &[u8]) -> Result<(), FsError> {
    Via::of(target)?.set(name, value).map_err(fail)
}

/// Remove the attribute `name`; an attribute that is not there is not an error.
pub fn remove_xattr(target: Target<'_>, name: &OsStr) -> Result<(), FsError> {
    match Via::of(target)?.remove(name) {
        Err(Errno::NODATA) => Ok(()),
        other => other.map_err(fail),
    }
}

/// How the calls reach the entry: its descriptor, or the `/proc` path of its name in its
/// directory (with the calls that do not follow a symlink at the end).
enum Via<'a> {
    Fd(BorrowedFd<'a>),
    Path(OsString),
}

impl<'a> Via<'a> {
    fn of(target: Target<'a>) -> Result<Via<'a>, FsError> {
        match target {
            Target::Fd(fd) => Ok(Via::Fd(fd)),
            Target::At(dir, name) => {
                check_name(name)?;
                Ok(Via::Path(proc_path(dir, Some(name))))
            }
        }
    }

    /// The list of names into `buf`, or its size when there is no buffer.
    fn list(&self, buf: Option<&mut [u8]>) -> SysResult<usize> {
        match (self, buf) {
            (Via::Fd(fd), None) => flistxattr_query(fd),
            (Via::Fd(fd), Some(buf)) => flistxattr(fd, buf),
            (Via::Path(p), None) => llistxattr_query(p),
            (Via::Path(p), Some(buf)) => llistxattr(p, buf),
        }
    }

    /// The value of `name` into `buf`, or its size when there is no buffer.
    fn get(&self, name: &OsStr, buf: Option<&mut [u8]>) -> SysResult<usize> {
        match (self, buf) {
            (Via::Fd(fd), None) => fgetxattr_query(fd, name),
            (Via::Fd(fd), Some(buf)) => fgetxattr(fd, name, buf),
            (Via::Path(p), None) => lgetxattr_query(p, name),
            (Via::Path(p), Some(buf)) => lgetxattr(p, name, buf),
        }
    }

    fn set(&self, name: &OsStr, value: &[u8]) -> SysResult<()> {
        match self {
            Via::Fd(fd) => fsetxattr(fd, name, value, XattrFlags::empty()),
            Via::Path(p) => lsetxattr(p, name, value, XattrFlags::empty()),
        }
    }

    fn remove(&self, name: &OsStr) -> SysResult<()> {
        match self {
            Via::Fd(fd) => fremovexattr(fd, name),
            Via::Path(p) => lremovexattr(p, name),
        }
    }
}

/// Call `read` with a buffer large enough for what it returns, asking for the size first and
/// again when the value grew in between (`ERANGE`). `None` when there is no such attribute.
fn read_sized(
    read: impl Fn(Option<&mut [u8]>) -> SysResult<usize>,
) -> Result<Option<Vec<u8>>, FsError> {
    let mut buf = Vec::new();
    loop {
        let size = match read(None) {
            Ok(size) => size,
            Err(Errno::NODATA) => return Ok(None),
            Err(e) => return Err(fail(e)),
        };
        if size == 0 {
            return Ok(Some(Vec::new()));
        }
        buf.resize(size, 0);
        match read(Some(&mut buf)) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(Some(buf));
            }
            Err(Errno::RANGE) => continue,
            Err(Errno::NODATA) => return Ok(None),
            Err(e) => return Err(fail(e)),
        }
    }
}

fn fail(e: Errno) -> FsError {
    metadata_error(MetaField::Xattr, e.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_scan::open_dir;
    use std::fs;
    use std::os::fd::AsFd;

    #[test]
    fn attributes_round_trip_on_a_file_and_on_a_symlink_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("file", d.join("link")).unwrap();
        let dir = open_dir(d, true).unwrap();
        let file = fs::File::open(d.join("file")).unwrap();
        let n = OsStr::new;
        let (by_fd, by_name) = (Target::Fd(file.as_fd()), Target::At(dir.as_fd(), n("file")));
        let value: Vec<u8> = (0..=255).collect();
        match set_xattr(by_fd, n("user.dedup.test"), &value) {
            Err(e) if e.raw_os_error() == Some(Errno::OPNOTSUPP.raw_os_error()) => {
                eprintln!("SKIPPED: the temporary directory's file system has no user xattrs");
                return;
            }
            other => other.unwrap(),
        }
        set_xattr(by_name, n("user.dedup.empty"), b"").unwrap();
        for target in [by_fd, by_name] {
            assert_eq!(get_xattr(target, n("user.dedup.test")).unwrap(), Some(value.clone()));
            assert_eq!(get_xattr(target, n("user.dedup.empty")).unwrap(), Some(vec![]));
            assert_eq!(get_xattr(target, n("user.dedup.none")).unwrap(), None);
            let mut names = list_xattrs(target).unwrap();
            names.retain(|x| x.as_bytes().starts_with(b"user.dedup."));
            names.sort();
            assert_eq!(names, [n("user.dedup.empty"), n("user.dedup.test")]);
        }
        remove_xattr(by_name, n("user.dedup.test")).unwrap();
        remove_xattr(by_name, n("user.dedup.test")).unwrap();
        assert_eq!(get_xattr(by_fd, n("user.dedup.test")).unwrap(), None);

        // On the symlink: its own attributes, never its target's.
        let link = Target::At(dir.as_fd(), n("link"));
        assert_eq!(get_xattr(link, n("user.dedup.empty")).unwrap(), None);
        assert!(!list_xattrs(link).unwrap().iter().any(|x| x == "user.dedup.empty"));
        if rustix::process::geteuid().is_root() {
            set_xattr(link, n("trusted.dedup"), b"on the link").unwrap();
            assert!(list_xattrs(link).unwrap().iter().any(|x| x == "trusted.dedup"));
            assert_eq!(get_xattr(link, n("trusted.dedup")).unwrap(), Some(b"on the link".to_vec()));
            assert_eq!(get_xattr(by_fd, n("trusted.dedup")).unwrap(), None);
        }
        let e = set_xattr(link, n("user.dedup.x"), b"v").unwrap_err();
        assert!(matches!(e, FsError::Metadata { field: MetaField::Xattr, .. }), "{e:?}");
    }
}
