//! Reading an entry's extended attributes by path, without following a symlink unless asked.
//! Before Linux 6.13 there is no `*at` form of the xattr calls, so the walk passes the entry's
//! full path; where `listxattrat` exists, an entry without attributes (the common case) is
//! answered by its directory and name, without resolving its path; a file being read anyway is
//! asked through its open descriptor.

use std::ffi::CStr;
use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

use rustix::io::Errno;

use super::entry::Xattr;

/// The extended attributes of the entry `name` in the directory `dir`, whose full path `path`
/// gives, as [`of_path`] reads them.
pub(super) fn of_entry(
    dir: BorrowedFd<'_>,
    name: &CStr,
    path: impl FnOnce() -> PathBuf,
    follow: bool,
) -> io::Result<Vec<Xattr>> {
    if !follow && crate::xattr_at::available() {
        let mut names = [0u8; 256];
        match crate::xattr_at::list(dir, name, Some(&mut names)) {
            Ok(0) => return Ok(Vec::new()),
            Err(Errno::NOTSUP) => return Ok(Vec::new()),
            // Attributes to read (their values have no `*at` call here), a list longer than the
            // buffer, or an old kernel: by path.
            Ok(_) | Err(Errno::RANGE) | Err(Errno::NOSYS) => {}
            Err(e) => return Err(e.into()),
        }
    }
    of_path(&path(), follow)
}

/// The extended attributes of `path`, sorted by name; none where the file system keeps none.
pub(super) fn of_path(path: &Path, follow: bool) -> io::Result<Vec<Xattr>> {
    read_all(
        |names| {
            if follow {
                rustix::fs::listxattr(path, names)
            } else {
                rustix::fs::llistxattr(path, names)
            }
        },
        |name, value| {
            if follow {
                rustix::fs::getxattr(path, name, value)
            } else {
                rustix::fs::lgetxattr(path, name, value)
            }
        },
    )
}

/// The extended attributes of the open file `fd`, as [`of_path`] reads them: no path lookup.
pub(super) fn of_fd(fd: BorrowedFd<'_>) -> io::Result<Vec<Xattr>> {
    read_all(
        |names| rustix::fs::flistxattr(fd, names),
        |name, value| rustix::fs::fgetxattr(fd, name, value),
    )
}

/// Every attribute `list` names, with the value `get` reads, sorted by name.
fn read_all(
    list: impl Fn(&mut [u8]) -> Result<usize, Errno>,
    get: impl Fn(&CStr, &mut [u8]) -> Result<usize, Errno>,
) -> io::Result<Vec<Xattr>> {
    let mut names = vec![0u8; 1024];
    let len = loop {
        match list(&mut names) {
            Ok(len) => break len,
            Err(Errno::RANGE) => names.resize(names.len() * 4, 0),
            Err(Errno::NOTSUP) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        }
    };
    let mut out = Vec::new();
    for name in names[..len].split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let c_name = std::ffi::CString::new(name).map_err(|_| Errno::INVAL)?;
        let mut value = vec![0u8; 256];
        let got = loop {
            match get(&c_name, &mut value) {
                Ok(got) => break Some(got),
                Err(Errno::RANGE) => value.resize(value.len() * 8, 0),
                // Removed between the listing and the read.
                Err(Errno::NODATA) => break None,
                Err(e) => return Err(e.into()),
            }
        };
        if let Some(got) = got {
            value.truncate(got);
            out.push(Xattr { name: name.to_vec(), value });
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_user_attributes_sorted() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let set =
            |n: &str, v: &[u8]| rustix::fs::setxattr(&f, n, v, rustix::fs::XattrFlags::empty());
        if set("user.b", b"2").is_err() {
            eprintln!("skipped: no user xattrs on this file system");
            return;
        }
        set("user.a", &[0, 1, 2]).unwrap();
        let got = of_path(&f, false).unwrap();
        let names: Vec<&[u8]> = got.iter().map(|x| x.name.as_slice()).collect();
        assert_eq!(names, [b"user.a".as_slice(), b"user.b"]);
        assert_eq!(got[0].value, [0, 1, 2]);
    }

    #[test]
    fn by_directory_and_name_the_same_as_by_path() {
        let d = tempfile::tempdir().unwrap();
        let (bare, tagged) = (d.path().join("bare"), d.path().join("tagged"));
        std::fs::write(&bare, b"x").unwrap();
        std::fs::write(&tagged, b"y").unwrap();
        std::os::unix::fs::symlink("tagged", d.path().join("link")).unwrap();
        if rustix::fs::setxattr(&tagged, "user.k", b"v", rustix::fs::XattrFlags::empty()).is_err() {
            eprintln!("skipped: no user xattrs on this file system");
            return;
        }
        let dir = std::fs::File::open(d.path()).unwrap();
        let at = |name: &str, follow: bool| {
            let c_name = std::ffi::CString::new(name).unwrap();
            let path = || d.path().join(name);
            of_entry(std::os::fd::AsFd::as_fd(&dir), &c_name, path, follow).unwrap()
        };
        for name in ["bare", "tagged"] {
            let file = std::fs::File::open(d.path().join(name)).unwrap();
            let by_fd = of_fd(std::os::fd::AsFd::as_fd(&file)).unwrap();
            assert_eq!(by_fd, of_path(&d.path().join(name), false).unwrap(), "{name}");
        }
        for (name, follow) in [("bare", false), ("tagged", false), ("link", false), ("link", true)]
        {
            assert_eq!(at(name, follow), of_path(&d.path().join(name), follow).unwrap(), "{name}");
        }
        assert_eq!(at("tagged", false)[0].value, b"v");
        assert_eq!(at("link", true)[0].value, b"v", "followed to its target");
        assert!(at("link", false).is_empty(), "the link itself has none");
    }
}
