//! `--dirs`: acting on the report's duplicated directories. Each directory acted on becomes one
//! ordinary step per file, paired with the file at the same place in the kept directory (the
//! report aligns them), so every file goes through the usual re-checks (same inode, size, mtime,
//! ctime; bytes equal to the kept file) just before it is changed. `remove` and `move` then
//! remove the directory, which only ever works on directories left empty: `rmdir` never deletes
//! content, so a file that was skipped, or an entry the scan never saw, keeps the directory.
//!
//! Which directory is kept: of identical directories, one in a reference directory when there is
//! one, else by the `--keep` rules (a directory's time is its oldest file's mtime); of a
//! contained directory and the one holding its copies, always the latter.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use dedup_fs::{entry_names, open_dir_at, FsError};
use dedup_report::{DirCopy, DirKind, Report};
use rustix::fs::{statat, unlinkat, AtFlags, FileType};
use rustix::io::Errno;

use crate::action::Action;
use crate::anchor::entry_below_root;
use crate::keep::Candidate;
use crate::place::Places;
use crate::skip::SkipReason;
use crate::steps::{current, destination, DirRemoval, Plan, PlanFile, PlanOptions, Skipped, Step};

/// Add the steps for the report's `dirs` section to `plan`; returns the directories whose
/// files are acted on (for the clean-up of temporary names).
pub(crate) fn plan_dirs(
    report: &Report,
    places: &Places,
    options: &PlanOptions,
    plan: &mut Plan,
) -> BTreeSet<PathBuf> {
    let mut touched = BTreeSet::new();
    let base = report.groups.len();
    for (i, group) in report.dirs.iter().flatten().enumerate() {
        let index = base + i;
        let reference: Vec<bool> =
            group.dirs.iter().map(|d| places.is_reference(&d.path)).collect();
        let (kept, targets): (usize, Vec<usize>) = match group.kind {
            DirKind::Contained if group.dirs.len() == 2 => (1, vec![0]),
            DirKind::Contained => continue,
            DirKind::Identical => {
                let Some(kept) = choose(&group.dirs, &reference, places, options) else {
                    plan.groups_left_alone += 1;
                    continue;
                };
                (kept, (0..group.dirs.len()).filter(|&j| j != kept).collect())
            }
        };
        let kept_root = places.root_of(&group.dirs[kept].path);
        let targets: Vec<usize> = targets
            .into_iter()
            .filter(|&t| !reference[t])
            .filter(|&t| !(options.isolate && places.root_of(&group.dirs[t].path) == kept_root))
            .collect();
        if targets.is_empty() {
            plan.groups_left_alone += 1;
            continue;
        }
        for t in targets {
            let (k, d) = (&group.dirs[kept], &group.dirs[t]);
            plan_copy(index, k, d, places, options, plan, &mut touched);
        }
    }
    touched
}

/// The directory to keep among identical ones, or `None` when all are references.
fn choose(
    dirs: &[DirCopy],
    reference: &[bool],
    places: &Places,
    options: &PlanOptions,
) -> Option<usize> {
    if reference.iter().all(|&r| r) {
        return None;
    }
    let any_reference = reference.iter().any(|&r| r);
    let eligible: Vec<usize> =
        (0..dirs.len()).filter(|&j| reference[j] || !any_reference).collect();
    let candidates: Vec<Candidate<'_>> = eligible
        .iter()
        .map(|&j| Candidate {
            path: &dirs[j].path,
            mtime_ns: dirs[j].files.iter().map(|f| f.mtime_ns).min().unwrap_or(0),
            root: places.root_of(&dirs[j].path),
            depth: places.depth(&dirs[j].path),
        })
        .collect();
    options.keep.choose(&candidates).map(|i| eligible[i])
}

/// One step per file of `target` against the file at the same index of `kept`.
fn plan_copy(
    index: usize,
    kept: &DirCopy,
    target: &DirCopy,
    places: &Places,
    options: &PlanOptions,
    plan: &mut Plan,
    touched: &mut BTreeSet<PathBuf>,
) {
    let empties = matches!(options.action, Action::Remove | Action::Move { .. });
    if kept.files.len() != target.files.len() {
        let reason = SkipReason::ContentDiffers;
        plan.skipped.push(Skipped { path: target.path.clone(), reason });
        return;
    }
    for (k, t) in kept.files.iter().zip(&target.files) {
        if let Some(parent) = t.path.parent() {
            touched.insert(parent.to_path_buf());
        }
        let plan_file = |f: &dedup_report::ReportFile, meta| PlanFile {
            path: f.path.clone(),
            meta,
            root: places.root_of(&f.path),
            reference: places.is_reference(&f.path),
        };
        let kept_meta = match current(k, None, places.roots()) {
            Ok(meta) => meta,
            Err(reason) => {
                let reason = SkipReason::Kept(Box::new(reason));
                plan.skipped.push(Skipped { path: t.path.clone(), reason });
                continue;
            }
        };
        let target_meta = match current(t, Some(kept_meta.size), places.roots()) {
            Ok(meta) => meta,
            Err(reason) => {
                plan.skipped.push(Skipped { path: t.path.clone(), reason });
                continue;
            }
        };
        // Another name of the kept file: already one copy. Only emptying the directory needs it.
        if target_meta.id == kept_meta.id && !empties {
            continue;
        }
        let needs_same_fs = matches!(options.action, Action::Link | Action::Reflink);
        if needs_same_fs && target_meta.id.dev != kept_meta.id.dev {
            plan.skipped
                .push(Skipped { path: t.path.clone(), reason: SkipReason::OtherFileSystem });
            continue;
        }
        let dest = match &options.action {
            Action::Move { to } => match destination(to, &t.path, places) {
                Some(dest) => Some(dest),
                None => {
                    plan.skipped
                        .push(Skipped { path: t.path.clone(), reason: SkipReason::Vanished });
                    continue;
                }
            },
            _ => None,
        };
        let link_text = match &options.action {
            Action::Symlink => match places.resolve(&k.path) {
                Some(text) => Some(text),
                None => {
                    plan.skipped
                        .push(Skipped { path: k.path.clone(), reason: SkipReason::Vanished });
                    continue;
                }
            },
            _ => None,
        };
        plan.steps.push(Step {
            group: index,
            kept: plan_file(k, kept_meta),
            target: plan_file(t, target_meta),
            dest,
            link_text,
        });
    }
    if empties {
        plan.dir_removals.push(DirRemoval {
            group: index,
            dir: target.path.clone(),
            kept: kept.path.clone(),
        });
    }
}

/// Remove `dir` and the directories below it, which must all be empty by now. `dir` is reached
/// below its root and its tree walked from open directories, never through a symlink.
pub(crate) fn remove_empty_tree(dir: &Path, roots: &[PathBuf]) -> Result<(), SkipReason> {
    let entry = entry_below_root(dir, roots)?;
    remove_empty_at(&entry.dir, &entry.name)
}

/// The dry run's [`remove_empty_tree`]: `dir` would be empty once the files of `gone` are
/// gone (every other entry but directories keeps it, as it would in the real run).
pub(crate) fn would_remove_tree(
    dir: &Path,
    roots: &[PathBuf],
    gone: &HashSet<PathBuf>,
) -> Result<(), SkipReason> {
    let entry = entry_below_root(dir, roots)?;
    let fd = open_dir_at(&entry.dir, &entry.name).map_err(not_a_dir)?;
    only_these_below(&fd, dir, gone)
}

fn only_these_below(fd: &OwnedFd, path: &Path, gone: &HashSet<PathBuf>) -> Result<(), SkipReason> {
    for child in entry_names(fd)? {
        let child = OsStr::from_bytes(&child);
        let st = statat(fd, child, AtFlags::SYMLINK_NOFOLLOW).map_err(FsError::from)?;
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            let sub = open_dir_at(fd, child).map_err(not_a_dir)?;
            only_these_below(&sub, &path.join(child), gone)?;
        } else if !gone.contains(&path.join(child)) {
            return Err(SkipReason::NotEmpty);
        }
    }
    Ok(())
}

/// ELOOP, ENOTDIR: a symlink or a file stands where a directory was.
fn not_a_dir(e: FsError) -> SkipReason {
    let code = e.raw_os_error();
    if [Errno::LOOP, Errno::NOTDIR].iter().any(|errno| code == Some(errno.raw_os_error())) {
        SkipReason::NotRegular("not a directory")
    } else {
        SkipReason::from(e)
    }
}

/// Remove the empty tree at `name` in the open directory `parent`.
fn remove_empty_at(parent: &OwnedFd, name: &OsStr) -> Result<(), SkipReason> {
    let dir = open_dir_at(parent, name).map_err(not_a_dir)?;
    for child in entry_names(&dir)? {
        let child = OsStr::from_bytes(&child);
        let st = statat(&dir, child, AtFlags::SYMLINK_NOFOLLOW).map_err(FsError::from)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return Err(SkipReason::NotEmpty);
        }
        remove_empty_at(&dir, child)?;
    }
    drop(dir);
    unlinkat(parent, name, AtFlags::REMOVEDIR).map_err(|e| match e {
        Errno::NOTEMPTY => SkipReason::NotEmpty,
        e => SkipReason::from(FsError::from(e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn only_empty_trees_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("t");
        fs::create_dir_all(top.join("a/b")).unwrap();
        fs::create_dir_all(top.join("c")).unwrap();
        fs::write(top.join("c/file"), b"x").unwrap();
        let roots = [d.path().to_path_buf()];
        assert!(matches!(remove_empty_tree(&top, &roots), Err(SkipReason::NotEmpty)));
        assert!(top.join("c/file").exists());
        fs::remove_file(top.join("c/file")).unwrap();
        std::os::unix::fs::symlink("/", top.join("link")).unwrap();
        assert!(matches!(remove_empty_tree(&top, &roots), Err(SkipReason::NotEmpty)));
        fs::remove_file(top.join("link")).unwrap();
        // Reached through a symlinked directory, or outside the roots: left alone.
        std::os::unix::fs::symlink("t", d.path().join("alias")).unwrap();
        let through = d.path().join("alias/a");
        assert!(matches!(remove_empty_tree(&through, &roots), Err(SkipReason::SymlinkOnPath)));
        let outside = [top.join("c")];
        assert!(matches!(remove_empty_tree(&top, &outside), Err(SkipReason::OutsideRoots)));
        remove_empty_tree(&top, &roots).unwrap();
        assert!(!top.exists());
    }
}
