//! [`crate::TempFile`] for a caller that keeps many new files in flight at once and hands them
//! between threads (a restore writes a batch of files in pack order, then puts each in place):
//! the file shares ownership of its directory's descriptor instead of borrowing it. The same
//! promise: the final name holds the old entry or the whole new file, and a file dropped without
//! a commit takes its temporary name with it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use rustix::fs::{
    fstat, fsync, openat, renameat, renameat_with, unlinkat, AtFlags, Mode, OFlags, RenameFlags,
};
use rustix::io::Errno;

use crate::dirent::check_name;
use crate::error::FsError;
use crate::stray::{temp_name, TempKind};
use crate::temp_file::{sync_dir, Commit};

/// A regular file being written under a temporary name (`.dedup-new.<hex>`) in a directory
/// whose descriptor it shares.
#[derive(Debug)]
pub struct OwnedTempFile {
    file: File,
    name: OwnedTempName,
    /// The commit must flush the file first (see [`crate::TempFile::no_errors_at_close`]).
    flush_pending: bool,
}

/// The temporary name, removed when dropped unless it was renamed away.
#[derive(Debug)]
struct OwnedTempName {
    dir: Arc<OwnedFd>,
    name: OsString,
    /// Device and inode of the file created, to recognise it under its temporary name.
    id: (u64, u64),
    pending: bool,
}

impl OwnedTempFile {
    /// Create an empty file under a fresh temporary name in `dir`, open for reading and writing,
    /// with the permission bits `mode` (masked by the umask, as for any new file; `0o600`
    /// exposes nothing until the final mode is set).
    pub fn with_mode(dir: Arc<OwnedFd>, mode: u32) -> Result<OwnedTempFile, FsError> {
        let mode = Mode::from_raw_mode(mode & 0o777);
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        for _ in 0..16 {
            let name = temp_name(TempKind::File);
            match openat(&dir, &name, flags | OFlags::CLOEXEC, mode) {
                Ok(fd) => {
                    let st = fstat(&fd)?;
                    let id = (st.st_dev, st.st_ino);
                    let name = OwnedTempName { dir, name, id, pending: true };
                    return Ok(OwnedTempFile { file: File::from(fd), name, flush_pending: true });
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

    /// The device the file is on.
    pub fn device(&self) -> u64 {
        self.name.id.0
    }

    /// The caller knows the file's file system reports no error at `close` (see
    /// [`crate::CloseErrors`]): the commit need not flush it.
    pub fn no_errors_at_close(&mut self) {
        self.flush_pending = false;
    }

    /// The temporary name in the directory.
    pub fn name(&self) -> &OsStr {
        &self.name.name
    }

    /// The directory the file is in.
    pub fn dir(&self) -> &Arc<OwnedFd> {
        &self.name.dir
    }

    /// Put the file at `name` in its directory as `how` says and return it still open. The
    /// temporary name must still hold this very file (device and inode): something else
    /// renamed there is [`FsError::Replaced`] and is left alone. On an error the temporary
    /// name is removed when it still holds the file.
    pub fn commit_with(self, name: &OsStr, how: Commit) -> Result<File, FsError> {
        let OwnedTempFile { file, name: mut tmp, flush_pending } = self;
        check_name(name)?;
        let at = rustix::fs::statat(&tmp.dir, &tmp.name, AtFlags::SYMLINK_NOFOLLOW)?;
        if (at.st_dev, at.st_ino) != tmp.id {
            tmp.pending = false;
            return Err(FsError::Replaced);
        }
        if how.durable {
            fsync(&file)?;
        }
        if flush_pending {
            crate::temp_file::flush(&file)?;
        }
        let renamed = if how.no_replace {
            renameat_with(&tmp.dir, &tmp.name, &tmp.dir, name, RenameFlags::NOREPLACE)
        } else {
            renameat(&tmp.dir, &tmp.name, &tmp.dir, name)
        };
        match renamed {
            Ok(()) => tmp.pending = false,
            Err(Errno::EXIST) if how.no_replace => return Err(FsError::Exists),
            Err(e) => return Err(e.into()),
        }
        if how.durable {
            sync_dir(std::os::fd::AsFd::as_fd(&*tmp.dir))?;
        }
        Ok(file)
    }
}

impl Drop for OwnedTempName {
    fn drop(&mut self) {
        if !self.pending {
            return;
        }
        // Only our own file goes: a name someone swapped in is left (a later clean-up sees it).
        let ours = rustix::fs::statat(&self.dir, &self.name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| (st.st_dev, st.st_ino) == self.id);
        if ours {
            let _ = unlinkat(&self.dir, &self.name, AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stray::temp_kind;
    use dedup_scan::open_dir;
    use std::fs;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn names(dir: &Path) -> Vec<OsString> {
        let mut v: Vec<OsString> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    }

    #[test]
    fn a_file_is_put_in_place_whole_from_another_thread() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("f"), b"old").unwrap();
        let dir = Arc::new(open_dir(tmp.path(), true).unwrap());
        let t = OwnedTempFile::with_mode(Arc::clone(&dir), 0o600).unwrap();
        assert_eq!(temp_kind(t.name()), Some(TempKind::File));
        let mode = fs::metadata(tmp.path().join(t.name())).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let t = std::thread::spawn(move || {
            t.file().write_all(b"new content").unwrap();
            t
        })
        .join()
        .unwrap();
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"old");
        t.commit_with(OsStr::new("f"), Commit::default()).unwrap();
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"new content");
        assert_eq!(names(tmp.path()), ["f"]);
    }

    #[test]
    fn no_replace_keeps_what_is_there_and_dropping_removes_the_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("f"), b"old").unwrap();
        let dir = Arc::new(open_dir(tmp.path(), true).unwrap());
        let t = OwnedTempFile::with_mode(Arc::clone(&dir), 0o600).unwrap();
        let how = Commit { no_replace: true, durable: false };
        assert!(matches!(t.commit_with(OsStr::new("f"), how), Err(FsError::Exists)));
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"old");
        assert_eq!(names(tmp.path()), ["f"]);
        let t = OwnedTempFile::with_mode(Arc::clone(&dir), 0o600).unwrap();
        drop(t);
        assert_eq!(names(tmp.path()), ["f"]);
    }

    #[test]
    fn a_file_swapped_in_at_the_temporary_name_is_neither_committed_nor_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Arc::new(open_dir(tmp.path(), true).unwrap());
        let t = OwnedTempFile::with_mode(Arc::clone(&dir), 0o600).unwrap();
        let at = tmp.path().join(t.name());
        fs::remove_file(&at).unwrap();
        fs::write(&at, b"someone else's").unwrap();
        let e = t.commit_with(OsStr::new("f"), Commit::default()).unwrap_err();
        assert!(matches!(e, FsError::Replaced), "{e:?}");
        assert_eq!(fs::read(&at).unwrap(), b"someone else's");
        assert!(!tmp.path().join("f").exists());
    }
}
