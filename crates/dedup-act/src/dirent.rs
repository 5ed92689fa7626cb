//! A path as a directory descriptor plus a name. Every check and change happens relative to the
//! open parent directory with `AT_SYMLINK_NOFOLLOW`/`O_NOFOLLOW`, so a symlink swapped in at the
//! name is seen, never followed, and long paths work.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use dedup_core::FileMeta;
use dedup_scan::{meta_from_stat, open_dir};
use rustix::fs::{openat, statat, AtFlags, FileType, Mode, OFlags, Stat};

use crate::skip::SkipReason;

/// An open parent directory and the name of an entry in it.
#[derive(Debug)]
pub(crate) struct Entry {
    pub dir: OwnedFd,
    pub name: OsString,
}

impl Entry {
    /// Open the parent of `path` (symlinks in the directory part are followed, as for any path
    /// a user gives) and keep the last name.
    pub fn open(path: &Path) -> Result<Entry, SkipReason> {
        let name = path
            .file_name()
            .ok_or_else(|| SkipReason::Io(io::Error::other("path has no file name")))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = open_dir(parent, true).map_err(SkipReason::from_io)?;
        Ok(Entry { dir, name: name.to_owned() })
    }

    /// `lstat` of the entry.
    pub fn lstat(&self) -> Result<Stat, SkipReason> {
        Ok(statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)?)
    }

    /// `lstat` of another name in the same directory.
    pub fn lstat_sibling(&self, name: &OsStr) -> Result<Stat, SkipReason> {
        Ok(statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW)?)
    }

    /// Open the entry for reading without following a symlink or blocking on a FIFO.
    pub fn open_file(&self) -> Result<File, SkipReason> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
        Ok(File::from(openat(
            &self.dir,
            self.name.as_os_str(),
            flags | OFlags::CLOEXEC,
            Mode::empty(),
        )?))
    }
}

/// Accept only regular files; name what stands there otherwise.
pub(crate) fn regular(st: &Stat) -> Result<FileMeta, SkipReason> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(meta_from_stat(st)),
        FileType::Symlink => Err(SkipReason::NotRegular("a symbolic link")),
        FileType::Directory => Err(SkipReason::NotRegular("a directory")),
        _ => Err(SkipReason::NotRegular("a special file")),
    }
}
