//! Listing one open directory into entries: `getdents` into one buffer, then a `stat` relative
//! to the directory for each entry whose metadata the walk was asked for (or whose type the
//! listing did not settle), and a `readlink` for symlinks when every detail is wanted.

use std::ffi::{CStr, OsStr};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_core::{Observer, Problem, ProblemKind};
use rustix::fs::{readlinkat, statat, AtFlags, FileType, RawDir};
use rustix::io::Errno;

use super::entry::{Entry, EntryKind, Metadata};
use super::options::{Detail, WalkOptions};
use super::xattr;

/// Bytes of entries one `getdents` call may return: a few hundred entries, so that most
/// directories are listed in one call and a second that finds the end (rustix's `Dir` starts at
/// 768 bytes and grows slowly; docs/benchmarks/find.md, "the walk's listing buffer").
const LISTING_BUF: usize = 32 << 10;

/// A directory's entries, and the names the exclusion globs left out.
pub(super) struct Found {
    pub entries: Vec<Entry>,
    pub excluded: Vec<(Vec<u8>, Option<EntryKind>)>,
    /// With [`WalkOptions::inode_order`], each entry's inode number as the listing gave it.
    pub inos: Vec<u64>,
}

/// Listings of at most this many entries hand their vector back for the thread's next listing:
/// a walk lists thousands of directories on a few threads, and a vector grown afresh for each
/// one leaves the allocator's heap fragmented. Larger ones are freed, so a huge directory does
/// not keep its memory for the rest of the walk.
const REUSED_ENTRIES: usize = 1024;

thread_local! {
    static SPARE: std::cell::Cell<Vec<Entry>> = const { std::cell::Cell::new(Vec::new()) };
}

/// An empty vector for a listing, with the room a listing on this thread left behind.
fn spare_entries() -> Vec<Entry> {
    SPARE.with(std::cell::Cell::take)
}

/// Give a listing's vector back to this thread once the visitor is done with it.
pub(super) fn give_back(mut entries: Vec<Entry>) {
    if entries.capacity() <= REUSED_ENTRIES {
        entries.clear();
        SPARE.with(|spare| spare.set(entries));
    }
}

/// List `fd` (the directory at `path`, `relative` below root number `root`). Entries that fail
/// to be examined are reported to `observer` and left out.
pub(super) fn list(
    fd: &OwnedFd,
    path: &Path,
    (root, relative): (u32, &[u8]),
    options: &WalkOptions,
    observer: &dyn Observer,
) -> Found {
    let failed = |path: &Path, e: io::Error| {
        observer.problem(Problem::error(path, ProblemKind::Io(e)));
    };
    let mut found = Found { entries: spare_entries(), excluded: Vec::new(), inos: Vec::new() };
    let mut buf = Vec::with_capacity(LISTING_BUF);
    let mut dir = RawDir::new(fd, buf.spare_capacity_mut());
    let mut rel = relative.to_vec();
    while let Some(entry) = dir.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                failed(path, e.into());
                break;
            }
        };
        let c_name = entry.file_name();
        let name = c_name.to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let listed = entry.file_type();
        let filter = options.filter.as_deref();
        if options.has_excludes() || filter.is_some() {
            rel.truncate(relative.len());
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(name);
            if options.excluded(&rel, name) {
                found.excluded.push((name.to_vec(), EntryKind::from_file_type(listed)));
                continue;
            }
        }
        let known = EntryKind::from_file_type(listed);
        if let (Some(f), Some(kind)) = (filter, known) {
            if f.leaves_out(root, &rel, name, Some(kind)) {
                found.excluded.push((name.to_vec(), Some(kind)));
                continue;
            }
        }
        // A filter that the listing could not tell the kind to is asked once it is known.
        let ask_after = filter.filter(|_| known.is_none());
        // The entry is built where it stays, in the listing's vector: built apart and moved in,
        // it was copied twice per entry (the `Stat` and the `Entry`, a few hundred bytes each).
        found.entries.push(Entry {
            name: name.to_vec(),
            kind: EntryKind::File,
            followed: false,
            meta: None,
            target: None,
            xattrs: Vec::new(),
        });
        let e = found.entries.last_mut().expect("an entry was just pushed");
        let examined = examine(fd, c_name, listed, options, e);
        if let Some(f) = ask_after {
            let kind = examined.is_ok().then_some(e.kind);
            if f.leaves_out(root, &rel, name, kind) {
                found.excluded.push((name.to_vec(), kind));
                found.entries.pop();
                continue;
            }
        }
        if options.inode_order {
            found.inos.push(entry.ino());
        }
        let e = found.entries.last_mut().expect("an entry was just pushed");
        match examined {
            Ok(()) => {
                if options.xattrs && options.detail == Detail::Everything {
                    let full = || path.join(OsStr::from_bytes(name));
                    match xattr::of_entry(fd.as_fd(), c_name, full, e.followed) {
                        Ok(x) => e.xattrs = x,
                        Err(err) => {
                            observer.problem(Problem::warning(full(), ProblemKind::Io(err)))
                        }
                    }
                }
            }
            Err(Errno::NOENT) if listed != FileType::Symlink => {
                // Gone between the listing and the stat: it is simply not there any more.
                found.entries.pop();
                found.inos.truncate(found.entries.len());
            }
            Err(e) => {
                found.entries.pop();
                found.inos.truncate(found.entries.len());
                failed(&path.join(OsStr::from_bytes(name)), e.into());
            }
        }
    }
    found
}

/// Find out what the walk was asked to about one listed entry, into `entry` (named, a file
/// with nothing known yet).
fn examine(
    dir: &OwnedFd,
    name: &CStr,
    listed: FileType,
    options: &WalkOptions,
    entry: &mut Entry,
) -> Result<(), Errno> {
    let everything = options.detail == Detail::Everything;
    if listed == FileType::Symlink && options.follow_links {
        match statat(dir, name, AtFlags::empty()) {
            Ok(st) => {
                let meta = Metadata::from_stat(&st).ok_or(Errno::INVAL)?;
                entry.kind = meta.kind;
                entry.followed = true;
                if everything || meta.kind == EntryKind::File {
                    entry.meta = Some(meta);
                }
                return Ok(());
            }
            // A dangling or self-referring link: nothing to walk behind it, but it is an entry.
            Err(Errno::NOENT | Errno::LOOP) => {}
            Err(e) => return Err(e),
        }
    }
    let known = EntryKind::from_file_type(listed);
    let needs_stat = everything || matches!(known, None | Some(EntryKind::File));
    if needs_stat {
        let st = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
        let meta = Metadata::from_stat(&st).ok_or(Errno::INVAL)?;
        entry.kind = meta.kind;
        if everything || meta.kind == EntryKind::File {
            entry.meta = Some(meta);
        }
    } else if let Some(kind) = known {
        entry.kind = kind;
    }
    if everything && entry.kind == EntryKind::Symlink {
        entry.target = Some(readlinkat(dir, name, Vec::new())?.into_bytes());
    }
    Ok(())
}
