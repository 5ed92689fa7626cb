//! Reading an entry's extended attributes by path, without following a symlink unless asked.
//! There is no `*at` form of the xattr calls, so the walk passes the entry's full path.

use std::io;
use std::path::Path;

use rustix::io::Errno;

use super::entry::Xattr;

/// The extended attributes of `path`, sorted by name; none where the file system keeps none.
pub(super) fn of_path(path: &Path, follow: bool) -> io::Result<Vec<Xattr>> {
    let mut names = vec![0u8; 1024];
    let len = loop {
        let listed = if follow {
            rustix::fs::listxattr(path, &mut names)
        } else {
            rustix::fs::llistxattr(path, &mut names)
        };
        match listed {
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
            let read = if follow {
                rustix::fs::getxattr(path, &c_name, &mut value)
            } else {
                rustix::fs::lgetxattr(path, &c_name, &mut value)
            };
            match read {
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
}
