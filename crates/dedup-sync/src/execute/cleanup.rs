//! The phases around the copying: removing our own temporary names left by an interrupted run
//! (only names of our form that hold what we would have left there), making the source's hard
//! links, and deleting what the source does not have.

use std::ffi::OsStr;

use dedup_fs::{
    check_stray, hard_link_at, remove_stray, remove_tree_at, rename_at, temp_name, FsError,
    TempKind,
};
use rustix::fs::{unlinkat, AtFlags};
use rustix::io::Errno;

use super::{name_of, Exec};
use crate::change::{Change, ChangeKind, Item};
use crate::dry_run::path;
use crate::plan::{Deletion, HardLink};
use crate::rel_path::{split, under};

/// Remove our temporary names left by an interrupted run.
pub fn strays(x: &Exec<'_>, strays: &[Vec<u8>]) {
    for rel in strays {
        let result = check_stray(&under(x.dst, rel)).and_then(|e| remove_stray(&e));
        match result {
            Ok(_) => {
                x.touch_parent(rel);
                let item = Item::of_kind(None, false);
                x.done(Change::new(ChangeKind::RemoveTemp, path(rel), None, item), 1);
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => x.failed(rel, e),
        }
    }
}

/// Make each hard link of the source's groups: a new link under a temporary name, renamed over
/// (what stood there moved into the backups first, when kept).
pub fn links(x: &Exec<'_>, links: &[HardLink]) {
    for l in links {
        let replaces = matches!(l.before, crate::plan::Before::Entry(_));
        let before = || if replaces { x.back_up(&l.rel).map(drop) } else { Ok(()) };
        match link(x, &l.leader, &l.rel, &before) {
            Ok(()) => {
                x.touch_parent(&l.rel);
                // The leader's change time moved with its link count: its directory's times are
                // set after it, as after any change inside it (`xattrs`).
                x.touch_parent(&l.leader);
                let change = Change::new(
                    ChangeKind::Link,
                    path(&l.rel),
                    Some(path(&l.leader)),
                    Item::of_link(l),
                );
                x.done(change, 1);
            }
            Err(e) => x.failed(&l.rel, e),
        }
    }
}

/// Link `leader` (below DST) at `rel`, replacing what stands there (not a directory), once
/// `before` (the backup of what stands there) succeeded.
pub fn link(x: &Exec<'_>, leader: &[u8], rel: &[u8], before: Before<'_>) -> Result<(), FsError> {
    let from = x.dst_dir(split(leader).0)?;
    let dir = x.dst_dir(split(rel).0)?;
    link_into(&from, name_of(leader), &dir, name_of(rel), before)
}

/// What is done just before a new entry is renamed over its name: the backup of what stands
/// there, when kept.
pub type Before<'a> = &'a dyn Fn() -> Result<(), FsError>;

/// Link `from_name` in `from` as `name` in `dir` through a temporary name, renamed over it once
/// `before` succeeded. Where `name` already is a link of that inode, `rename(2)` succeeds and
/// does nothing, leaving the temporary name: it is removed.
pub fn link_into(
    from: &std::os::fd::OwnedFd,
    from_name: &OsStr,
    dir: &std::os::fd::OwnedFd,
    name: &OsStr,
    before: Before<'_>,
) -> Result<(), FsError> {
    let tmp = temp_name(TempKind::Link);
    hard_link_at(from, from_name, dir, &tmp)?;
    before().and_then(|()| rename_at(dir, &tmp, dir, name)).inspect_err(|_| {
        let _ = unlinkat(dir, &tmp, AtFlags::empty());
    })?;
    match unlinkat(dir, &tmp, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Delete every planned entry with everything below it (moved into the backups, when kept: the
/// entries the plan counted).
pub fn deletions(x: &Exec<'_>, deletions: &[Deletion]) {
    for d in deletions {
        let result = if x.backups.is_some() {
            x.back_up(&d.rel).map(|moved| if moved { d.entries } else { 0 })
        } else {
            x.dst_dir(split(&d.rel).0).and_then(|dir| remove_tree_at(&dir, name_of(&d.rel)))
        };
        match result {
            Ok(0) => {}
            Ok(n) => {
                x.touch_parent(&d.rel);
                let item = Item::of_kind(d.kind, false);
                x.done(Change::new(ChangeKind::Delete, path(&d.rel), None, item), n);
            }
            Err(e) => x.failed(&d.rel, e),
        }
    }
}
