//! Writing a regular file's content: opened in the source without following a link, copied
//! into a temporary file in the destination directory (a clone where the file systems allow,
//! sparse-aware otherwise), given its metadata, and renamed over the name. The source is
//! checked again after the copy: one that changed meanwhile is copied again, and reported if it
//! changes again, so a half-old copy is never recorded as up to date.
//!
//! A source read within one clock tick of its last change ([`tick_until`]) may be edited again
//! in that tick without its stamp changing. A later run compares a copy by content when the
//! copy's change time falls within the racy window of the source's stamp ([`racy_until`], the
//! tick with a margin); a copy read within the tick but finished after that window (a long copy)
//! is compared here instead, once the window has passed, so that no copy of a racily read source
//! is ever trusted on its stamp alone. A copy finished within the window is handed back as such
//! ([`Written::racy_until`]): the run compares it once the window has passed ([`super::racy`]).

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_fs::{
    copy_contents, copy_data, open_file_at, regular, set_times, Copied, FsError, Reflink, Target,
    TempFile,
};
use dedup_scan::{Entry, Metadata, Xattr};
use rustix::fs::{fstat, Stat};

use super::clones::Refused;
use super::created::NewFile;
use super::meta;
use crate::compare::{racy_until, tick_until, Rules};
use crate::verify::{Comparer, Depth};

/// Copies tried before a file that keeps changing is given up.
const ATTEMPTS: usize = 2;

/// What a copy wrote.
pub struct Written {
    /// Data bytes written (or cloned).
    pub bytes: u64,
    /// The file's length as copied: what the run reports as copied, as a dry run does.
    pub size: u64,
    /// The copy read its source within the racy window of the source's stamp and was finished
    /// before this time (ns since the epoch): it must be compared with the source once the
    /// window has passed ([`super::racy`]).
    pub racy_until: Option<i64>,
}

/// Where a copy's content comes from when it is not the source file itself.
pub enum From<'a> {
    /// The source file `name` in the source directory.
    Source,
    /// An open destination file to clone (a moved file's old copy).
    Clone(&'a File),
}

/// The destination directory a copy writes into.
pub struct Dest<'a> {
    /// The directory, open.
    pub dir: BorrowedFd<'a>,
    /// Its status, taken once for its entries (`None` when it could not be): its device and
    /// its group, which a new file in it may get.
    pub stat: Option<&'a Stat>,
    /// What a file created in it starts with.
    pub new_file: NewFile,
    /// Nothing stands at the copy's name (as planned): the copy is made without a name and
    /// linked there when complete.
    pub name_free: bool,
}

/// How every copy of a run is made.
pub struct How<'a> {
    /// `--reflink`.
    pub reflink: Reflink,
    /// Metadata rules.
    pub rules: &'a Rules<'a>,
    /// Device pairs known to refuse clones.
    pub refused: &'a Refused,
    /// This process's effective user and group ids.
    pub ids: (u32, u32),
}

/// Copy the source file `src` (in `src_dir`) to `name` in `dest`, replacing what is there once
/// `before` (the backup of what stands there, when kept) succeeded.
pub fn copy_file(
    src_dir: BorrowedFd<'_>,
    dest: &Dest<'_>,
    src: &Entry,
    name: &[u8],
    from: From<'_>,
    how: &How<'_>,
    before: &dyn Fn() -> Result<(), FsError>,
) -> Result<Written, FsError> {
    let file = open_file_at(src_dir, OsStr::from_bytes(&src.name))?;
    let mut st = fstat(&file)?;
    let mut seen = regular(&st)?;
    for _ in 0..ATTEMPTS {
        // From the source's status now, not as walked: a mode narrowed since is not widened.
        let final_mode = Metadata::from_stat(&st).and_then(|m| created_with(&m, dest, how));
        let started = now_ns();
        let mode = final_mode.unwrap_or(0o600);
        let tmp = if dest.name_free {
            TempFile::unnamed_with_mode(dest.dir, mode)?
        } else {
            TempFile::with_mode(dest.dir, mode)?
        };
        let copied = match &from {
            From::Clone(old) => {
                match copy_contents(old, &fstat(old)?, &tmp, seen.size, Reflink::Always) {
                    Ok(c) => Ok(c),
                    Err(FsError::Unsupported(_)) => content(&file, &st, &tmp, seen.size, dest, how),
                    Err(e) => Err(e),
                }
            }
            From::Source => content(&file, &st, &tmp, seen.size, dest, how),
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
        // The metadata of the source as copied, not as walked; none for an entry walked
        // without (never a file: nothing is set then).
        let Some(walked) = src.meta else {
            before()?;
            tmp.commit(OsStr::from_bytes(name))?;
            return Ok(Written { bytes: copied.bytes, size: seen.size, racy_until: None });
        };
        let m = Metadata::from_stat(&after).unwrap_or(walked);
        let mut racy = Racy::of_read(m.size, m.mtime_ns, started);
        if racy.due(now_ns()) && !racy.settle(&file, tmp.file(), m.size)? {
            (st, seen) = (after, now);
            continue;
        }
        let target = Target::Fd(tmp.file().as_fd());
        let has = match (final_mode, dest.new_file) {
            (Some(mode), NewFile::Known { umask }) => {
                let (uid, gid) = how.ids;
                Some(meta::Has { uid, gid, mode: mode & 0o777 & !umask })
            }
            (Some(_), _) => Some(meta::Has::of_stat(&fstat(tmp.file())?)),
            (None, _) => None,
        };
        // The attributes of the file as copied, through its descriptor: the walk leaves a
        // file that is copied anyway unread (`xattrs::Defer`).
        let xattrs = crate::xattrs::read(Target::Fd(file.as_fd()))?;
        // A new file has no attributes, unless the directory gave it an ACL.
        let old: Option<&[Xattr]> = match dest.new_file {
            NewFile::Inherits => None,
            NewFile::Known { .. } | NewFile::Asked => Some(&[]),
        };
        meta::apply_parts(target, &m, &xattrs, old, how.rules, has)?;
        before()?;
        let copy = tmp.commit(OsStr::from_bytes(name))?;
        // Finishing the copy may have taken it past the window after all.
        if racy.pending() {
            let changed = Metadata::from_stat(&fstat(&copy)?).map_or(i64::MAX, |c| c.ctime_ns);
            if racy.due(changed) && !racy.settle(&file, &copy, m.size)? {
                // In place already: its stamp must not vouch for it until copied again (the
                // epoch, which a source read this recently cannot carry).
                set_times(Target::Fd(copy.as_fd()), m.atime_ns, 0)?;
                st = fstat(&file)?;
                seen = regular(&st)?;
                continue;
            }
        }
        let racy_until = match racy {
            Racy::Until(until) => Some(until),
            Racy::No => None,
        };
        return Ok(Written { bytes: copied.bytes, size: m.size, racy_until });
    }
    Err(FsError::Changed)
}

/// The permission bits to create the new copy of a file of metadata `m` with, when its owner is
/// right from the start, so that they expose nothing the finished file will not: unprivileged,
/// the owner is never set; privileged, when the source's owner and group are ours and a new file
/// in this directory gets our group (the directory's group, should it be set-group-ID or the
/// file system ask for it, is ours too). `None`: created readable by its owner only, until its
/// owner is set.
fn created_with(m: &Metadata, dest: &Dest<'_>, how: &How<'_>) -> Option<u32> {
    let (uid, gid) = how.ids;
    let ours = !how.rules.owner
        || (m.uid == uid && m.gid == gid && dest.stat.is_some_and(|d| d.st_gid == gid));
    ours.then_some(m.mode & 0o777)
}

/// The content of `file` (status `st`) into `tmp`: with `--reflink auto`, a clone (and then the
/// kernel's copy) is asked for only while the file systems of this device pair have not
/// refused one for every file.
fn content(
    file: &File,
    st: &Stat,
    tmp: &TempFile<'_>,
    len: u64,
    dest: &Dest<'_>,
    how: &How<'_>,
) -> Result<Copied, FsError> {
    let Some(dst_dev) = dest.stat.map(|d| d.st_dev).filter(|_| how.reflink == Reflink::Auto) else {
        return copy_contents(file, st, tmp, len, how.reflink);
    };
    if how.refused.has(st.st_dev, dst_dev) {
        return copy_data_between(file, st, tmp, len, dst_dev, how);
    }
    match copy_contents(file, st, tmp, len, Reflink::Always) {
        Err(FsError::Unsupported(e)) => {
            how.refused.learn(st.st_dev, dst_dev, &e);
            copy_data_between(file, st, tmp, len, dst_dev, how)
        }
        other => other,
    }
}

/// The data of `file` copied into `tmp` on device `dst_dev`, through the kernel's copy unless
/// it was refused between these devices for every file before (then it is not asked again).
fn copy_data_between(
    file: &File,
    st: &Stat,
    tmp: &TempFile<'_>,
    len: u64,
    dst_dev: u64,
    how: &How<'_>,
) -> Result<Copied, FsError> {
    let kernel = !how.refused.kernel_copy_refused(st.st_dev, dst_dev);
    let copied = copy_data(file, st, tmp, len, kernel)?;
    if copied.kernel_refused {
        how.refused.learn_kernel_copy_refused(st.st_dev, dst_dev);
    }
    Ok(copied)
}

/// The current time in ns since the epoch, on the clock the file system stamps by.
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Whether a copy read a source within the racy window of its stamp, and whether that has been
/// settled by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Racy {
    /// Read after the window, or settled: the stamp tells.
    No,
    /// Read while the source could still change without its stamp changing; unless the copy
    /// is finished before this time (the next run then compares it), it is compared here.
    Until(i64),
}

impl Racy {
    /// The state of a copy of `size` bytes, stamped `mtime_ns`, whose reading started at
    /// `started` (an empty file has nothing to read, so nothing to race with).
    fn of_read(size: u64, mtime_ns: i64, started: i64) -> Racy {
        if size > 0 && started < tick_until(mtime_ns) {
            Racy::Until(racy_until(mtime_ns))
        } else {
            Racy::No
        }
    }

    /// Whether a comparison is still owed.
    fn pending(&self) -> bool {
        matches!(self, Racy::Until(_))
    }

    /// Whether the comparison is owed now, at time `at`: once the window has passed, the source
    /// cannot change again without a new stamp, and the next run would trust the copy (a copy
    /// finished within the window is compared by the next run instead).
    fn due(&self, at: i64) -> bool {
        matches!(*self, Racy::Until(until) if at >= until)
    }

    /// Compares the copy with the source by content; true when they agree.
    fn settle(&mut self, source: &File, copy: &File, size: u64) -> Result<bool, FsError> {
        let same = Comparer::default().same_files(source, copy, size, Depth::Whole)?;
        *self = Racy::No;
        Ok(same)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn a_copy_read_within_the_window_and_finished_after_it_is_compared() {
        let mtime = 1_700_000_000_000 * MS + 123;
        let racy = Racy::of_read(10, mtime, mtime + 3 * MS);
        assert!(racy.pending());
        assert!(!Racy::of_read(10, mtime, mtime + 11 * MS).pending(), "read after the tick");
        assert!(!racy.due(mtime + 20 * MS), "the next run compares a copy finished this early");
        assert!(racy.due(mtime + 60 * MS), "past the window nobody else would compare it");
    }

    #[test]
    fn a_copy_read_after_the_window_or_of_an_empty_file_is_trusted() {
        let mtime = 1_700_000_000_000 * MS + 123;
        assert_eq!(Racy::of_read(10, mtime, mtime + 20 * MS), Racy::No);
        assert_eq!(Racy::of_read(0, mtime, mtime), Racy::No);
        // Whole seconds only: the window is two seconds.
        let coarse = 1_700_000_000_000 * MS;
        assert!(Racy::of_read(10, coarse, coarse + 1_500 * MS).pending());
    }
}
