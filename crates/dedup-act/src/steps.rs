//! The plan's vocabulary, shared by the planning of files and the planning of directories:
//! the options, the steps, what was skipped, and the checks both make of a
//! path before it enters the plan.

use std::path::{Component, Path, PathBuf};

use dedup_core::{FileId, FileMeta};
use dedup_fs::regular;
use dedup_report::ReportFile;

use crate::action::Action;
use crate::anchor::entry_below_root;
use crate::keep::KeepPolicy;
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
    /// Also act on the report's duplicated directories.
    pub dirs: bool,
    /// `link`, `symlink`: also replace files whose owner, group or mode differ from the kept
    /// file's (they then take the kept file's); `remove`: also remove files of another user.
    pub any_owner: bool,
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
    /// The report's roots: every file is reached below one of them, never through a symlink.
    pub roots: Vec<PathBuf>,
    /// `link`, `symlink`, `remove`: files of another owner (or group or mode, for the links)
    /// than the kept file's are acted on too.
    pub any_owner: bool,
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

/// A directory to remove once its files are gone (`remove`, `move`).
#[derive(Debug, Clone)]
pub struct DirRemoval {
    /// Index of its entry: after the report's groups, in the order of the `dirs` section.
    pub group: usize,
    /// The directory.
    pub dir: PathBuf,
    /// The directory kept in its place.
    pub kept: PathBuf,
}

/// A plan that cannot be made at all.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The destination of `move` lies inside a file it would receive (nonsense input).
    #[error("the destination directory {0} is not an absolute path")]
    RelativeDestination(PathBuf),
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
pub(crate) fn current(
    file: &ReportFile,
    size: Option<u64>,
    roots: &[PathBuf],
) -> Result<FileMeta, SkipReason> {
    let meta = regular(&entry_below_root(&file.path, roots)?.lstat()?)?;
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
