//! Extended attributes, read only where they may have changed or will be written: for an entry
//! new to DST, of another kind there, differing in size, time, mode or owner, or whose source
//! changed status (`ctime`) since the destination entry was last written. Setting an attribute changes an entry's ctime and ctime cannot be set back, so
//! a source entry whose ctime is older than its copy's has the attributes the copy was given.
//! A run with nothing to do then costs the `lstat` calls alone instead of an `llistxattr` more
//! per entry on each side (docs/BENCHMARKS.md, "dedup sync"). `--checksum` reads them all.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_fs::{get_xattr, list_xattrs, Target};
use dedup_scan::{open_dir, Entry, EntryKind, Metadata, Xattr};

use crate::tree::{join, under, Tree, Walked};

/// Read the attributes the comparison needs into both trees.
pub fn fill(walked: &mut Walked, src: &Path, dst: &Path) {
    let mut wanted: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let root_pair = (walked.src.dir(b"").map(|d| d.meta), walked.dst.dir(b"").map(|d| d.meta));
    let root_needed = match root_pair {
        (Some(s), Some(d)) => changed(&s, Some(&d)),
        (Some(_), None) => true,
        _ => false,
    };
    for (rel, dir) in &walked.src.dirs {
        let theirs = walked.dst.dir(rel);
        for e in &dir.entries {
            let Some(m) = e.meta.as_ref() else { continue };
            if e.kind == EntryKind::Symlink {
                continue;
            }
            let other = theirs.and_then(|t| t.entry(&e.name)).filter(|o| o.kind == e.kind);
            if changed(m, other.and_then(|o| o.meta.as_ref())) {
                wanted.push((rel.clone(), e.name.clone()));
            }
        }
    }
    if wanted.is_empty() && !root_needed {
        return;
    }
    wanted.sort();
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
    for (tree, root) in [(&mut walked.src, src), (&mut walked.dst, dst)] {
        read_into(tree, root, &wanted);
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

/// Read the attributes of the `wanted` entries (sorted by directory) that `tree` has.
fn read_into(tree: &mut Tree, root: &Path, wanted: &[(Vec<u8>, Vec<u8>)]) {
    let mut open: Option<(Vec<u8>, Option<OwnedFd>)> = None;
    for (rel, name) in wanted {
        if tree.dir(rel).is_none_or(|d| d.entry(name).is_none()) {
            continue;
        }
        if open.as_ref().is_none_or(|(r, _)| r != rel) {
            open = Some((rel.clone(), open_dir(&under(root, rel), true).ok()));
        }
        let Some((_, Some(fd))) = &open else { continue };
        let x = read(Target::At(fd.as_fd(), OsStr::from_bytes(name)));
        if x.is_empty() {
            continue;
        }
        let dir = tree.dirs.get_mut(rel).expect("checked above");
        let Ok(i) = dir.entries.binary_search_by(|e| e.name.as_slice().cmp(name)) else { continue };
        let entry: &mut Entry = &mut dir.entries[i];
        entry.xattrs = x.clone();
        if entry.kind == EntryKind::Dir {
            if let Some(sub) = tree.dirs.get_mut(&join(rel, name)) {
                sub.xattrs = x;
            }
        }
    }
}

/// Every attribute of `target`, sorted by name; none when they cannot be read.
fn read(target: Target<'_>) -> Vec<Xattr> {
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
