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

use dedup_core::{FileId, FileMeta};
use dedup_fs::{
    blocks_cover, copy_contents, copy_data, has_no_holes, open_file_at, regular, set_times,
    CloseErrors, Copied, FsError, Reflink, Target, TempFile,
};
use dedup_scan::{Entry, EntryKind, Metadata, Xattr};
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
    /// The copy, open (its write-back is started in an order the disk can follow:
    /// [`super::write_back`]).
    pub copy: File,
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
    /// Destination devices that may report a failed write only at `close`.
    pub close_errors: &'a CloseErrors,
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
    let walked = Source::walked(src, dest, &from);
    let mut from_walk = walked.is_some();
    let mut source = match walked {
        Some(s) => s,
        None => Source::of(&fstat(&file)?)?,
    };
    for _ in 0..ATTEMPTS + usize::from(from_walk) {
        // From the status the copy is checked against, never wider than the file's mode then.
        let final_mode = created_with(&source.meta, dest, how);
        let started = now_ns();
        let mode = final_mode.unwrap_or(0o600);
        let mut tmp = if dest.name_free {
            TempFile::unnamed_with_mode(dest.dir, mode)?
        } else {
            TempFile::with_mode(dest.dir, mode)?
        };
        if dest.stat.is_some_and(|s| !how.close_errors.at(s.st_dev, dest.dir)) {
            tmp.no_errors_at_close();
        }
        let copied = match &from {
            From::Clone(old) => {
                let size = source.seen.size;
                match copy_contents(old, has_no_holes(&fstat(old)?), &tmp, size, Reflink::Always) {
                    Ok(c) => Ok(c),
                    Err(FsError::Unsupported(_)) => content(&file, &source, &tmp, dest, how),
                    Err(e) => Err(e),
                }
            }
            From::Source => content(&file, &source, &tmp, dest, how),
        };
        let copied = match copied {
            Ok(c) => c,
            // Read on the walk's word: what was open may not be what was walked (a FIFO put
            // in its place refuses positioned reads); its own status decides.
            Err(_) if from_walk => {
                from_walk = false;
                source = Source::of(&fstat(&file)?)?;
                continue;
            }
            Err(FsError::Changed) => {
                source = Source::of(&fstat(&file)?)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let after = fstat(&file)?;
        let now = regular(&after)?;
        if !source.seen.unchanged(&now) {
            from_walk = false;
            source = Source::of(&after)?;
            continue;
        }
        // The metadata of the source as copied, not as walked; none for an entry walked
        // without (never a file: nothing is set then).
        let Some(walked) = src.meta else {
            // What the file system reports only at close, before the old file is backed up.
            tmp.flush()?;
            before()?;
            let copy = tmp.commit(OsStr::from_bytes(name))?;
            let size = source.seen.size;
            return Ok(Written { bytes: copied.bytes, size, racy_until: None, copy });
        };
        let m = Metadata::from_stat(&after).unwrap_or(walked);
        let mut racy = Racy::of_read(m.size, m.mtime_ns, started);
        if racy.due(now_ns()) && !racy.settle(&file, tmp.file(), m.size)? {
            from_walk = false;
            source = Source::of(&after)?;
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
        // What the file system reports only at close (NFS, SMB, FUSE), before the old file is
        // backed up (renamed away) for it: a copy that did not land leaves the old in place.
        tmp.flush()?;
        before()?;
        let copy = tmp.commit(OsStr::from_bytes(name))?;
        // Finishing the copy may have taken it past the window after all.
        if racy.pending() {
            let changed = Metadata::from_stat(&fstat(&copy)?).map_or(i64::MAX, |c| c.ctime_ns);
            if racy.due(changed) && !racy.settle(&file, &copy, m.size)? {
                // In place already: its stamp must not vouch for it until copied again (the
                // epoch, which a source read this recently cannot carry).
                set_times(Target::Fd(copy.as_fd()), m.atime_ns, 0)?;
                from_walk = false;
                source = Source::of(&fstat(&file)?)?;
                continue;
            }
        }
        let racy_until = match racy {
            Racy::Until(until) => Some(until),
            Racy::No => None,
        };
        return Ok(Written { bytes: copied.bytes, size: m.size, racy_until, copy });
    }
    Err(FsError::Changed)
}

/// What a copy is checked against: the source's status before it is read, as the walk took it
/// or from the open file.
struct Source {
    /// Its metadata: the mode and owner the copy is created with, the device, the holes.
    meta: Metadata,
    /// Its identity, size and times: the status after the copy must match them.
    seen: FileMeta,
}

impl Source {
    /// The status of the open source file.
    fn of(st: &Stat) -> Result<Source, FsError> {
        let seen = regular(st)?;
        let meta = Metadata::from_stat(st).ok_or(FsError::NotRegular(dedup_fs::Found::Special))?;
        Ok(Source { meta, seen })
    }

    /// The walk's status of a regular file, when the copy may be read on its word instead of
    /// a status of the open file: the check after the copy compares the open file's status
    /// (inode, size, times: any write or change of mode or owner moves the change time) with
    /// it, and a mismatch discards what was read. Only into an unnamed temporary file, which
    /// nobody can open by name while it holds bytes read under the walk's (maybe wider) mode.
    fn walked(src: &Entry, dest: &Dest<'_>, from: &From<'_>) -> Option<Source> {
        let meta = src.meta.filter(|m| m.kind == EntryKind::File)?;
        if src.followed || !dest.name_free || !matches!(from, From::Source) {
            return None;
        }
        let seen = FileMeta {
            id: FileId { dev: meta.dev, ino: meta.ino },
            size: meta.size,
            mtime_ns: meta.mtime_ns,
            ctime_ns: meta.ctime_ns,
        };
        Some(Source { meta, seen })
    }

    /// No hole to keep in the copy.
    fn dense(&self) -> bool {
        blocks_cover(self.meta.blocks, self.meta.size)
    }
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
    source: &Source,
    tmp: &TempFile<'_>,
    dest: &Dest<'_>,
    how: &How<'_>,
) -> Result<Copied, FsError> {
    let (len, dense, src_dev) = (source.seen.size, source.dense(), source.meta.dev);
    let Some(dst_dev) = dest.stat.map(|d| d.st_dev).filter(|_| how.reflink == Reflink::Auto) else {
        return copy_contents(file, dense, tmp, len, how.reflink);
    };
    if how.refused.has(src_dev, dst_dev) {
        return copy_data_between(file, source, tmp, dst_dev, how);
    }
    match copy_contents(file, dense, tmp, len, Reflink::Always) {
        Err(FsError::Unsupported(e)) => {
            how.refused.learn(src_dev, dst_dev, &e);
            copy_data_between(file, source, tmp, dst_dev, how)
        }
        other => other,
    }
}

/// The data of `file` copied into `tmp` on device `dst_dev`, through the kernel's copy unless
/// it was refused between these devices for every file before (then it is not asked again).
fn copy_data_between(
    file: &File,
    source: &Source,
    tmp: &TempFile<'_>,
    dst_dev: u64,
    how: &How<'_>,
) -> Result<Copied, FsError> {
    let src_dev = source.meta.dev;
    let kernel = !how.refused.kernel_copy_refused(src_dev, dst_dev);
    let copied = copy_data(file, source.dense(), tmp, source.seen.size, kernel)?;
    if copied.kernel_refused {
        how.refused.learn_kernel_copy_refused(src_dev, dst_dev);
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

    /// A walked entry for the file `name` in `dir`, with its status as it is now.
    fn walked(dir: &std::path::Path, name: &str) -> Entry {
        let st = rustix::fs::lstat(dir.join(name)).unwrap();
        Entry {
            name: name.as_bytes().to_vec(),
            kind: EntryKind::File,
            followed: false,
            meta: Metadata::from_stat(&st),
            target: None,
            xattrs: Vec::new(),
        }
    }

    /// A temporary SRC holding the file `f` ("walked") and an empty DST, with `f`'s entry as the
    /// walk took it.
    fn walked_file() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf, Entry) {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(&dst).unwrap();
        std::fs::write(src.join("f"), b"walked").unwrap();
        let entry = walked(&src, "f");
        (tmp, src, dst, entry)
    }

    /// Copies `entry` from `src` into `dst` as a first copy does (nothing at the name).
    fn first_copy(
        src: &std::path::Path,
        dst: &std::path::Path,
        entry: &Entry,
    ) -> Result<Written, FsError> {
        let open = |p: &std::path::Path| std::fs::File::open(p).unwrap();
        let (src_dir, dst_dir) = (open(src), open(dst));
        let dst_stat = fstat(&dst_dir).unwrap();
        let precision = || 1;
        let rules =
            Rules { owner: false, all_xattrs: false, checksum: false, precision: &precision };
        let refused = Refused::default();
        let close_errors = CloseErrors::default();
        let ids = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
        let how = How {
            reflink: Reflink::Auto,
            rules: &rules,
            refused: &refused,
            close_errors: &close_errors,
            ids,
        };
        let dest = Dest {
            dir: dst_dir.as_fd(),
            stat: Some(&dst_stat),
            new_file: NewFile::Asked,
            name_free: true,
        };
        copy_file(src_dir.as_fd(), &dest, entry, &entry.name, From::Source, &how, &|| Ok(()))
    }

    #[test]
    fn a_file_rewritten_after_the_walk_is_copied_as_it_is_now_not_as_walked() {
        let (_tmp, src, dst, entry) = walked_file();
        // Same length, the walked modification time put back: only the change time tells.
        std::fs::write(src.join("f"), b"edited").unwrap();
        let m = entry.meta.unwrap();
        let f = std::fs::File::open(src.join("f")).unwrap();
        set_times(Target::Fd(f.as_fd()), m.atime_ns, m.mtime_ns).unwrap();
        let written = first_copy(&src, &dst, &entry).unwrap();
        assert_eq!(std::fs::read(dst.join("f")).unwrap(), b"edited");
        assert_eq!(written.size, 6);
        std::fs::write(src.join("f"), b"longer than walked").unwrap();
        std::fs::remove_file(dst.join("f")).unwrap();
        let written = first_copy(&src, &dst, &entry).unwrap();
        assert_eq!(std::fs::read(dst.join("f")).unwrap(), b"longer than walked");
        assert_eq!(written.size, 18);
    }

    #[test]
    fn a_fifo_put_where_a_file_was_walked_is_refused_and_nothing_is_linked() {
        let (_tmp, src, dst, entry) = walked_file();
        std::fs::remove_file(src.join("f")).unwrap();
        let mode = rustix::fs::Mode::from_raw_mode(0o600);
        rustix::fs::mkfifoat(rustix::fs::CWD, src.join("f"), mode).unwrap();
        let e = first_copy(&src, &dst, &entry).err().expect("a FIFO is not copied as a file");
        assert!(matches!(e, FsError::NotRegular(dedup_fs::Found::Special)), "{e:?}");
        assert_eq!(std::fs::read_dir(&dst).unwrap().count(), 0, "nothing linked into dst");
    }

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
