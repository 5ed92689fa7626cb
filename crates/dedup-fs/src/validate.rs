//! The check just before a change: the path still names the very file the caller expects (same
//! device, inode, size, mtime and ctime), reached without following a symlink, and open.

use std::fs::File;
use std::path::Path;

use dedup_core::FileMeta;
use dedup_scan::meta_from_stat;
use rustix::fs::{fstat, Stat};

use crate::dirent::{regular, Entry};
use crate::error::FsError;

/// A regular file validated and held open: its directory entry, its descriptor and the `fstat`
/// of that descriptor.
#[derive(Debug)]
pub struct Opened {
    /// Where it was found.
    pub entry: Entry,
    /// Open for reading.
    pub file: File,
    /// `fstat` of `file`, as of the validation or the last [`Opened::refresh`].
    pub stat: Stat,
}

impl Opened {
    /// Metadata of the open file.
    pub fn meta(&self) -> FileMeta {
        meta_from_stat(&self.stat)
    }

    /// Bytes the file occupies on disk.
    pub fn allocated(&self) -> u64 {
        (self.stat.st_blocks as u64).saturating_mul(512)
    }

    /// `fstat` again, after a change the caller made.
    pub fn refresh(&mut self) -> Result<(), FsError> {
        self.stat = fstat(&self.file)?;
        Ok(())
    }

    /// The path still names this file, unchanged since it was validated: the last check before
    /// the rename or unlink that replaces it.
    pub fn still_there(&self) -> Result<(), FsError> {
        let now = regular(&self.entry.lstat()?)?;
        let expected = self.meta();
        if now.id != expected.id {
            return Err(FsError::Replaced);
        }
        if !expected.unchanged(&meta_from_stat(&fstat(&self.file)?)) {
            return Err(FsError::Changed);
        }
        Ok(())
    }
}

/// Open `path` and check that it is `expected`: a regular file (a symlink at the last name is
/// not followed), of the same device and inode, with the same size, mtime and ctime.
pub fn open_expected(path: &Path, expected: &FileMeta) -> Result<Opened, FsError> {
    open_expected_entry(Entry::open(path)?, expected)
}

/// [`open_expected`] for an entry the caller reached itself (below a root, say, without
/// following symlinks on the way).
pub fn open_expected_entry(entry: Entry, expected: &FileMeta) -> Result<Opened, FsError> {
    let before = regular(&entry.lstat()?)?;
    if before.id != expected.id {
        return Err(FsError::Replaced);
    }
    let file = entry.open_file()?;
    let stat = fstat(&file)?;
    let meta = regular(&stat)?;
    if meta.id != expected.id {
        return Err(FsError::Replaced);
    }
    if !meta.unchanged(expected) {
        return Err(FsError::Changed);
    }
    Ok(Opened { entry, file, stat })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_core::FileMeta;
    use std::fs;

    #[test]
    fn a_changed_or_replaced_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f");
        fs::write(&p, b"one").unwrap();
        let seen = FileMeta::of(&fs::symlink_metadata(&p).unwrap());
        let opened = open_expected(&p, &seen).unwrap();
        assert!(opened.still_there().is_ok());
        std::thread::sleep(std::time::Duration::from_millis(5));
        fs::write(&p, b"two").unwrap();
        assert!(matches!(open_expected(&p, &seen), Err(FsError::Changed)));
        assert!(matches!(opened.still_there(), Err(FsError::Changed)));
        fs::remove_file(&p).unwrap();
        fs::write(tmp.path().join("g"), b"one").unwrap();
        fs::rename(tmp.path().join("g"), &p).unwrap();
        assert!(matches!(open_expected(&p, &seen), Err(FsError::Replaced)));
        fs::remove_file(&p).unwrap();
        assert!(open_expected(&p, &seen).unwrap_err().is_not_found());
    }
}
