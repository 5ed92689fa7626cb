//! A path as a directory descriptor plus a name. Every check and change happens relative to the
//! open parent directory with `AT_SYMLINK_NOFOLLOW`/`O_NOFOLLOW`, so a symlink swapped in at the
//! name is seen, never followed, and long paths work.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_core::FileMeta;
use dedup_scan::{meta_from_stat, open_dir};
use rustix::fs::{openat, statat, AtFlags, FileType, Mode, OFlags, Stat};

use crate::error::{Found, FsError};

/// An open parent directory and the name of an entry in it.
#[derive(Debug)]
pub struct Entry {
    /// The directory, open.
    pub dir: OwnedFd,
    /// One path component: never contains `/`.
    pub name: OsString,
}

impl Entry {
    /// Open the parent of `path` (symlinks in the directory part are followed, as for any path
    /// a user gives) and keep the last name.
    pub fn open(path: &Path) -> Result<Entry, FsError> {
        let name = path
            .file_name()
            .ok_or_else(|| FsError::Io(io::Error::other("path has no file name")))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = open_dir(parent, true)?;
        Ok(Entry { dir, name: name.to_owned() })
    }

    /// `lstat` of the entry.
    pub fn lstat(&self) -> Result<Stat, FsError> {
        check_name(&self.name)?;
        Ok(statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)?)
    }

    /// `lstat` of another name in the same directory.
    pub fn lstat_sibling(&self, name: &OsStr) -> Result<Stat, FsError> {
        check_name(name)?;
        Ok(statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW)?)
    }

    /// Open the entry for reading without following a symlink or blocking on a FIFO.
    pub fn open_file(&self) -> Result<File, FsError> {
        open_file_at(&self.dir, &self.name)
    }
}

/// Open `name` in `dir` for reading, without following a symlink at `name` (`ELOOP`) or
/// blocking on a FIFO, and leaving its access time as it was where the kernel allows
/// ([`dedup_scan::open_content_at`]).
pub fn open_file_at(dir: impl AsFd, name: &OsStr) -> Result<File, FsError> {
    check_name(name)?;
    dedup_scan::open_content_at(dir.as_fd(), name)
        .map_err(|e| rustix::io::Errno::from_io_error(&e).unwrap_or(rustix::io::Errno::IO).into())
}

/// Open the directory `name` in `dir`, without following a symlink at `name`: the way to
/// descend a tree one directory at a time.
pub fn open_dir_at(dir: impl AsFd, name: &OsStr) -> Result<OwnedFd, FsError> {
    check_name(name)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(openat(dir, name, flags | OFlags::NONBLOCK, Mode::empty())?)
}

/// Accept only regular files; name what stands there otherwise.
pub fn regular(st: &Stat) -> Result<FileMeta, FsError> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(meta_from_stat(st)),
        FileType::Symlink => Err(FsError::NotRegular(Found::Symlink)),
        FileType::Directory => Err(FsError::NotRegular(Found::Directory)),
        _ => Err(FsError::NotRegular(Found::Special)),
    }
}

/// A name relative to a directory descriptor must be one component: a `/` in it would let the
/// kernel follow symlinks on the way, and `.`, `..` or an empty name name no entry of the
/// directory.
pub(crate) fn check_name(name: &OsStr) -> Result<(), FsError> {
    let b = name.as_bytes();
    // One pass over the bytes: two `contains` calls each ran a general `memchr`, whose set-up
    // outweighs a name of a dozen bytes (this runs three times per file a sync copies).
    if b.is_empty() || b == b"." || b == b".." || b.iter().any(|&c| c == b'/' || c == 0) {
        return Err(FsError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a single name in a directory"),
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_at_the_name_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("file"), b"x").unwrap();
        std::fs::create_dir(d.join("dir")).unwrap();
        std::os::unix::fs::symlink("file", d.join("to-file")).unwrap();
        std::os::unix::fs::symlink("dir", d.join("to-dir")).unwrap();
        let dir = open_dir(d, true).unwrap();
        assert!(open_file_at(&dir, OsStr::new("file")).is_ok());
        assert!(open_dir_at(&dir, OsStr::new("dir")).is_ok());
        for name in ["to-file", "to-dir"] {
            let e = open_file_at(&dir, OsStr::new(name)).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(rustix::io::Errno::LOOP.raw_os_error()), "{name}");
        }
        assert!(open_dir_at(&dir, OsStr::new("to-dir")).is_err());
        let entry = Entry::open(&d.join("to-file")).unwrap();
        assert!(matches!(
            regular(&entry.lstat().unwrap()),
            Err(FsError::NotRegular(Found::Symlink))
        ));
    }

    #[test]
    fn names_must_be_single_components() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        std::fs::write(tmp.path().join("sub/f"), b"x").unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        for name in ["sub/f", "", ".", "..", "/f", "sub/", "a\0b", "\0"] {
            assert!(open_file_at(&dir, OsStr::new(name)).is_err(), "{name:?}");
        }
    }
}
