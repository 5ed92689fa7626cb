//! A new file written under a temporary name in its final directory and renamed over the final
//! name only when complete, so that name always holds either the old file or the whole new one.
//! Dropped without a commit, the temporary name is removed; after a crash it is left behind in a
//! form [`crate::check_stray`] recognises as ours.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::BorrowedFd;

use rustix::fs::{
    fsync, openat, renameat, renameat_with, unlinkat, AtFlags, Mode, OFlags, RenameFlags,
};
use rustix::io::Errno;

use crate::dirent::check_name;
use crate::error::FsError;
use crate::stray::{temp_name, TempKind};

/// A regular file being written under a temporary name in a directory.
#[derive(Debug)]
pub struct TempFile<'d> {
    file: File,
    name: TempName<'d>,
}

/// The temporary name, removed when dropped unless it was renamed away.
#[derive(Debug)]
struct TempName<'d> {
    dir: BorrowedFd<'d>,
    name: OsString,
    pending: bool,
}

/// How [`TempFile::commit_with`] puts the file in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Commit {
    /// Fail with [`FsError::Exists`] instead of replacing an existing entry (`RENAME_NOREPLACE`).
    pub no_replace: bool,
    /// Flush the file to stable storage before the rename and the directory after it, so the
    /// new name survives a power cut with its content (write, fsync, rename, fsync the
    /// directory).
    pub durable: bool,
}

impl<'d> TempFile<'d> {
    /// Create an empty file under a fresh temporary name in `dir`, open for reading and
    /// writing, readable by its owner only (`0600`) until its mode is set.
    pub fn new_in(dir: BorrowedFd<'d>) -> Result<TempFile<'d>, FsError> {
        TempFile::with_mode(dir, 0o600)
    }

    /// Like [`TempFile::new_in`], but created with the permission bits `mode` (masked by the
    /// umask, or shaped by the directory's default ACL, as for any new file): for a caller that
    /// knows the file's final owner already, so that these bits expose nothing the final file
    /// will not, and that then need not be set again.
    pub fn with_mode(dir: BorrowedFd<'d>, mode: u32) -> Result<TempFile<'d>, FsError> {
        let mode = Mode::from_raw_mode(mode & 0o777);
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        for _ in 0..16 {
            let name = temp_name(TempKind::File);
            match openat(dir, &name, flags | OFlags::CLOEXEC, mode) {
                Ok(fd) => {
                    let name = TempName { dir, name, pending: true };
                    return Ok(TempFile { file: File::from(fd), name });
                }
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(FsError::Io(io::Error::other("cannot find a free temporary name")))
    }

    /// The open file, to write its content and set its metadata before the commit.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The temporary name in the directory.
    pub fn name(&self) -> &OsStr {
        &self.name.name
    }

    /// Rename the file over `name` in the same directory (replacing what stood there), and
    /// return it still open. On an error the temporary name is removed.
    pub fn commit(self, name: &OsStr) -> Result<File, FsError> {
        self.commit_with(name, Commit::default())
    }

    /// Put the file at `name` in the same directory as `how` says, and return it still open.
    /// On an error the temporary name is removed.
    pub fn commit_with(self, name: &OsStr, how: Commit) -> Result<File, FsError> {
        let TempFile { file, name: mut tmp } = self;
        check_name(name)?;
        if how.durable {
            fsync(&file)?;
        }
        let renamed = if how.no_replace {
            renameat_with(tmp.dir, &tmp.name, tmp.dir, name, RenameFlags::NOREPLACE)
        } else {
            renameat(tmp.dir, &tmp.name, tmp.dir, name)
        };
        match renamed {
            Ok(()) => tmp.pending = false,
            Err(Errno::EXIST) if how.no_replace => return Err(FsError::Exists),
            Err(e) => return Err(e.into()),
        }
        if how.durable {
            sync_dir(tmp.dir)?;
        }
        Ok(file)
    }
}

impl Drop for TempName<'_> {
    fn drop(&mut self) {
        if self.pending {
            // Best effort: a name left behind is removed by a later clean-up.
            let _ = unlinkat(self.dir, &self.name, AtFlags::empty());
        }
    }
}

/// Flush a directory's entries to stable storage: after a rename into it, the step that makes
/// the new name survive a power cut.
pub fn sync_dir(dir: BorrowedFd<'_>) -> Result<(), FsError> {
    Ok(fsync(dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stray::{check_stray, temp_kind};
    use dedup_scan::open_dir;
    use std::fs;
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn names(dir: &Path) -> Vec<OsString> {
        let mut v: Vec<OsString> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    }

    #[test]
    fn a_commit_replaces_the_final_name_whole() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("f"), b"old").unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        let t = TempFile::new_in(dir.as_fd()).unwrap();
        assert_eq!(temp_kind(t.name()), Some(TempKind::File));
        let mode = fs::metadata(tmp.path().join(t.name())).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        t.file().write_all(b"new content").unwrap();
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"old");
        let f = t.commit_with(OsStr::new("f"), Commit { durable: true, ..Commit::default() });
        let f = f.unwrap();
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"new content");
        assert_eq!(f.metadata().unwrap().len(), 11);
        assert_eq!(names(tmp.path()), ["f"]);
    }

    #[test]
    fn no_replace_keeps_the_existing_file_and_drops_the_new_one() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("f"), b"old").unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        let t = TempFile::new_in(dir.as_fd()).unwrap();
        t.file().write_all(b"new").unwrap();
        let how = Commit { no_replace: true, durable: true };
        assert!(matches!(t.commit_with(OsStr::new("f"), how), Err(FsError::Exists)));
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"old");
        assert_eq!(names(tmp.path()), ["f"]);
        let t = TempFile::new_in(dir.as_fd()).unwrap();
        t.commit_with(OsStr::new("g"), how).unwrap();
        assert_eq!(names(tmp.path()), ["f", "g"]);
    }

    #[test]
    fn an_uncommitted_file_is_removed_and_a_leftover_one_is_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        let t = TempFile::new_in(dir.as_fd()).unwrap();
        t.file().write_all(b"half").unwrap();
        let left = tmp.path().join(t.name());
        assert!(check_stray(&left).is_ok(), "what a crash would leave is recognised");
        drop(t);
        assert!(names(tmp.path()).is_empty());
    }
}
