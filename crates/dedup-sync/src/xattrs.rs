//! Extended attributes, read only where they may have changed or will be written: for an entry
//! new to DST, of another kind there, differing in size, time, mode or owner; whose source
//! changed status (`ctime`) since the destination entry was last written; or whose destination
//! entry changed status after its directory did. Setting or removing an attribute changes an
//! entry's ctime, and ctime cannot be set back: a source entry whose ctime is older than its
//! copy's has the attributes the copy was given, and a run gives a directory its times after
//! every change inside it, so a destination entry whose ctime is later than its directory's was
//! changed by someone else since (its attributes taken away, a capability dropped). A change
//! made to an entry and then to its directory as well, or within the clock tick of the run's
//! last change to the directory (change times are stamped by the kernel's coarse clock: equal
//! times tell nothing, and our own writes end in that tick), is found by `--checksum`, which
//! reads them all. A run with nothing to do costs the `lstat` calls alone instead of an `llistxattr`
//! more per entry on each side (docs/benchmarks/journal.md, "Sync benchmark (issue 27)").
//!
//! A file that will be copied whatever its attributes say (new to DST, or of another size) is
//! not read here at all ([`Defer`]): the copy reads the source's attributes through the
//! descriptor it copies from, on the copy threads, and the old copy's are never needed, since a
//! fresh file replaces it. Read here, by name and one after the other before the plan, they
//! were a serial step of every first copy (docs/benchmarks/journal.md, "Sync fixed costs, 2026-11-26").

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use dedup_core::{Observer, Problem, ProblemKind};
use dedup_fs::{get_xattr, list_xattrs, open_dir_beneath, FsError, Target};
use dedup_scan::{open_dir, EntryKind, Metadata, Xattr};
use rustix::io::Errno;

use crate::rel_path::{join, under};
use crate::tree::{Tree, Walked};
use crate::unread::Unread;

/// Which source files' attributes may be left to their copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defer {
    /// None: something compares or links them before any copy (`--link-dest`, `--dedup`).
    Never,
    /// Files in a source directory whose destination counterpart is listed at the same path.
    /// Without it the directory may be paired with a renamed one (`--delete`), whose files are
    /// then compared by their attributes.
    WhereListed,
    /// Every file that is copied anyway.
    Copied,
}

/// Read the attributes the comparison needs into both trees.
pub fn fill(walked: &mut Walked, src: &Path, dst: &Path, defer: Defer, observer: &dyn Observer) {
    let report = Report {
        observer,
        unread: Mutex::default(),
        errors: [AtomicU64::new(0), AtomicU64::new(0)],
    };
    fill_reporting(walked, src, dst, defer, &report);
    let [s, d] = report.errors.map(AtomicU64::into_inner);
    walked.src_errors += s;
    walked.dst_errors += d;
    let unread = report.unread.into_inner().unwrap_or_default();
    if !unread.is_empty() {
        let mut all = walked.unread.paths().to_vec();
        all.extend(unread);
        walked.unread = Unread::new(all);
    }
}

fn fill_reporting(walked: &mut Walked, src: &Path, dst: &Path, defer: Defer, report: &Report<'_>) {
    // By directory: the indices of its source entries whose attributes are wanted (on a first
    // copy, every one: no path or name is copied per entry).
    let mut wanted: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    let root_pair = (walked.src.dir(b"").map(|d| d.meta), walked.dst.dir(b"").map(|d| d.meta));
    let root_needed = match root_pair {
        (Some(s), Some(d)) => changed(&s, Some(&d), i64::MAX),
        (Some(_), None) => true,
        _ => false,
    };
    for (rel, dir) in &walked.src.dirs {
        // Both lists are sorted by name: the destination's counterpart of each entry is found
        // by walking them side by side.
        let listed = walked.dst.dir(rel);
        let theirs = listed.map_or(&[][..], |t| t.entries.as_slice());
        let dir_changed = listed.map_or(i64::MAX, |t| t.meta.ctime_ns);
        let defer_here = match defer {
            Defer::Never => false,
            Defer::WhereListed => listed.is_some(),
            Defer::Copied => true,
        };
        let mut j = 0;
        let mut picked = Vec::new();
        for (i, e) in dir.entries.iter().enumerate() {
            while theirs.get(j).is_some_and(|o| o.name < e.name) {
                j += 1;
            }
            let Some(m) = e.meta.as_ref() else { continue };
            if e.kind == EntryKind::Symlink {
                continue;
            }
            let other = theirs.get(j).filter(|o| o.name == e.name && o.kind == e.kind);
            let theirs_meta = other.and_then(|o| o.meta.as_ref());
            // Written anew whatever the attributes say: new here, another kind here (then
            // `other` is none) or another size. Its copy reads them from the source itself.
            let copied = theirs_meta.is_none_or(|d| d.size != m.size);
            if defer_here && e.kind == EntryKind::File && copied {
                continue;
            }
            // A directory's own change time moves whenever a run changes something in it,
            // later than its parent's: only other entries are held to their directory's.
            let dir_ctime = if e.kind == EntryKind::Dir { i64::MAX } else { dir_changed };
            if changed(m, theirs_meta, dir_ctime) {
                picked.push(i);
            }
        }
        if !picked.is_empty() {
            wanted.push((rel.clone(), picked));
        }
    }
    if wanted.is_empty() && !root_needed {
        return;
    }
    wanted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    if root_needed {
        let x = read_root(src, report, 0);
        if let Some(d) = walked.src.dirs.get_mut(&Vec::new()) {
            d.xattrs = x;
        }
        if walked.dst.dirs.contains_key(&Vec::new()) {
            let y = read_root(dst, report, 1);
            if let Some(d) = walked.dst.dirs.get_mut(&Vec::new()) {
                d.xattrs = y;
            }
        }
    }
    // Each directory is reached from its root's descriptor: no symlink planted on the way is
    // followed, and a path longer than the kernel takes in one call is still reached.
    let src_root = open_dir(src, true).ok();
    let dst_root = open_dir(dst, true).ok();
    let mut subdirs = Vec::new();
    for (rel, picked) in &wanted {
        let Some(dir) = walked.src.dirs.get_mut(rel) else { continue };
        let fd = match dir_below(src_root.as_ref(), src, rel) {
            Ok(fd) => fd,
            Err(e) => {
                report.failed(0, src, rel, e);
                continue;
            }
        };
        for &i in picked {
            let entry = &mut dir.entries[i];
            let x = match read(Target::At(fd.as_fd(), OsStr::from_bytes(&entry.name))) {
                Ok(x) => x,
                Err(e) => {
                    report.failed(0, src, &join(rel, &entry.name), e);
                    continue;
                }
            };
            if !x.is_empty() {
                if entry.kind == EntryKind::Dir {
                    subdirs.push((join(rel, &entry.name), x.clone()));
                }
                entry.xattrs = x;
            }
        }
    }
    adopt(&mut walked.src, subdirs);
    let mut subdirs = Vec::new();
    for (rel, picked) in &wanted {
        let (Some(names), Some(dir)) = (walked.src.dirs.get(rel), walked.dst.dirs.get_mut(rel))
        else {
            continue;
        };
        let mut fd = None;
        for &i in picked {
            let name = &names.entries[i].name;
            let Ok(at) = dir.entries.binary_search_by(|e| e.name.as_slice().cmp(name)) else {
                continue;
            };
            if fd.is_none() {
                match dir_below(dst_root.as_ref(), dst, rel) {
                    Ok(opened) => fd = Some(opened),
                    Err(e) => {
                        report.failed(1, dst, rel, e);
                        break;
                    }
                }
            }
            let Some(fd) = &fd else { break };
            // Unknown, they are taken as none: nothing is removed that was not seen.
            let x = match read(Target::At(fd.as_fd(), OsStr::from_bytes(name))) {
                Ok(x) => x,
                Err(e) => {
                    report.failed(1, dst, &join(rel, name), e);
                    continue;
                }
            };
            if !x.is_empty() {
                let entry = &mut dir.entries[at];
                if entry.kind == EntryKind::Dir {
                    subdirs.push((join(rel, name), x.clone()));
                }
                entry.xattrs = x;
            }
        }
    }
    adopt(&mut walked.dst, subdirs);
}

/// A listed directory's own attributes are those read for its entry in its parent.
fn adopt(tree: &mut Tree, subdirs: Vec<(Vec<u8>, Vec<Xattr>)>) {
    for (rel, x) in subdirs {
        if let Some(sub) = tree.dirs.get_mut(&rel) {
            sub.xattrs = x;
        }
    }
}

/// True when the source entry may carry other attributes than its copy (its status changed
/// since the copy's; the copy's after its directory's, `dir_ctime_ns`), or when the copy will be
/// written anyway (then it gets the source's attributes, whatever its ctime says).
fn changed(src: &Metadata, dst: Option<&Metadata>, dir_ctime_ns: i64) -> bool {
    dst.is_none_or(|d| {
        src.ctime_ns >= d.ctime_ns
            || d.ctime_ns > dir_ctime_ns
            || (src.size, src.mtime_ns, src.mode, src.uid, src.gid, src.nlink > 1)
                != (d.size, d.mtime_ns, d.mode, d.uid, d.gid, d.nlink > 1)
    })
}

/// The attributes of a tree's root; an error reported against it when they cannot be read.
/// The directory at `rel` below the tree whose root is open as `root_fd` (at `root`); when the
/// root could not be opened, tried by its path for the reason to report.
fn dir_below(root_fd: Option<&OwnedFd>, root: &Path, rel: &[u8]) -> Result<OwnedFd, FsError> {
    match root_fd {
        Some(fd) => open_dir_beneath(fd, rel),
        None => open_dir(&under(root, rel), true).map_err(FsError::Io),
    }
}

fn read_root(root: &Path, report: &Report<'_>, side: usize) -> Vec<Xattr> {
    let read =
        open_dir(root, true).map_err(FsError::Io).and_then(|fd| read(Target::Fd(fd.as_fd())));
    read.unwrap_or_else(|e| {
        report.failed(side, root, b"", e);
        Vec::new()
    })
}

/// Where the attributes that could not be read are reported and counted.
pub struct Report<'a> {
    /// Where problems go.
    pub observer: &'a dyn Observer,
    /// Source paths whose attributes could not be read.
    pub unread: Mutex<Vec<Vec<u8>>>,
    /// Problems per side (source, destination).
    pub errors: [AtomicU64; 2],
}

impl Report<'_> {
    fn failed(&self, side: usize, root: &Path, rel: &[u8], e: FsError) {
        self.errors[side].fetch_add(1, Ordering::Relaxed);
        if side == 0 {
            self.unread.lock().unwrap_or_else(|e| e.into_inner()).push(rel.to_vec());
        }
        let e = std::io::Error::other(format!("extended attributes: {e}"));
        self.observer.problem(Problem::error(under(root, rel), ProblemKind::Io(e)));
    }
}

/// Every attribute of `target`, sorted by name (none on a file system without them); an error
/// when they cannot be read.
pub(crate) fn read(target: Target<'_>) -> Result<Vec<Xattr>, FsError> {
    let unsupported = |e: &FsError| e.raw_os_error() == Some(Errno::OPNOTSUPP.raw_os_error());
    let names = match list_xattrs(target) {
        Ok(names) => names,
        Err(e) if unsupported(&e) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::with_capacity(names.len());
    for n in &names {
        // Removed since it was listed: not there.
        if let Some(value) = get_xattr(target, n)? {
            out.push(Xattr { name: n.as_bytes().to_vec(), value });
        }
    }
    out.sort();
    Ok(out)
}
