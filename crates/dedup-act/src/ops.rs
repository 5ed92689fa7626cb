//! The changes themselves, each after validation and on files held open. Replacements are made
//! under a temporary name in the duplicate's directory, checked, then renamed over it, so the
//! path always names a complete file: the old duplicate or its replacement.

use std::ffi::OsStr;
use std::io;
use std::path::Path;

use rustix::fs::{linkat, renameat, renameat_with, symlinkat, unlinkat, AtFlags, RenameFlags};
use rustix::io::Errno;

use crate::dirent::Entry;
use crate::platform::{dedupe_range, Deduped};
use crate::skip::SkipReason;
use crate::stray::temp_name;
use crate::validate::Opened;

/// Largest range handed to one FIDEDUPERANGE call (btrfs caps a call at 16 MiB).
const DEDUPE_CHUNK: u64 = 16 << 20;

/// Replace `target` with a hard link to `kept`.
pub(crate) fn link(kept: &Opened, target: &Opened) -> Result<(), SkipReason> {
    let tmp = create_temp(|name| {
        linkat(
            &kept.entry.dir,
            kept.entry.name.as_os_str(),
            &target.entry.dir,
            name,
            AtFlags::empty(),
        )
    })?;
    // The new name must be the kept inode itself, not whatever stood at the kept path by then.
    let made = target.entry.lstat_sibling(&tmp);
    if !made.is_ok_and(|st| st.st_dev == kept.stat.st_dev && st.st_ino == kept.stat.st_ino) {
        discard(&target.entry, &tmp);
        return Err(SkipReason::Kept(Box::new(SkipReason::Replaced)));
    }
    replace_with(target, &tmp)
}

/// Replace `target` with a symlink whose text is `text`.
pub(crate) fn symlink(text: &Path, target: &Opened) -> Result<(), SkipReason> {
    let tmp = create_temp(|name| symlinkat(text, &target.entry.dir, name))?;
    replace_with(target, &tmp)
}

/// Delete `target`.
pub(crate) fn remove(target: &Opened) -> Result<(), SkipReason> {
    target.still_there()?;
    Ok(unlinkat(&target.entry.dir, target.entry.name.as_os_str(), AtFlags::empty())?)
}

/// Move `target` to `dest` (never over an existing file, never by copying).
pub(crate) fn move_to(target: &Opened, dest: &Path) -> Result<(), SkipReason> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(SkipReason::Io)?;
    }
    let to = Entry::open(dest)?;
    target.still_there()?;
    let flags = RenameFlags::NOREPLACE;
    let from = target.entry.name.as_os_str();
    match renameat_with(&target.entry.dir, from, &to.dir, to.name.as_os_str(), flags) {
        Ok(()) => Ok(()),
        Err(Errno::XDEV) => Err(SkipReason::OtherFileSystem),
        Err(Errno::EXIST) => Err(SkipReason::DestinationExists),
        Err(e) => Err(e.into()),
    }
}

/// Make `target` share `kept`'s extents, range by range; the kernel compares each range.
/// Returns the bytes now shared.
pub(crate) fn reflink(kept: &Opened, target: &Opened, size: u64) -> Result<u64, SkipReason> {
    let mut at = 0;
    while at < size {
        let len = DEDUPE_CHUNK.min(size - at);
        match dedupe_range(&kept.file, &target.file, at, len) {
            Ok(Deduped::Same(0)) => {
                return Err(SkipReason::Io(io::Error::other("the kernel deduplicated 0 bytes")))
            }
            Ok(Deduped::Same(n)) => at += n,
            Ok(Deduped::Differs) => return Err(SkipReason::ContentDiffers),
            Err(e) => return Err(reflink_error(e)),
        }
    }
    Ok(size)
}

fn reflink_error(e: io::Error) -> SkipReason {
    let unsupported = [Errno::OPNOTSUPP, Errno::INVAL, Errno::NOTTY, Errno::XDEV, Errno::NOSYS];
    match e.raw_os_error().map(Errno::from_raw_os_error) {
        Some(errno) if unsupported.contains(&errno) => {
            SkipReason::ReflinkUnsupported(e.to_string())
        }
        _ => SkipReason::from_io(e),
    }
}

/// Create a new entry next to `target` under a fresh temporary name.
fn create_temp(
    make: impl Fn(&OsStr) -> rustix::io::Result<()>,
) -> Result<std::ffi::OsString, SkipReason> {
    for _ in 0..16 {
        let name = temp_name();
        match make(&name) {
            Ok(()) => return Ok(name),
            Err(Errno::EXIST) => continue,
            Err(Errno::XDEV) => return Err(SkipReason::OtherFileSystem),
            Err(e) => return Err(e.into()),
        }
    }
    Err(SkipReason::Io(io::Error::other("cannot find a free temporary name")))
}

/// Check the duplicate one last time, then rename the temporary name over it.
fn replace_with(target: &Opened, tmp: &OsStr) -> Result<(), SkipReason> {
    if let Err(reason) = target.still_there() {
        discard(&target.entry, tmp);
        return Err(reason);
    }
    let dir = &target.entry.dir;
    if let Err(e) = renameat(dir, tmp, dir, target.entry.name.as_os_str()) {
        discard(&target.entry, tmp);
        return Err(e.into());
    }
    Ok(())
}

/// Remove a temporary name we made (best effort: a later run removes what is left).
fn discard(entry: &Entry, tmp: &OsStr) {
    let _ = unlinkat(&entry.dir, tmp, AtFlags::empty());
}

/// What a move would meet at `dest`, checked without changing anything (dry runs and real runs
/// alike): the destination must not exist and must be on the duplicate's file system.
pub(crate) fn move_precheck(target: &Opened, dest: &Path) -> Result<(), SkipReason> {
    match std::fs::symlink_metadata(dest) {
        Ok(_) => return Err(SkipReason::DestinationExists),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(SkipReason::Io(e)),
    }
    let mut dir = dest.parent();
    while let Some(d) = dir {
        match std::fs::metadata(d) {
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                if m.dev() != target.stat.st_dev {
                    return Err(SkipReason::OtherFileSystem);
                }
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => dir = d.parent(),
            Err(e) => return Err(SkipReason::Io(e)),
        }
    }
    Ok(())
}
