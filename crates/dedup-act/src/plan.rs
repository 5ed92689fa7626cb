//! The plan: for every group of a report, which file is kept and which steps act on the others.
//! Building it stats every path once more (a report may be old): a path that is no longer the
//! file the report describes is skipped now, with its reason, before anything is touched.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use dedup_core::{FileId, FileMeta};
use dedup_fs::{find_strays, is_temp_name, regular, Entry};
use dedup_report::{Report, ReportFile};

use crate::action::Action;
use crate::dir_plan::{plan_dirs, DirRemoval};
use crate::keep::{Candidate, KeepPolicy};
use crate::place::Places;
use crate::skip::SkipReason;

/// How to plan.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// What to do with duplicates.
    pub action: Action,
    /// Which file of a group to keep.
    pub keep: KeepPolicy,
    /// Only act on duplicates found under another root than the kept file.
    pub isolate: bool,
    /// Also act on the report's duplicated directories (`crate::dir_plan`).
    pub dirs: bool,
}

/// A file as the plan knows it: its path and the metadata it must still have when acted on.
#[derive(Debug, Clone)]
pub struct PlanFile {
    /// The path, as in the report.
    pub path: PathBuf,
    /// Identity, size, mtime and ctime expected at execution.
    pub meta: FileMeta,
    /// Index of the root argument it lies under.
    pub root: usize,
    /// True when it lies in a reference directory (never changed).
    pub reference: bool,
}

/// One change: `target` is acted on, `kept` stays.
#[derive(Debug, Clone)]
pub struct Step {
    /// Index of the group in the report.
    pub group: usize,
    /// The file that is kept.
    pub kept: PlanFile,
    /// The duplicate to act on.
    pub target: PlanFile,
    /// `move`: where the duplicate goes.
    pub dest: Option<PathBuf>,
    /// `symlink`: the text of the new symlink (the kept file's absolute path).
    pub link_text: Option<PathBuf>,
}

/// A path left out of the plan, and why.
#[derive(Debug)]
pub struct Skipped {
    /// The path.
    pub path: PathBuf,
    /// Why it is left alone.
    pub reason: SkipReason,
}

/// Everything an action will do, in order.
#[derive(Debug)]
pub struct Plan {
    /// The action.
    pub action: Action,
    /// Steps in report order.
    pub steps: Vec<Step>,
    /// Paths that cannot be acted on, found while planning.
    pub skipped: Vec<Skipped>,
    /// Temporary names left by an interrupted run, to clean up first.
    pub strays: Vec<PathBuf>,
    /// Groups left alone by design (all files in reference directories, or with `--isolate`
    /// all under one root).
    pub groups_left_alone: u64,
    /// Directories to remove after the steps, once their files are gone (`--dirs`).
    pub dir_removals: Vec<DirRemoval>,
}

/// A plan that cannot be made at all.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The destination of `move` lies inside a file it would receive (nonsense input).
    #[error("the destination directory {0} is not an absolute path")]
    RelativeDestination(PathBuf),
}

/// Make the plan for `report`.
pub fn build_plan(
    report: &Report,
    places: &Places,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    if let Action::Move { to } = &options.action {
        if !to.is_absolute() {
            return Err(PlanError::RelativeDestination(to.clone()));
        }
    }
    let mut plan = Plan {
        action: options.action.clone(),
        steps: Vec::new(),
        skipped: Vec::new(),
        strays: Vec::new(),
        groups_left_alone: 0,
        dir_removals: Vec::new(),
    };
    let mut dirs = BTreeSet::new();
    for (index, group) in report.groups.iter().enumerate() {
        let mut files = Vec::with_capacity(group.files.len());
        for file in &group.files {
            if let Some(parent) = file.path.parent() {
                dirs.insert(parent.to_path_buf());
            }
            if file.path.file_name().is_some_and(is_temp_name) {
                continue;
            }
            match current(file, Some(group.size)) {
                Ok(meta) => files.push(PlanFile {
                    path: file.path.clone(),
                    meta,
                    root: places.root_of(&file.path),
                    reference: places.is_reference(&file.path),
                }),
                Err(reason) => plan.skipped.push(Skipped { path: file.path.clone(), reason }),
            }
        }
        plan_group(index, files, places, options, &mut plan);
    }
    if options.dirs {
        dirs.extend(plan_dirs(report, places, options, &mut plan));
    }
    plan.strays = find_strays(dirs.iter().map(|d| {
        if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d.as_path()
        }
    }));
    Ok(plan)
}

fn plan_group(
    index: usize,
    files: Vec<PlanFile>,
    places: &Places,
    options: &PlanOptions,
    plan: &mut Plan,
) {
    let inodes: BTreeSet<FileId> = files.iter().map(|f| f.meta.id).collect();
    if inodes.len() < 2 {
        return;
    }
    let any_reference = files.iter().any(|f| f.reference);
    if files.iter().all(|f| f.reference) {
        plan.groups_left_alone += 1;
        return;
    }
    // The kept file comes from the reference directories whenever the group has one there.
    let eligible: Vec<&PlanFile> = files.iter().filter(|f| f.reference || !any_reference).collect();
    let candidates: Vec<Candidate<'_>> = eligible
        .iter()
        .map(|f| Candidate {
            path: &f.path,
            mtime_ns: f.meta.mtime_ns,
            root: f.root,
            depth: places.depth(&f.path),
        })
        .collect();
    let Some(kept) = options.keep.choose(&candidates).map(|i| eligible[i].clone()) else {
        return;
    };
    let link_text = match &options.action {
        Action::Symlink => match places.resolve(&kept.path) {
            Some(text) => Some(text),
            None => {
                plan.skipped
                    .push(Skipped { path: kept.path.clone(), reason: SkipReason::Vanished });
                return;
            }
        },
        _ => None,
    };
    let before = plan.steps.len();
    for target in files {
        if target.reference || target.meta.id == kept.meta.id {
            continue;
        }
        if options.isolate && target.root == kept.root {
            continue;
        }
        let needs_same_fs = matches!(options.action, Action::Link | Action::Reflink);
        if needs_same_fs && target.meta.id.dev != kept.meta.id.dev {
            plan.skipped.push(Skipped { path: target.path, reason: SkipReason::OtherFileSystem });
            continue;
        }
        let dest = match &options.action {
            Action::Move { to } => match destination(to, &target.path, places) {
                Some(dest) => Some(dest),
                None => {
                    let reason = SkipReason::Vanished;
                    plan.skipped.push(Skipped { path: target.path, reason });
                    continue;
                }
            },
            _ => None,
        };
        plan.steps.push(Step {
            group: index,
            kept: kept.clone(),
            target,
            dest,
            link_text: link_text.clone(),
        });
    }
    if plan.steps.len() == before && options.isolate {
        plan.groups_left_alone += 1;
    }
}

/// Where `move` puts `path`: under `to`, at the path as written (without a leading `/` or `./`),
/// or at its absolute path when it climbs with `..`. Distinct paths get distinct destinations.
pub(crate) fn destination(to: &Path, path: &Path, places: &Places) -> Option<PathBuf> {
    let climbs = path.components().any(|c| c == Component::ParentDir);
    let path = if climbs { places.resolve(path)? } else { path.to_path_buf() };
    let mut dest = to.to_path_buf();
    for c in path.components() {
        if let Component::Normal(name) = c {
            dest.push(name);
        }
    }
    Some(dest)
}

/// The file at `file.path` now, which must be the one the report describes (of `size` bytes,
/// when the report gives the size).
pub(crate) fn current(file: &ReportFile, size: Option<u64>) -> Result<FileMeta, SkipReason> {
    let meta = regular(&Entry::open(&file.path)?.lstat()?)?;
    if meta.id != (FileId { dev: file.dev, ino: file.ino }) {
        return Err(SkipReason::Replaced);
    }
    let ctime_ok = file.ctime_ns.is_none_or(|c| c == meta.ctime_ns);
    if size.is_some_and(|s| s != meta.size) || meta.mtime_ns != file.mtime_ns || !ctime_ok {
        return Err(SkipReason::Changed);
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_destinations_keep_the_path_below_the_directory() {
        let places = Places::new(&[], &[]).unwrap();
        let to = Path::new("/dups");
        let d = |p: &str| destination(to, Path::new(p), &places).unwrap();
        assert_eq!(d("photos/a.jpg"), Path::new("/dups/photos/a.jpg"));
        assert_eq!(d("./photos/a.jpg"), Path::new("/dups/photos/a.jpg"));
        assert_eq!(d("/home/u/a.jpg"), Path::new("/dups/home/u/a.jpg"));
        let climbing = d("../x");
        assert!(climbing.starts_with(to) && !climbing.to_string_lossy().contains(".."));
    }
}
