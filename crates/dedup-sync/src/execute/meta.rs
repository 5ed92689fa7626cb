//! Giving an entry the source's metadata, in the order that keeps each step from undoing
//! another: owner (a change of owner clears set-user-ID bits), mode, extended attributes, times
//! last. Owner and every namespace of attributes only when privileged; a symlink's mode is
//! never set (Linux ignores it).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use dedup_fs::FsError;
use dedup_fs::{list_xattrs, remove_xattr, set_mode, set_owner, set_times, set_xattr, Target};
use dedup_scan::{Entry, EntryKind, Xattr};

use crate::compare::Rules;

/// Set `src`'s metadata on `target`; `old` is what the target's attributes were when walked
/// (`None`: unknown, read them), to remove those the source does not have.
pub fn apply(
    target: Target<'_>,
    src: &Entry,
    old: Option<&[Xattr]>,
    rules: &Rules<'_>,
) -> Result<(), FsError> {
    let Some(m) = src.meta else { return Ok(()) };
    let link = m.kind == EntryKind::Symlink;
    if rules.owner {
        set_owner(target, Some(m.uid), Some(m.gid))?;
    }
    if !link {
        set_mode(target, m.mode)?;
        xattrs(target, &src.xattrs, old, rules)?;
    }
    set_times(target, m.atime_ns, m.mtime_ns)
}

fn xattrs(
    target: Target<'_>,
    want: &[Xattr],
    old: Option<&[Xattr]>,
    rules: &Rules<'_>,
) -> Result<(), FsError> {
    let read;
    let old_names: Vec<&[u8]> = match old {
        Some(old) => old.iter().map(|x| x.name.as_slice()).collect(),
        None => {
            read = list_xattrs(target).unwrap_or_default();
            read.iter().map(|n| n.as_bytes()).collect()
        }
    };
    for name in old_names {
        if rules.settable(name) && !want.iter().any(|x| x.name == name) {
            remove_xattr(target, OsStr::from_bytes(name))?;
        }
    }
    for x in want.iter().filter(|x| rules.settable(&x.name)) {
        let same = old.is_some_and(|o| o.iter().any(|y| y == x));
        if !same {
            set_xattr(target, OsStr::from_bytes(&x.name), &x.value)?;
        }
    }
    Ok(())
}
