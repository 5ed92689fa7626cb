//! Running a plan: clean up temporary names an interrupted run left, then for every step
//! validate the kept file and the duplicate again, compare their bytes, and make the change (or,
//! in a dry run, stop just before it). Metadata we change ourselves (a new link changes the kept
//! file's ctime) is tracked, so later steps of the same group still validate.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use dedup_core::{FileId, FileMeta};
use dedup_fs::{check_stray, open_expected_entry, remove_stray, same_content, Opened};

use crate::action::Action;
use crate::alias::may_be_one_file;
use crate::anchor::entry_below_root;
use crate::dest::{check_move, move_below};
use crate::dir_plan::{remove_empty_tree, would_remove_tree};
use crate::skip::SkipReason;
use crate::steps::DirRemoval;
use crate::steps::{Plan, Step};

/// How to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecOptions {
    /// Validate everything but change nothing.
    pub dry_run: bool,
}

/// What one step did (or, in a dry run, would do).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Done {
    /// Disk space freed: the allocation of a duplicate whose last link went away.
    pub freed_bytes: u64,
    /// Bytes that now share extents with the kept file (reflink).
    pub shared_bytes: u64,
}

/// Told about each step as it ends, so a caller can print and log as the run goes.
pub trait StepEvents {
    /// A stray temporary name was removed (or could not be).
    fn cleaned(&self, path: &Path, result: &Result<(), SkipReason>);
    /// A step ended.
    fn step(&self, step: &Step, result: &Result<Done, SkipReason>);
    /// A directory emptied by `--dirs` was removed (or would be, or could not be).
    fn dir_removed(&self, removal: &DirRemoval, result: &Result<(), SkipReason>) {
        let _ = (removal, result);
    }
}

/// Totals of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecSummary {
    /// Files changed (or that would be).
    pub changed: u64,
    /// Space freed.
    pub freed_bytes: u64,
    /// Bytes now sharing extents.
    pub shared_bytes: u64,
    /// Steps skipped at execution.
    pub skipped: u64,
    /// Directories removed (`--dirs`).
    pub dirs_removed: u64,
}

/// Run `plan`.
pub fn execute(plan: &Plan, options: ExecOptions, events: &dyn StepEvents) -> ExecSummary {
    let mut run = Run {
        action: &plan.action,
        roots: &plan.roots,
        any_owner: plan.any_owner,
        dry_run: options.dry_run,
        expected: HashMap::new(),
        links_left: HashMap::new(),
    };
    for stray in &plan.strays {
        let result = check_stray(stray).map_err(SkipReason::from).and_then(|entry| {
            if options.dry_run {
                return Ok(());
            }
            if let Some(meta) = remove_stray(&entry)? {
                run.expected.insert(meta.id, meta);
            }
            Ok(())
        });
        events.cleaned(stray, &result);
    }
    let mut summary = ExecSummary::default();
    // Dry run: the files the steps would take out of their directories, for `--dirs`.
    let mut gone = HashSet::new();
    let takes_out = matches!(plan.action, Action::Remove | Action::Move { .. });
    for step in &plan.steps {
        let result = run.step(step);
        match &result {
            Ok(done) => {
                if options.dry_run && takes_out {
                    gone.insert(step.target.path.clone());
                }
                summary.changed += 1;
                summary.freed_bytes += done.freed_bytes;
                summary.shared_bytes += done.shared_bytes;
            }
            Err(_) => summary.skipped += 1,
        }
        events.step(step, &result);
    }
    for removal in &plan.dir_removals {
        // A dry run changed nothing: the directory would be empty if the steps that passed
        // took out everything in it but directories.
        let result = if options.dry_run {
            would_remove_tree(&removal.dir, &plan.roots, &gone)
        } else {
            remove_empty_tree(&removal.dir, &plan.roots)
        };
        match &result {
            Ok(()) => summary.dirs_removed += 1,
            Err(_) => summary.skipped += 1,
        }
        events.dir_removed(removal, &result);
    }
    summary
}

/// Same owner, group and permission bits: a link to one is as good as the other to everyone.
fn same_owner(a: &rustix::fs::Stat, b: &rustix::fs::Stat) -> bool {
    (a.st_uid, a.st_gid, a.st_mode & 0o7777) == (b.st_uid, b.st_gid, b.st_mode & 0o7777)
}

/// State carried from step to step.
struct Run<'a> {
    action: &'a Action,
    roots: &'a [std::path::PathBuf],
    any_owner: bool,
    dry_run: bool,
    /// Metadata after our own changes, by file.
    expected: HashMap<FileId, FileMeta>,
    /// Dry run: links each duplicate would still have.
    links_left: HashMap<FileId, u64>,
}

impl Run<'_> {
    fn expect(&self, meta: &FileMeta) -> FileMeta {
        self.expected.get(&meta.id).copied().unwrap_or(*meta)
    }

    /// Open `path`, reached below its root, and check it is still the file `meta` describes.
    fn open(&self, path: &Path, meta: &FileMeta) -> Result<Opened, SkipReason> {
        let entry = entry_below_root(path, self.roots)?;
        Ok(open_expected_entry(entry, &self.expect(meta))?)
    }

    fn step(&mut self, step: &Step) -> Result<Done, SkipReason> {
        let mut kept = self
            .open(&step.kept.path, &step.kept.meta)
            .map_err(|r| SkipReason::Kept(Box::new(r)))?;
        let mut target = self.open(&step.target.path, &step.target.meta)?;
        let shares_inode = matches!(self.action, Action::Link | Action::Symlink);
        if shares_inode && !self.any_owner && !same_owner(&kept.stat, &target.stat) {
            return Err(SkipReason::OtherOwner);
        }
        let owners_differ = kept.stat.st_uid != target.stat.st_uid;
        if *self.action == Action::Remove && !self.any_owner && owners_differ {
            return Err(SkipReason::OtherUser);
        }
        let removes_data = matches!(self.action, Action::Remove | Action::Symlink);
        let pair = ((&kept.file, kept.stat.st_dev), (&target.file, target.stat.st_dev));
        if removes_data && may_be_one_file(pair.0, pair.1) {
            return Err(SkipReason::KeptMayBeThisFile);
        }
        let size = target.stat.st_size as u64;
        // Reflink: the kernel compares under lock; comparing here as well would read twice.
        let kernel_compares = *self.action == Action::Reflink && !self.dry_run;
        if !kernel_compares
            && !same_content(&kept.file, &target.file, size).map_err(SkipReason::Io)?
        {
            return Err(SkipReason::ContentDiffers);
        }
        if let (Action::Move { to }, Some(dest)) = (self.action, &step.dest) {
            check_move(&target, to, dest)?;
        }
        let allocated = target.allocated();
        if self.dry_run {
            return Ok(self.would(&target, allocated));
        }
        let result = self.change(step, &kept, &target, size);
        // Our own change moved ctime (link counts); later steps expect the new stamps.
        for opened in [&mut kept, &mut target] {
            if opened.refresh().is_ok() {
                self.expected.insert(opened.meta().id, opened.meta());
            }
        }
        let shared_bytes = result?;
        let gone = target.stat.st_nlink == 0 && *self.action != Action::Reflink;
        let moved = matches!(self.action, Action::Move { .. });
        Ok(Done { freed_bytes: if gone && !moved { allocated } else { 0 }, shared_bytes })
    }

    fn change(
        &self,
        step: &Step,
        kept: &Opened,
        target: &Opened,
        size: u64,
    ) -> Result<u64, SkipReason> {
        let done = match self.action {
            Action::Link => dedup_fs::replace_with_link(kept, target).map(|()| 0),
            Action::Symlink => {
                let text = step.link_text.as_deref().unwrap_or(&step.kept.path);
                dedup_fs::replace_with_symlink(text, target).map(|()| 0)
            }
            Action::Remove => dedup_fs::remove(target).map(|()| 0),
            Action::Move { to } => {
                let dest = step.dest.as_deref().unwrap_or(&step.target.path);
                return move_below(target, to, dest).map(|()| 0);
            }
            Action::Reflink => dedup_fs::dedupe_file(&kept.file, &target.file, size),
        };
        Ok(done?)
    }

    /// What a dry run reports for a validated step.
    fn would(&mut self, target: &Opened, allocated: u64) -> Done {
        match self.action {
            Action::Reflink => Done { freed_bytes: 0, shared_bytes: target.stat.st_size as u64 },
            Action::Move { .. } => Done::default(),
            _ => {
                let left = self.links_left.entry(target.meta().id).or_insert(target.stat.st_nlink);
                *left = left.saturating_sub(1);
                Done { freed_bytes: if *left == 0 { allocated } else { 0 }, shared_bytes: 0 }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keep::KeepPolicy;
    use crate::place::Places;
    use crate::plan::build_plan;
    use crate::steps::PlanOptions;
    use dedup_report::{Group, Report, ReportFile, Summary, REPORT_VERSION};
    use std::cell::RefCell;
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::path::PathBuf;

    #[derive(Default)]
    struct Record(RefCell<Vec<(PathBuf, Option<&'static str>)>>);

    impl StepEvents for Record {
        fn cleaned(&self, _: &Path, _: &Result<(), SkipReason>) {}
        fn step(&self, step: &Step, result: &Result<Done, SkipReason>) {
            let code = result.as_ref().err().map(SkipReason::code);
            self.0.borrow_mut().push((step.target.path.clone(), code));
        }
    }

    /// A report of one group made of `paths` as they are now (whatever their content).
    fn report(paths: &[PathBuf]) -> Report {
        let files = paths
            .iter()
            .map(|p| {
                let m = fs::metadata(p).unwrap();
                ReportFile {
                    path: p.clone(),
                    dev: m.dev(),
                    ino: m.ino(),
                    mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                    ctime_ns: Some(m.ctime() * 1_000_000_000 + m.ctime_nsec()),
                }
            })
            .collect();
        let size = fs::metadata(&paths[0]).unwrap().len();
        Report {
            version: REPORT_VERSION,
            tool: "test".into(),
            roots: vec![paths[0].parent().unwrap().to_path_buf()],
            groups: vec![Group { size, files, cached: false }],
            summary: Summary::default(),
            dirs: None,
            unique: None,
            dir_summary: None,
        }
    }

    fn plan_for(action: Action, paths: &[PathBuf]) -> Plan {
        let options = PlanOptions {
            action,
            keep: KeepPolicy::new(&[], &[]).unwrap(),
            isolate: false,
            dirs: false,
            any_owner: false,
        };
        let report = report(paths);
        build_plan(&report, &Places::new(&report.roots, &[]).unwrap(), &options).unwrap()
    }

    fn files(dir: &Path, contents: &[&[u8]]) -> Vec<PathBuf> {
        contents
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = dir.join(format!("f{i}"));
                fs::write(&p, c).unwrap();
                p
            })
            .collect()
    }

    fn run(plan: &Plan) -> Vec<(PathBuf, Option<&'static str>)> {
        let record = Record::default();
        execute(plan, ExecOptions::default(), &record);
        record.0.into_inner()
    }

    #[test]
    fn changes_after_planning_are_caught_at_execution() {
        for action in [Action::Link, Action::Remove, Action::Symlink] {
            let tmp = tempfile::tempdir().unwrap();
            let p = files(tmp.path(), &[b"same", b"same", b"same", b"same"]);
            let plan = plan_for(action.clone(), &p);
            assert_eq!(plan.steps.len(), 3);
            std::thread::sleep(std::time::Duration::from_millis(5));
            fs::write(&p[1], b"SAME").unwrap();
            fs::remove_file(&p[2]).unwrap();
            std::os::unix::fs::symlink(&p[0], &p[2]).unwrap();
            let got = run(&plan);
            assert_eq!(
                got,
                [
                    (p[1].clone(), Some("changed")),
                    (p[2].clone(), Some("not-regular")),
                    (p[3].clone(), None)
                ],
                "{action:?}"
            );
            assert_eq!(fs::read(&p[1]).unwrap(), b"SAME");
        }
    }

    #[test]
    fn a_kept_file_changed_after_planning_stops_its_group() {
        let tmp = tempfile::tempdir().unwrap();
        let p = files(tmp.path(), &[b"same", b"same"]);
        let plan = plan_for(Action::Remove, &p);
        fs::write(&p[0], b"gone").unwrap();
        assert_eq!(run(&plan), [(p[1].clone(), Some("kept-unusable"))]);
        assert_eq!(fs::read(&p[1]).unwrap(), b"same");
    }

    #[test]
    fn content_is_compared_even_when_stamps_match() {
        // A report claiming two different files are identical (edited, or a hash collision
        // upstream): their stamps are right, only the bytes can tell.
        let tmp = tempfile::tempdir().unwrap();
        let p = files(tmp.path(), &[b"aaaa", b"bbbb"]);
        for action in [Action::Link, Action::Remove, Action::Symlink] {
            let plan = plan_for(action, &p);
            assert_eq!(run(&plan), [(p[1].clone(), Some("content-differs"))]);
            assert_eq!(fs::read(&p[1]).unwrap(), b"bbbb");
        }
    }
}
