//! Putting a new symlink, special file or hard link at a name that holds something else, in one
//! step: the entry is made under a fresh temporary name (`.dedup-tmp.<hex>`) in the same
//! directory, then renamed over the name, so the name holds the old entry or the new one and
//! never nothing. Also the names of an open directory, for a caller that compares them with a
//! list of its own.

use std::ffi::OsStr;
use std::io;
use std::os::fd::AsFd;

use rustix::fs::{renameat, unlinkat, AtFlags};

use crate::dirent::check_name;
use crate::error::FsError;
use crate::stray::{temp_name, TempKind};

/// Make an entry with `make` (called with a fresh temporary name in `dir`; it must create the
/// entry there exclusively, [`FsError::Exists`] when the name is taken) and rename it over
/// `name` in `dir`, replacing whatever is there unless it is a directory. On an error the
/// temporary entry is removed.
pub fn replace_at(
    dir: impl AsFd,
    name: &OsStr,
    mut make: impl FnMut(&OsStr) -> Result<(), FsError>,
) -> Result<(), FsError> {
    check_name(name)?;
    let dir = dir.as_fd();
    for _ in 0..16 {
        let tmp = temp_name(TempKind::Link);
        match make(&tmp) {
            Ok(()) => {}
            Err(FsError::Exists) => continue,
            Err(e) => return Err(e),
        }
        return match renameat(dir, &tmp, dir, name) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = unlinkat(dir, &tmp, AtFlags::empty());
                Err(e.into())
            }
        };
    }
    Err(FsError::Io(io::Error::other("cannot find a free temporary name")))
}

/// The names in the open directory `dir` (`.` and `..` left out), in the order the file system
/// lists them. Reading moves the descriptor's directory position; list each descriptor once.
pub fn entry_names(dir: &std::os::fd::OwnedFd) -> Result<Vec<Vec<u8>>, FsError> {
    crate::beneath::names(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::create::{create_special_at, create_symlink_at, hard_link_at, Special};
    use dedup_scan::open_dir;
    use std::fs;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn an_entry_of_any_kind_replaces_another_and_leaves_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("file"), b"x").unwrap();
        fs::write(d.join("other"), b"y").unwrap();
        std::os::unix::fs::symlink("/outside", d.join("link")).unwrap();
        let dir = open_dir(d, true).unwrap();
        let n = OsStr::new;
        replace_at(&dir, n("file"), |t| create_symlink_at(&dir, t, n("target"))).unwrap();
        assert_eq!(fs::read_link(d.join("file")).unwrap(), std::path::Path::new("target"));
        replace_at(&dir, n("link"), |t| create_special_at(&dir, t, Special::Fifo, 0o600)).unwrap();
        assert!(fs::symlink_metadata(d.join("link")).unwrap().file_type().is_fifo());
        replace_at(&dir, n("link"), |t| hard_link_at(&dir, n("other"), &dir, t)).unwrap();
        assert_eq!(fs::read(d.join("link")).unwrap(), b"y");
        let mut names: Vec<_> =
            entry_names(&dir).unwrap().into_iter().map(|n| String::from_utf8(n).unwrap()).collect();
        names.sort();
        assert_eq!(names, ["file", "link", "other"]);
        fs::create_dir(d.join("sub")).unwrap();
        let e = replace_at(&dir, n("sub"), |t| create_symlink_at(&dir, t, n("x"))).unwrap_err();
        assert!(e.raw_os_error().is_some(), "{e:?}");
        assert!(fs::symlink_metadata(d.join("sub")).unwrap().is_dir());
        assert_eq!(fs::read_dir(d).unwrap().count(), 4, "the temporary symlink is removed");
    }
}
