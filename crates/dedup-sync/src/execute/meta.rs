//! Giving an entry the source's metadata, in the order that keeps each step from undoing
//! another: owner (a change of owner clears set-user-ID bits and drops a file capability), mode,
//! extended attributes, times last. Owner and every namespace of attributes only when privileged; a symlink's mode is
//! never set (Linux ignores it).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use dedup_fs::FsError;
use dedup_fs::{list_xattrs, remove_xattr, set_mode, set_owner, set_times, set_xattr, Target};
use dedup_scan::{Entry, EntryKind, Metadata, Xattr};
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
    apply_having(target, src, old, rules, None)
}

/// The owner, group and permission bits an entry is known to have: they are not set again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Has {
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Mode bits (`& 0o7777`).
    pub mode: u32,
}

impl Has {
    /// What a `stat` says.
    pub fn of_stat(st: &Stat) -> Has {
        Has { uid: st.st_uid, gid: st.st_gid, mode: st.st_mode & 0o7777 }
    }

    /// What the walk saw.
    pub fn of_meta(m: &Metadata) -> Has {
        Has { uid: m.uid, gid: m.gid, mode: m.mode & 0o7777 }
    }
}

/// [`apply`] to an entry whose owner and mode are known (`has`): a file this run just created,
/// with no attributes, whose status was taken after its creation; or a directory as walked whose
/// times alone differ. What it has already is not set again (for a new file, two calls that a
/// file created with the right owner and mode does not need; for a directory whose entries
/// changed, four).
pub fn apply_having(
    target: Target<'_>,
    src: &Entry,
    old: Option<&[Xattr]>,
    rules: &Rules<'_>,
    has: Option<Has>,
) -> Result<(), FsError> {
    let Some(m) = src.meta else { return Ok(()) };
    apply_parts(target, &m, &src.xattrs, old, rules, has)
}

/// [`apply_having`] with the metadata `m` and the attributes `want` given apart: for a copy,
/// which sets the metadata of the source as it was copied, not as walked.
pub fn apply_parts(
    target: Target<'_>,
    m: &Metadata,
    want: &[Xattr],
    old: Option<&[Xattr]>,
    rules: &Rules<'_>,
    has: Option<Has>,
) -> Result<(), FsError> {
    let link = m.kind == EntryKind::Symlink;
    let owner_right = has.is_some_and(|h| (h.uid, h.gid) == (m.uid, m.gid));
    let chown = rules.owner && !owner_right;
    if chown {
        set_owner(target, Some(m.uid), Some(m.gid))?;
    }
    // Not after a change of owner, which can clear set-ID bits.
    let mode = rules.mode_for(m);
    let mode_right = !chown && has.is_some_and(|h| h.mode == mode & 0o7777);
    if !link {
        if !mode_right {
            set_mode(target, mode)?;
        }
        // A change of owner makes the kernel drop `security.capability`: what an entry that had
        // attributes has is read again, and set again where it lost them.
        let old = if chown && old.is_some_and(|o| !o.is_empty()) { None } else { old };
        xattrs(target, want, old, rules)?;
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
