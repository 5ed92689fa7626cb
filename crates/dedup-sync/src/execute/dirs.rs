//! Directories: created or renamed before anything is put in them (parents first), and given
//! their metadata last (deepest first), once nothing more changes inside them.

use std::os::fd::AsFd;

use dedup_fs::{create_dir_at, remove_tree_at, rename_at, set_times, FsError, Target};
use rustix::fs::{statat, AtFlags, FileType};

use super::{meta, name_of, Exec};
use crate::change::{Change, ChangeKind, Item};
use crate::dry_run::path;
use crate::plan::{Before, DirPlan, DirState, Plan};
use crate::rel_path::split;

/// Mode of a directory while the run fills it; its own is set at the end.
const WORKING_MODE: u32 = 0o700;

/// Create or rename every directory the plan needs, parents first.
pub fn create(x: &Exec<'_>, plan: &Plan) {
    for d in &plan.dirs {
        if d.rel.is_empty() || d.state == DirState::Exists {
            continue;
        }
        let result = make(x, d);
        match result {
            Ok(change) => {
                x.touch_parent(&d.rel);
                if let Some(from) = &change.from {
                    x.touch_parent(from.as_os_str().as_encoded_bytes());
                }
                x.done(change, 1);
            }
            Err(e) => x.failed(&d.rel, e),
        }
    }
}

fn make(x: &Exec<'_>, d: &DirPlan) -> Result<Change, FsError> {
    let parent = x.dst_dir(split(&d.rel).0)?;
    let name = name_of(&d.rel);
    let item = Item::of_dir(d, x.rules);
    match d.before {
        Before::Entry(_) if x.backups.is_some() => {
            x.back_up(&d.rel)?;
        }
        Before::Entry(_) | Before::EmptyDir => {
            remove_tree_at(&parent, name)?;
        }
        Before::Nothing | Before::DeletedDir => {}
    }
    match &d.state {
        DirState::Renamed { from } => {
            let from_dir = x.dst_dir(split(from).0)?;
            rename_at(&from_dir, name_of(from), &parent, name)?;
            Ok(Change::new(ChangeKind::Rename, path(&d.rel), Some(path(from)), item))
        }
        _ => {
            match create_dir_at(&parent, name, WORKING_MODE) {
                Err(FsError::Exists) => {
                    // Made by an earlier phase of this run (a parent for a renamed directory)
                    // or an interrupted one: fine if it is a directory.
                    let st = statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
                    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
                        return Err(FsError::Exists);
                    }
                }
                other => other?,
            }
            Ok(Change::new(ChangeKind::Mkdir, path(&d.rel), None, item))
        }
    }
}

/// Give directories their metadata, deepest first: those created or differing get all of it,
/// those whose entries changed get their times back.
pub fn finish(x: &Exec<'_>, plan: &Plan) {
    let touched = std::mem::take(&mut *x.touched.lock().unwrap_or_else(|e| e.into_inner()));
    let mut todo: Vec<&DirPlan> =
        plan.dirs.iter().filter(|d| d.set_meta || touched.contains(&d.rel)).collect();
    todo.sort_by_key(|d| {
        std::cmp::Reverse(
            d.rel.iter().filter(|&&b| b == b'/').count() + usize::from(!d.rel.is_empty()),
        )
    });
    for d in todo {
        let result = set(x, d);
        match result {
            Ok(()) if d.set_meta && d.state != DirState::Create => {
                let item = Item::of_dir(d, x.rules);
                x.done(Change::new(ChangeKind::Update, path(&d.rel), None, item), 1);
            }
            Ok(()) => {}
            Err(e) => x.failed(&d.rel, e),
        }
    }
}

fn set(x: &Exec<'_>, d: &DirPlan) -> Result<(), FsError> {
    if d.set_meta && d.state == DirState::Create && !d.rel.is_empty() {
        // Made by this run (ours, `WORKING_MODE`): opened itself, so that owner, mode,
        // attributes and times are each one call on it, not a lookup by name each. It has no
        // attributes unless its parent gave it ACLs: they are read.
        let dir = x.dst_dir(&d.rel)?;
        return meta::apply(Target::Fd(dir.as_fd()), &d.src, None, x.rules);
    }
    let parent;
    let target = if d.rel.is_empty() {
        Target::Fd(x.dst_fd.as_fd())
    } else {
        parent = x.dst_dir(split(&d.rel).0)?;
        Target::At(parent.as_fd(), name_of(&d.rel))
    };
    if d.set_meta {
        if d.state == DirState::Create {
            // DST itself: its attributes are read, as those of the directories above.
            return meta::apply(target, &d.src, None, x.rules);
        }
        // As walked (renamed or not, the same inode): most often only its times differ, its
        // entries having changed.
        let old = d.old.as_ref();
        let has = old.and_then(|o| o.meta.as_ref()).map(meta::Has::of_meta);
        meta::apply_having(target, &d.src, old.map(|o| o.xattrs.as_slice()), x.rules, has)
    } else {
        let m = d.src.meta.expect("a listed directory has metadata");
        set_times(target, m.atime_ns, m.mtime_ns)
    }
}
