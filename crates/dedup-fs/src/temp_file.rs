//! A new file written under a temporary name in its final directory and renamed over the final
//! name only when complete, so that name always holds either the old file or the whole new one.
//! Dropped without a commit, the temporary name is removed; after a crash it is left behind in a
//! form [`crate::check_stray`] recognises as ours. A file whose final name is expected to be free
//! may be written with no name at all (`O_TMPFILE`) and linked at its name when complete: one
//! name made instead of two, and nothing left by a crash.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{
    fsync, linkat, openat, renameat, renameat_with, unlinkat, AtFlags, Mode, OFlags, RenameFlags,
    CWD,
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
    /// Created without a name (`O_TMPFILE`): the commit links it.
    unnamed: bool,
    /// The commit must [`flush`] the file first: not yet flushed, and its file system may
    /// report errors at `close`.
    flush_pending: bool,
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
                    return Ok(TempFile {
                        file: File::from(fd),
                        name,
                        unnamed: false,
                        flush_pending: true,
                    });
                }
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(FsError::Io(io::Error::other("cannot find a free temporary name")))
    }

    /// Like [`TempFile::with_mode`], for a file whose final name is expected to be free: made
    /// without a name (`O_TMPFILE`), so that nothing of it is seen, or left by a crash, before
    /// the commit links it at its name; under a temporary name where the file system cannot.
    pub fn unnamed_with_mode(dir: BorrowedFd<'d>, mode: u32) -> Result<TempFile<'d>, FsError> {
        if LINK_BY_FD_REFUSED.load(Ordering::Relaxed) {
            return TempFile::with_mode(dir, mode);
        }
        let flags = OFlags::RDWR | OFlags::TMPFILE | OFlags::CLOEXEC;
        match openat(dir, c".", flags, Mode::from_raw_mode(mode & 0o777)) {
            Ok(fd) => {
                let name = TempName { dir, name: OsString::new(), pending: false };
                Ok(TempFile { file: File::from(fd), name, unnamed: true, flush_pending: true })
            }
            // No `O_TMPFILE` on this file system (or kernel: `EISDIR`).
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => TempFile::with_mode(dir, mode),
            Err(e) => Err(e.into()),
        }
    }

    /// The open file, to write its content and set its metadata before the commit.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// [`flush`] the file now, for a caller that must know its bytes landed before it touches
    /// the file it replaces; the commit does not flush it again.
    pub fn flush(&mut self) -> Result<(), FsError> {
        if self.flush_pending {
            flush(&self.file)?;
            self.flush_pending = false;
        }
        Ok(())
    }

    /// The caller knows the file's file system reports no error at `close` (see
    /// [`crate::CloseErrors`]): nothing is flushed, now or at the commit.
    pub fn no_errors_at_close(&mut self) {
        self.flush_pending = false;
    }

    /// The temporary name in the directory.
    /// (Empty for a file made without a name.)
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
        let TempFile { file, name: mut tmp, unnamed, flush_pending } = self;
        check_name(name)?;
        if how.durable {
            fsync(&file)?;
        }
        if flush_pending {
            flush(&file)?;
        }
        if unnamed {
            return link_unnamed(file, tmp.dir, name, how);
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

/// Give the unnamed file `file` the name `name` in `dir` as [`TempFile::commit_with`] says: linked
/// there when the name is free; when something took it meanwhile, linked under a temporary name
/// first and renamed over it, unless `how` says not to replace.
fn link_unnamed(
    file: File,
    dir: BorrowedFd<'_>,
    name: &OsStr,
    how: Commit,
) -> Result<File, FsError> {
    match link_at(&file, dir, name) {
        Ok(()) => {}
        Err(Errno::EXIST) if how.no_replace => return Err(FsError::Exists),
        Err(Errno::EXIST) => {
            let mut tmp = TempName { dir, name: temp_name(TempKind::File), pending: false };
            link_at(&file, dir, &tmp.name)?;
            tmp.pending = true;
            renameat(dir, &tmp.name, dir, name)?;
            tmp.pending = false;
        }
        Err(e) => return Err(e.into()),
    }
    if how.durable {
        sync_dir(dir)?;
    }
    Ok(file)
}

/// The kernel refused to link a file by its descriptor (`AT_EMPTY_PATH`, for the privileged only
/// before Linux 6.10): later files get a temporary name instead, which costs less than linking
/// through `/proc/self/fd`.
static LINK_BY_FD_REFUSED: AtomicBool = AtomicBool::new(false);

/// Link the unnamed open `file` at `name` in `dir`: through its descriptor, or, where the kernel
/// allows that only to the privileged, through its `/proc/self/fd` entry.
fn link_at(file: &File, dir: BorrowedFd<'_>, name: &OsStr) -> Result<(), Errno> {
    match linkat(file, c"", dir, name, AtFlags::EMPTY_PATH) {
        Err(Errno::NOENT | Errno::PERM) => {
            LINK_BY_FD_REFUSED.store(true, Ordering::Relaxed);
            let own = format!("/proc/self/fd/{}", file.as_raw_fd());
            linkat(CWD, own.as_str(), dir, name, AtFlags::SYMLINK_FOLLOW)
        }
        other => other,
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

/// Collect the write errors that a file system defers to `close` (NFS, FUSE, SMB report a
/// failed write-back of cached pages there, not at `write`, and dropping a `File` ignores
/// them): a duplicate of the descriptor is closed, which makes the file system flush the file
/// as the last close would, and what that close met is returned. Called before a temporary
/// file takes its name, so that a copy whose bytes did not land never replaces a good file
/// and is never counted as made; and before a report, a log or standard output is called
/// written. Costs a `dup` and a `close` where nothing is deferred.
pub fn flush(file: impl AsFd) -> Result<(), FsError> {
    let file = file.as_fd();
    // A close interrupted by a signal may not have flushed (the descriptor is gone anyway on
    // Linux): flush through another duplicate.
    for _ in 0..3 {
        let dup = match rustix::io::fcntl_dupfd_cloexec(file, 0) {
            Ok(dup) => dup,
            // No descriptor to spare: the write-back, waited for, reports the same errors.
            Err(Errno::MFILE | Errno::NFILE) => {
                return rustix::fs::fdatasync(file).map_err(|e| FsError::Unwritten(e.into()))
            }
            Err(e) => return Err(e.into()),
        };
        match crate::platform::close_checked(dup) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(FsError::Unwritten(e)),
        }
    }
    Err(FsError::Unwritten(io::Error::from_raw_os_error(libc::EINTR)))
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
    #[test]
    fn an_unnamed_file_is_seen_only_once_linked_and_leaves_nothing_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        let t = TempFile::unnamed_with_mode(dir.as_fd(), 0o640).unwrap();
        t.file().write_all(b"whole").unwrap();
        if t.unnamed {
            assert!(names(tmp.path()).is_empty(), "nothing seen before the commit");
        }
        let f = t.commit(OsStr::new("f")).unwrap();
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"whole");
        let mode = f.metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o777 & !0o640, 0, "no bit that was not asked for");
        assert_eq!(names(tmp.path()), ["f"]);
        let t = TempFile::unnamed_with_mode(dir.as_fd(), 0o600).unwrap();
        t.file().write_all(b"half").unwrap();
        drop(t);
        assert_eq!(names(tmp.path()), ["f"], "a file dropped before its commit leaves nothing");
    }

    #[test]
    fn an_unnamed_file_whose_name_was_taken_replaces_it_unless_told_not_to() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("f"), b"old").unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        let t = TempFile::unnamed_with_mode(dir.as_fd(), 0o600).unwrap();
        t.file().write_all(b"new").unwrap();
        let how = Commit { no_replace: true, durable: false };
        assert!(matches!(t.commit_with(OsStr::new("f"), how), Err(FsError::Exists)));
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"old");
        let t = TempFile::unnamed_with_mode(dir.as_fd(), 0o600).unwrap();
        t.file().write_all(b"new").unwrap();
        t.commit(OsStr::new("f")).unwrap();
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"new");
        assert_eq!(names(tmp.path()), ["f"]);
    }
}
