//! One directory's entries made right: content copied, metadata set, symlinks and special files
//! made, moved files renamed or cloned, `--link-dest` copies linked. Every new entry is put in
//! place by one rename, or created whole at a free name.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use dedup_fs::{
    create_special_at, create_symlink_at, open_dir_beneath, open_file_at, remove_tree_at,
    rename_at, temp_name, FsError, Special, Target, TempKind,
};
use dedup_scan::EntryKind;
use rustix::fs::{fstat, unlinkat, AtFlags, Stat};
use rustix::io::Errno;

use super::cleanup::link_into;
use super::copy::{copy_file, Dest, From, How};
use super::created::{has_default_acl, Created, NewFile};
use super::{meta, name_of, Exec};
use crate::change::ChangeKind;
use crate::dry_run::change_of;
use crate::plan::{Action, Before, DirPlan, Op};
use crate::rel_path::{join, split};

/// Carry out the actions `list` of directory `d`, the plan's `index`th.
pub fn run_dir(x: &Exec<'_>, index: usize, d: &DirPlan, list: &[usize]) {
    run_dir_waiting(x, index, d, list, &|_| {});
}

/// Carry out the actions `list` of directory `d` (the plan's `index`th), calling `wait(n)`
/// before the `n`th (a copy in the order of the disk waits there until its file was asked for,
/// `super::disk_order`).
pub fn run_dir_waiting(
    x: &Exec<'_>,
    index: usize,
    d: &DirPlan,
    list: &[usize],
    wait: &dyn Fn(usize),
) {
    let dst = match x.dst_dir(&d.rel) {
        Ok(fd) => fd,
        Err(e) => {
            for &a in list {
                x.failed(&join(&d.rel, d.actions[a].name()), clone_err(&e));
            }
            return;
        }
    };
    let mut src: Option<OwnedFd> = None;
    let mut dst = Dir { fd: dst, stat: None };
    let mut touched = false;
    for (n, &a) in list.iter().enumerate() {
        wait(n);
        let action = &d.actions[a];
        let result = one(x, (index, a), d, action, &mut dst, &mut src);
        let rel = || join(&d.rel, action.name());
        match result {
            Ok((kind, bytes)) => {
                touched = true;
                let mut change = change_of(&d.rel, action, bytes, x.rules);
                change.kind = kind;
                if kind == ChangeKind::Copy {
                    change.from = None;
                }
                x.done(change, 1);
            }
            Err((true, e)) => x.source_failed(&rel(), e),
            Err((false, e)) => x.failed(&rel(), e),
        }
        x.progress.done(1);
    }
    if touched {
        // Once for the directory, not per entry: the set is shared by the copy threads.
        x.touch(&d.rel);
    }
}

/// The destination directory whose entries are made, and its status and what a file created
/// in it starts with, once a copy needed them.
struct Dir {
    fd: OwnedFd,
    stat: Option<Option<(Stat, NewFile)>>,
}

impl Dir {
    /// Where a copy writes: the directory, with its status taken on the first copy.
    fn dest(&mut self, created: &Created) -> Dest<'_> {
        let fd = &self.fd;
        let stat = self.stat.get_or_insert_with(|| {
            let st = fstat(fd).ok()?;
            Some((st, created.in_dir(fd.as_fd(), st.st_dev)))
        });
        let new_file = stat.as_ref().map_or(NewFile::Asked, |s| s.1);
        Dest { dir: self.fd.as_fd(), stat: stat.as_ref().map(|s| &s.0), new_file, name_free: false }
    }
}

fn clone_err(e: &FsError) -> FsError {
    FsError::Io(std::io::Error::other(e.to_string()))
}

/// An error, and whether it was the source's.
type Failure = (bool, FsError);

fn dst_err(e: FsError) -> Failure {
    (false, e)
}

/// Carry out `action`, the `at`th of the plan (directory, action).
fn one(
    x: &Exec<'_>,
    at: (usize, usize),
    d: &DirPlan,
    action: &Action,
    dir: &mut Dir,
    src: &mut Option<OwnedFd>,
) -> Result<(ChangeKind, u64), Failure> {
    let dst = &dir.fd;
    let name = OsStr::from_bytes(action.name());
    let old_xattrs = action.old.as_ref().map(|o| o.xattrs.as_slice());
    if action.before == Before::EmptyDir {
        remove_tree_at(dst, name).map_err(dst_err)?;
    }
    match &action.op {
        Op::Meta => {
            // Owner and mode as walked: those that match are not set again.
            let has = action.old.as_ref().and_then(|o| o.meta.as_ref()).map(meta::Has::of_meta);
            let target = Target::At(dst.as_fd(), name);
            meta::apply_having(target, &action.src, old_xattrs, x.rules, has).map_err(dst_err)?;
            Ok((ChangeKind::Update, 0))
        }
        Op::Create if action.src.kind == EntryKind::File => {
            copy(x, at, d, action, dir, src, From::Source).map(|b| (ChangeKind::Copy, b))
        }
        Op::Create => create_other(x, d, action, dst, src).map(|k| (k, 0)),
        Op::Rename { from } => {
            let from_dir = x.dst_dir(split(from).0).map_err(dst_err)?;
            back_up(x, d, action)?;
            match rename_at(&from_dir, name_of(from), dst, name) {
                Ok(()) => {
                    x.touch_parent(from);
                    // A new file's attributes were left to its copy (`xattrs::Defer`): read.
                    let m = action.src.meta.ok_or((true, FsError::Changed))?;
                    let src_dir = open_src(x, d, src)?;
                    let want = crate::xattrs::read(Target::At(src_dir.as_fd(), name))
                        .map_err(|e| (true, e))?;
                    let target = Target::At(dir.fd.as_fd(), name);
                    meta::apply_parts(target, &m, &want, None, x.rules, None).map_err(dst_err)?;
                    Ok((ChangeKind::Rename, 0))
                }
                Err(FsError::CrossDevice) => {
                    copy(x, at, d, action, dir, src, From::Source).map(|b| (ChangeKind::Copy, b))
                }
                Err(e) => Err(dst_err(e)),
            }
        }
        Op::CloneFrom { from } => {
            let old = x
                .dst_dir(split(from).0)
                .and_then(|dir| open_file_at(&dir, name_of(from)))
                .map_err(dst_err)?;
            copy(x, at, d, action, dir, src, From::Clone(&old)).map(|b| (ChangeKind::Clone, b))
        }
        Op::LinkDest { from } => {
            let before = || back_up(x, d, action).map_err(|(_, e)| e);
            let linked = x
                .link_dest_fd
                .as_ref()
                .ok_or(FsError::Changed)
                .and_then(|root| open_dir_beneath(root, split(from).0))
                .and_then(|ld| link_into(&ld, name_of(from), dst, name, &before));
            match linked {
                Ok(()) => Ok((ChangeKind::LinkDest, 0)),
                Err(_) => {
                    copy(x, at, d, action, dir, src, From::Source).map(|b| (ChangeKind::Copy, b))
                }
            }
        }
    }
}

/// Move what the action replaces into the backups, when kept.
fn back_up(x: &Exec<'_>, d: &DirPlan, action: &Action) -> Result<(), Failure> {
    if action.replaces().is_some() && x.backups.is_some() {
        x.back_up(&join(&d.rel, action.name())).map_err(dst_err)?;
    }
    Ok(())
}

fn open_src<'s>(
    x: &Exec<'_>,
    d: &DirPlan,
    src: &'s mut Option<OwnedFd>,
) -> Result<&'s OwnedFd, Failure> {
    if src.is_none() {
        *src = Some(x.src_dir(&d.rel).map_err(|e| (true, e))?);
    }
    Ok(src.as_ref().expect("just opened"))
}

/// Copy the content of `action` (the `at`th of the plan), and hand the copy to the write-back.
fn copy(
    x: &Exec<'_>,
    at: (usize, usize),
    d: &DirPlan,
    action: &Action,
    dir: &mut Dir,
    src: &mut Option<OwnedFd>,
    from: From<'_>,
) -> Result<u64, Failure> {
    let src_fd = open_src(x, d, src)?;
    let dev = action.src.meta.map_or(0, |m| m.dev);
    let permit = x.io.acquire(dev);
    let how = How {
        reflink: x.reflink,
        rules: x.rules,
        refused: &x.refused,
        close_errors: &x.close_errors,
        ids: x.ids,
    };
    // Once: a copy made again (the source changed meanwhile) replaces the first one, not a file
    // to keep.
    let kept = std::cell::Cell::new(false);
    let before = || {
        if !kept.replace(true) {
            back_up(x, d, action).map_err(|(_, e)| e)?;
        }
        Ok(())
    };
    let mut dest = dir.dest(&x.created);
    dest.name_free = action.old.is_none() && action.before == Before::Nothing;
    let result = copy_file(src_fd.as_fd(), &dest, &action.src, action.name(), from, &how, &before);
    let bytes = result.as_ref().map_or(0, |w| w.bytes);
    permit.done(bytes);
    x.progress.read(bytes);
    match result {
        Ok(w) => {
            if let Some(until) = w.racy_until {
                x.racy.add(join(&d.rel, action.name()), until);
            }
            x.write_back.add(at, &w.copy, w.size);
            Ok(w.size)
        }
        // Opening or reading the source: the source's failure; anything else the destination's.
        Err(e @ (FsError::Changed | FsError::NotRegular(_))) => Err((true, e)),
        Err(FsError::Io(e)) if is_source_error(&e) => Err((true, FsError::Io(e))),
        Err(e) => Err(dst_err(e)),
    }
}

/// Errors that only opening or reading the source gives here (the destination is written
/// through files we create).
fn is_source_error(e: &std::io::Error) -> bool {
    [Errno::ACCESS, Errno::NOENT, Errno::LOOP, Errno::IO]
        .iter()
        .any(|errno| e.raw_os_error() == Some(errno.raw_os_error()))
}

/// A symlink (through a temporary name, renamed over), or a FIFO, socket or device (created at
/// its name once what stood there is gone).
fn create_other(
    x: &Exec<'_>,
    d: &DirPlan,
    action: &Action,
    dst: &OwnedFd,
    _src: &mut Option<OwnedFd>,
) -> Result<ChangeKind, Failure> {
    let name = OsStr::from_bytes(action.name());
    let m = action.src.meta.ok_or((true, FsError::Changed))?;
    if action.src.kind == EntryKind::Symlink {
        let target = action.src.target.as_deref().unwrap_or_default();
        let tmp = temp_name(TempKind::Link);
        let made = create_symlink_at(dst, &tmp, OsStr::from_bytes(target))
            .and_then(|()| {
                meta::apply(Target::At(dst.as_fd(), &tmp), &action.src, Some(&[]), x.rules)
            })
            .and_then(|()| back_up(x, d, action).map_err(|(_, e)| e))
            .and_then(|()| rename_at(dst, &tmp, dst, name));
        if made.is_err() {
            let _ = unlinkat(dst, &tmp, AtFlags::empty());
        }
        return made.map(|()| ChangeKind::Symlink).map_err(dst_err);
    }
    let kind = match action.src.kind {
        EntryKind::Fifo => Special::Fifo,
        EntryKind::Socket => Special::Socket,
        EntryKind::CharDevice => Special::CharDevice(m.rdev),
        EntryKind::BlockDevice => Special::BlockDevice(m.rdev),
        _ => return Err((true, FsError::Changed)),
    };
    if matches!(action.before, Before::Entry(_)) {
        back_up(x, d, action)?;
        remove_tree_at(dst, name).map_err(dst_err)?;
    }
    create_special_at(dst, name, kind, m.mode & 0o7777).map_err(dst_err)?;
    // A new entry has no attributes, unless the directory gave it an ACL.
    let old: Option<&[_]> = if has_default_acl(dst.as_fd()) { None } else { Some(&[]) };
    meta::apply(Target::At(dst.as_fd(), name), &action.src, old, x.rules).map_err(dst_err)?;
    Ok(ChangeKind::Special)
}
