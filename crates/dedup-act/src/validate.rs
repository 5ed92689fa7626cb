//! The check just before a step: the path still names the very file the plan expects (same
//! device, inode, size, mtime and ctime), reached without following a symlink, and open.

use std::fs::File;

use dedup_core::FileMeta;
use dedup_scan::meta_from_stat;
use rustix::fs::{fstat, Stat};

use crate::dirent::{regular, Entry};
use crate::skip::SkipReason;

/// A file validated and held open for the step.
#[derive(Debug)]
pub(crate) struct Opened {
    pub entry: Entry,
    pub file: File,
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

    /// `fstat` again, after a change we made.
    pub fn refresh(&mut self) -> Result<(), SkipReason> {
        self.stat = fstat(&self.file)?;
        Ok(())
    }

    /// The path still names this file, unchanged since it was validated: the last check before
    /// the rename or unlink that replaces it.
    pub fn still_there(&self) -> Result<(), SkipReason> {
        let now = regular(&self.entry.lstat()?)?;
        let expected = self.meta();
        if now.id != expected.id {
            return Err(SkipReason::Replaced);
        }
        if !expected.unchanged(&meta_from_stat(&fstat(&self.file)?)) {
            return Err(SkipReason::Changed);
        }
        Ok(())
    }
}

/// Open `path` and check that it is `expected`.
pub(crate) fn open_expected(
    path: &std::path::Path,
    expected: &FileMeta,
) -> Result<Opened, SkipReason> {
    let entry = Entry::open(path)?;
    let before = regular(&entry.lstat()?)?;
    if before.id != expected.id {
        return Err(SkipReason::Replaced);
    }
    let file = entry.open_file()?;
    let stat = fstat(&file)?;
    let meta = regular(&stat)?;
    if meta.id != expected.id {
        return Err(SkipReason::Replaced);
    }
    if !meta.unchanged(expected) {
        return Err(SkipReason::Changed);
    }
    Ok(Opened { entry, file, stat })
}
