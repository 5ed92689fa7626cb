//! Giving an entry the source's metadata, in the order that keeps each step from undoing
//! another: owner (a change of owner clears set-user-ID bits), mode, extended attributes, times
//! last. Owner and every namespace of attributes only when privileged; a symlink's mode is
//! never set (Linux ignores it).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use dedup_fs::FsError;
use dedup_fs::{list_xattrs, remove_xattr, set_mode, set_owner, set_times, set_xattr, Target};
use dedup_scan::{Entry, EntryKind, Xattr};
use rustix::fs::Stat;

use crate::compare::Rules;

/// Set `src`'s metadata on `target`; `old` is what the target's attributes were when walked
/// (`None`: unknown, read them), to remove those the source does not have.
pub fn apply(
    target: Target<'_>,
    src: &Entry,
    old: Option<&[Xattr]>,
    rules: &Rules<'_>,
) -> Result<(), FsError> {
    apply_over(target, src, old, rules, None)
}

/// [`apply`] to a file this run just created with no attributes, whose status `made` was taken
/// after its creation: the owner and mode it already has are not set again (two calls per new
/// file that a file created with the right owner and mode does not need).
pub fn apply_to_new(
    target: Target<'_>,
    src: &Entry,
    rules: &Rules<'_>,
    made: &Stat,
) -> Result<(), FsError> {
    apply_over(target, src, Some(&[]), rules, Some(made))
}

fn apply_over(
    target: Target<'_>,
    src: &Entry,
    old: Option<&[Xattr]>,
    rules: &Rules<'_>,
    made: Option<&Stat>,
) -> Result<(), FsError> {
    let Some(m) = src.meta else { return Ok(()) };
    let link = m.kind == EntryKind::Symlink;
    let owner_right = made.is_some_and(|s| (s.st_uid, s.st_gid) == (m.uid, m.gid));
    let chown = rules.owner && !owner_right;
    if chown {
        set_owner(target, Some(m.uid), Some(m.gid))?;
    }
    // Not after a change of owner, which can clear set-ID bits.
    let mode_right = !chown && made.is_some_and(|s| s.st_mode & 0o7777 == m.mode & 0o7777);
    if !link {
        if !mode_right {
            set_mode(target, m.mode)?;
        }
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
