//! Where `move` puts a duplicate: below the `--to` directory the user named (opened as given),
//! every directory under it entered or created one name at a time without following a symlink,
//! and the duplicate renamed there without replacing anything. A symlink planted in the
//! destination tree can therefore never send a duplicate elsewhere.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use dedup_fs::{create_dir_at, open_dir_at, FsError, Opened};
use rustix::fs::{fstat, renameat_with, statat, AtFlags, RenameFlags};
use rustix::io::Errno;

use crate::skip::SkipReason;

/// The directory a duplicate goes into: the deepest one that exists, and whether that is the
/// duplicate's own directory (false in a dry run when some are still to be created).
struct DestDir {
    dir: OwnedFd,
    complete: bool,
}

/// What a move of `target` to `dest` (below `to`) would meet, checked without changing
/// anything: no symlink on the way, nothing at `dest`, the same file system.
pub(crate) fn check_move(target: &Opened, to: &Path, dest: &Path) -> Result<(), SkipReason> {
    if std::fs::symlink_metadata(to).is_err() {
        // `to` is made at the first move; what exists above it decides the file system.
        return Ok(dedup_fs::move_precheck(target, to)?);
    }
    let (dest_dir, name) = dest_dir(to, dest, false)?;
    if fstat(&dest_dir.dir).map_err(FsError::from)?.st_dev != target.stat.st_dev {
        return Err(SkipReason::OtherFileSystem);
    }
    if dest_dir.complete {
        match statat(&dest_dir.dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => return Err(SkipReason::DestinationExists),
            Err(Errno::NOENT) => {}
            Err(e) => return Err(FsError::from(e).into()),
        }
    }
    Ok(())
}

/// Move `target` to `dest` below `to`, creating the directories on the way.
pub(crate) fn move_below(target: &Opened, to: &Path, dest: &Path) -> Result<(), SkipReason> {
    std::fs::create_dir_all(to).map_err(SkipReason::Io)?;
    let (dest_dir, name) = dest_dir(to, dest, true)?;
    target.still_there()?;
    let from = target.entry.name.as_os_str();
    let flags = RenameFlags::NOREPLACE;
    match renameat_with(&target.entry.dir, from, &dest_dir.dir, name, flags) {
        Ok(()) => Ok(()),
        Err(Errno::XDEV) => Err(SkipReason::OtherFileSystem),
        Err(Errno::EXIST) => Err(SkipReason::DestinationExists),
        Err(e) => Err(FsError::from(e).into()),
    }
}

/// Enter (or, with `create`, make) the directories of `dest` below `to`; returns the deepest
/// one reached and the last name of `dest`.
fn dest_dir<'a>(
    to: &Path,
    dest: &'a Path,
    create: bool,
) -> Result<(DestDir, &'a OsStr), SkipReason> {
    let below = dest.strip_prefix(to).map_err(|_| SkipReason::OutsideRoots)?;
    let mut names = Vec::new();
    for c in below.components() {
        match c {
            Component::Normal(name) => names.push(name),
            _ => return Err(SkipReason::OutsideRoots),
        }
    }
    let Some((name, dirs)) = names.split_last() else {
        return Err(SkipReason::OutsideRoots);
    };
    let mut dir = dedup_scan::open_dir(to, true).map_err(SkipReason::from_io)?;
    for &d in dirs {
        let next = match open_dir_at(&dir, d) {
            Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) && !create => {
                return Ok((DestDir { dir, complete: false }, name));
            }
            Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => {
                match create_dir_at(&dir, d, 0o777) {
                    Ok(()) | Err(FsError::Exists) => open_dir_at(&dir, d),
                    Err(e) => Err(e),
                }
            }
            other => other,
        };
        dir = next.map_err(|e| {
            let code = e.raw_os_error();
            if [Errno::LOOP, Errno::NOTDIR].iter().any(|errno| code == Some(errno.raw_os_error())) {
                SkipReason::DestinationThroughSymlink
            } else {
                SkipReason::from(e)
            }
        })?;
    }
    Ok((DestDir { dir, complete: true }, name))
}
