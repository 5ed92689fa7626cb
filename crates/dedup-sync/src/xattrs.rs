//! Extended attributes, read only where they may have changed or will be written: for an entry
//! new to DST, of another kind there, differing in size, time, mode or owner, or whose source
//! changed status (`ctime`) since the destination entry was last written. Setting an attribute changes an entry's ctime and ctime cannot be set back, so
//! a source entry whose ctime is older than its copy's has the attributes the copy was given.
//! A run with nothing to do then costs the `lstat` calls alone instead of an `llistxattr` more
//! per entry on each side (docs/benchmarks/journal.md, "Sync benchmark"). `--checksum` reads them all.
//!
//! A file that will be copied whatever its attributes say (new to DST, or of another size) is
//! not read here at all ([`Defer`]): the copy reads the source's attributes through the
//! descriptor it copies from, on the copy threads, and the old copy's are never needed, since a
//! fresh file replaces it. Read here, by name and one after the other before the plan, they
//! were a serial step of every first copy (docs/benchmarks/journal.md, "Sync fixed costs, 2026-11-26").

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_fs::{get_xattr, list_xattrs, Target};
use dedup_scan::{open_dir, EntryKind, Metadata, Xattr};

use crate::tree::{join, under, Tree, Walked};

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
pub fn fill(walked: &mut Walked, src: &Path, dst: &Path, defer: Defer) {
    // By directory: the indices of its source entries whose attributes are wanted (on a first
    // copy, every one: no path or name is copied per entry).
    let mut wanted: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    let root_pair = (walked.src.dir(b"").map(|d| d.meta), walked.dst.dir(b"").map(|d| d.meta));
    let root_needed = match root_pair {
        (Some(s), Some(d)) => changed(&s, Some(&d)),
        (Some(_), None) => true,
        _ => false,
    };
    for (rel, dir) in &walked.src.dirs {
        // Both lists are sorted by name: the destination's counterpart of each entry is found
        // by walking them side by side.
        let listed = walked.dst.dir(rel);
        let theirs = listed.map_or(&[][..], |t| t.entries.as_slice());
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
            if changed(m, theirs_meta) {
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
        let x = read_root(src);
        if let Some(d) = walked.src.dirs.get_mut(&Vec::new()) {
            d.xattrs = x;
        }
        let y = read_root(dst);
        if let Some(d) = walked.dst.dirs.get_mut(&Vec::new()) {
            d.xattrs = y;
        }
    }
    let mut subdirs = Vec::new();
    for (rel, picked) in &wanted {
        let Some(dir) = walked.src.dirs.get_mut(rel) else { continue };
        let Ok(fd) = open_dir(&under(src, rel), true) else { continue };
        for &i in picked {
            let entry = &mut dir.entries[i];
            let x = read(Target::At(fd.as_fd(), OsStr::from_bytes(&entry.name)));
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
                match open_dir(&under(dst, rel), true) {
                    Ok(opened) => fd = Some(opened),
                    Err(_) => break,
                }
            }
            let Some(fd) = &fd else { break };
            let x = read(Target::At(fd.as_fd(), OsStr::from_bytes(name)));
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

/// True when the source entry may carry other attributes than its copy, or when the copy will
/// be written anyway (then it gets the source's attributes, whatever its ctime says).
fn changed(src: &Metadata, dst: Option<&Metadata>) -> bool {
    dst.is_none_or(|d| {
        src.ctime_ns >= d.ctime_ns
            || (src.size, src.mtime_ns, src.mode, src.uid, src.gid, src.nlink > 1)
                != (d.size, d.mtime_ns, d.mode, d.uid, d.gid, d.nlink > 1)
    })
}

fn read_root(root: &Path) -> Vec<Xattr> {
    open_dir(root, true).map(|fd| read(Target::Fd(fd.as_fd()))).unwrap_or_default()
}

/// Every attribute of `target`, sorted by name; none when they cannot be read.
pub(crate) fn read(target: Target<'_>) -> Vec<Xattr> {
    let Ok(names) = list_xattrs(target) else { return Vec::new() };
    let mut out: Vec<Xattr> = names
        .iter()
        .filter_map(|n| {
            let value = get_xattr(target, n).ok()??;
            Some(Xattr { name: n.as_bytes().to_vec(), value })
        })
        .collect();
    out.sort();
    out
}
