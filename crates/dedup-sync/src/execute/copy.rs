//! Writing a regular file's content: opened in the source without following a link, copied
//! into a temporary file in the destination directory (a clone where the file systems allow,
//! sparse-aware otherwise), given its metadata, and renamed over the name. The source is
//! checked again after the copy: one that changed meanwhile is copied again, and reported if it
//! changes again, so a half-old copy is never recorded as up to date.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;

use dedup_fs::{copy_contents, open_file_at, regular, FsError, Reflink, Target, TempFile};
use dedup_scan::{Entry, Metadata};
use rustix::fs::fstat;

use super::meta;
use crate::compare::Rules;

/// Copies tried before a file that keeps changing is given up.
const ATTEMPTS: usize = 2;

/// What a copy wrote.
pub struct Written {
    /// Data bytes written (or cloned).
    pub bytes: u64,
}

/// Where a copy's content comes from when it is not the source file itself.
pub enum From<'a> {
    /// The source file `name` in the source directory.
    Source,
    /// An open destination file to clone (a moved file's old copy).
    Clone(&'a File),
}

/// Copy the source file `src` (in `src_dir`) to `name` in `dst_dir`, replacing what is there.
#[allow(clippy::too_many_arguments)]
pub fn copy_file(
    src_dir: BorrowedFd<'_>,
    dst_dir: BorrowedFd<'_>,
    src: &Entry,
    name: &[u8],
    from: From<'_>,
    reflink: Reflink,
    rules: &Rules<'_>,
) -> Result<Written, FsError> {
    let file = open_file_at(src_dir, OsStr::from_bytes(&src.name))?;
    let mut st = fstat(&file)?;
    let mut seen = regular(&st)?;
    for _ in 0..ATTEMPTS {
        let tmp = TempFile::new_in(dst_dir)?;
        let copied = match &from {
            From::Clone(old) => {
                match copy_contents(old, &fstat(old)?, &tmp, seen.size, Reflink::Always) {
                    Ok(c) => Ok(c),
                    Err(FsError::Unsupported(_)) => {
                        copy_contents(&file, &st, &tmp, seen.size, reflink)
                    }
                    Err(e) => Err(e),
                }
            }
            From::Source => copy_contents(&file, &st, &tmp, seen.size, reflink),
        };
        let copied = match copied {
            Ok(c) => c,
            Err(FsError::Changed) => {
                st = fstat(&file)?;
                seen = regular(&st)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let after = fstat(&file)?;
        let now = regular(&after)?;
        if !seen.unchanged(&now) {
            (st, seen) = (after, now);
            continue;
        }
        let mut entry = src.clone();
        if let Some(m) = entry.meta.as_mut() {
            *m = Metadata { ..Metadata::from_stat(&after).unwrap_or(*m) };
        }
        meta::apply(Target::Fd(tmp.file().as_fd()), &entry, Some(&[]), rules)?;
        tmp.commit(OsStr::from_bytes(name))?;
        return Ok(Written { bytes: copied.bytes });
    }
    Err(FsError::Changed)
}
