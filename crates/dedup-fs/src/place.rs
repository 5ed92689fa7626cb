//! Putting a new symlink, special file or hard link at a name that holds something else, in one
//! step: the entry is made under a fresh temporary name (`.dedup-tmp.<hex>`) in the same
//! directory, then renamed over the name, so the name holds the old entry or the new one and
//! never nothing. Also the names of an open directory, for a caller that compares them with a
//! list of its own, and removing a tree that stops at other file systems mounted in it.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{renameat, statat, unlinkat, AtFlags, FileType};
use rustix::io::Errno;

use crate::dirent::{check_name, open_dir_at};
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

/// Remove the entry `name` in `dir` and, for a directory, everything below it, without
/// following any symlink and without entering another file system: a directory below it on
/// another device than `dir` (a mount point) is left with everything in it, and so are the
/// directories above it, and then the result is [`FsError::CrossDevice`] (everything else is
/// removed). Returns the entries removed; a missing entry removes nothing.
pub fn remove_tree_within_fs(dir: impl AsFd, name: &OsStr) -> Result<u64, FsError> {
    check_name(name)?;
    let dir = dir.as_fd();
    let dev = rustix::fs::fstat(dir)?.st_dev;
    let mut crossed = false;
    let removed = remove_below(dir, name, dev, &mut crossed)?;
    if crossed {
        return Err(FsError::CrossDevice);
    }
    Ok(removed)
}

fn remove_below(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    dev: u64,
    crossed: &mut bool,
) -> Result<u64, FsError> {
    let st = match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        unlinkat(dir, name, AtFlags::empty())?;
        return Ok(1);
    }
    if st.st_dev != dev {
        *crossed = true;
        return Ok(0);
    }
    let sub = open_dir_at(dir, name)?;
    let mut removed = 0;
    let mut inside = false;
    for child in crate::beneath::names(&sub)? {
        removed += remove_below(sub.as_fd(), OsStr::from_bytes(&child), dev, &mut inside)?;
    }
    drop(sub);
    if inside {
        // A mount point is still below it: it cannot go.
        *crossed = true;
        return Ok(removed);
    }
    unlinkat(dir, name, AtFlags::REMOVEDIR)?;
    Ok(removed + 1)
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
    use std::process::Command;

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

    #[test]
    fn a_tree_is_removed_up_to_a_file_system_mounted_in_it() {
        if !rustix::process::geteuid().is_root() {
            eprintln!(
                "SKIPPED a_tree_is_removed_up_to_a_file_system_mounted_in_it: mount needs root"
            );
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::create_dir_all(d.join("gone/a/mounted")).unwrap();
        fs::create_dir_all(d.join("gone/b")).unwrap();
        fs::write(d.join("gone/b/f"), b"f").unwrap();
        fs::write(d.join("gone/top"), b"t").unwrap();
        let point = d.join("gone/a/mounted");
        let mounted = Command::new("mount").args(["-t", "tmpfs", "none"]).arg(&point).status();
        if !mounted.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED a_tree_is_removed_up_to_a_file_system_mounted_in_it: mount failed");
            return;
        }
        fs::write(point.join("theirs"), b"on another file system").unwrap();
        let dir = open_dir(d, true).unwrap();
        let result = remove_tree_within_fs(&dir, OsStr::new("gone"));
        let theirs = fs::read(point.join("theirs"));
        let _ = Command::new("umount").arg(&point).status();
        assert!(matches!(result, Err(FsError::CrossDevice)), "{result:?}");
        assert_eq!(theirs.unwrap(), b"on another file system");
        assert!(!d.join("gone/b").exists() && !d.join("gone/top").exists());
        assert!(d.join("gone/a").is_dir(), "the directories above the mount point stay");
        assert_eq!(remove_tree_within_fs(&dir, OsStr::new("gone")).unwrap(), 3);
        assert!(!d.join("gone").exists());
    }
}
