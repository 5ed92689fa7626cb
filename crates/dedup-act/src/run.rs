//! One action over one report, from the plan to the summary: the notes a person should read
//! first, the plan written as a script or carried out (each change shown and logged as it is
//! made, each skip named), and the summary line. The caller supplies the report, the output and
//! the terminal; nothing here prints on its own.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use dedup_core::text::Count;
use dedup_core::Terminal;
use dedup_report::Report;

use crate::lines::{skipped_line, summary_line};
use crate::run_error::RunError;
use crate::show::{write_record, ShowSteps};
use crate::{
    build_plan, execute, write_script, Action, ExecOptions, LogRecord, Places, PlanOptions,
};

/// How to run an action over a report.
#[derive(Debug)]
pub struct RunOptions {
    /// What to do, and to which files.
    pub plan: PlanOptions,
    /// `--reference` directories: their files are kept, never acted on.
    pub reference: Vec<PathBuf>,
    /// Write the plan as a shell script headed with this tool name instead of carrying it out.
    pub script: Option<String>,
    /// Validate every step but change nothing.
    pub dry_run: bool,
    /// Show neither the changes nor the summary (skips and failures still).
    pub quiet: bool,
    /// Append a JSON line per step to this file.
    pub log: Option<PathBuf>,
}

/// Carry out (or write as a script) the action of `options` on `report`, changes shown on
/// `out`, skips, notes and the summary on `terminal`; `Ok(true)` when every planned change was
/// made (or scripted) and no temporary name was left behind.
pub fn run(
    report: &Report,
    options: &RunOptions,
    out: &mut dyn Write,
    terminal: &dyn Terminal,
) -> Result<bool, RunError> {
    let places = Places::new(&report.roots, &options.reference).map_err(RunError::Reference)?;
    let dir_count = report.dirs.as_ref().map_or(0, Vec::len);
    if !options.plan.dirs && dir_count > 0 {
        terminal.line(&format!(
            "dedup: note: the report lists {} duplicated directories; their files are acted on \
             only with --dirs",
            Count(dir_count as u64)
        ));
    }
    let plan = build_plan(report, &places, &options.plan)?;
    if let Some(tool) = &options.script {
        write_script(&plan, tool, out)?;
        out.flush().map_err(RunError::Stdout)?;
        return Ok(plan.skipped.is_empty());
    }
    let mut log = match &options.log {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| RunError::OpenLog(path.clone(), e))?,
        ),
        None => None,
    };
    let action = &options.plan.action;
    let verb = action.verb();
    for skipped in &plan.skipped {
        terminal.line(&skipped_line(&skipped.path, &skipped.reason));
        if let Some(log) = &mut log {
            write_record(log, &LogRecord::skipped_path(verb, &skipped.path, &skipped.reason))?;
        }
    }
    if *action == Action::Link && !plan.steps.is_empty() && !options.quiet {
        terminal.line(
            "dedup: note: hard-linked files share one inode: one owner, one set of permissions \
             and times (the kept file's); a change through one name shows through all",
        );
    }
    let dry_run = options.dry_run;
    let steps = ShowSteps::new(verb, (dry_run, options.quiet), out, log, terminal);
    let summary = execute(&plan, ExecOptions { dry_run }, &steps);
    let clean_failures = steps.finish()?;
    if !options.quiet {
        terminal.line(&summary_line(&plan, &summary, dry_run));
    }
    Ok(plan.skipped.is_empty() && summary.skipped == 0 && clean_failures == 0)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use dedup_core::KeptLines;
    use dedup_report::{Group, ReportFile, Summary, REPORT_VERSION};

    use super::*;
    use crate::KeepPolicy;

    /// Three equal files and the report of their group.
    fn three_copies(dir: &Path) -> Report {
        let files = (0..3)
            .map(|i| {
                let path = dir.join(format!("f{i}"));
                fs::write(&path, b"same").unwrap();
                let m = fs::metadata(&path).unwrap();
                ReportFile {
                    path,
                    dev: m.dev(),
                    ino: m.ino(),
                    mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                    ctime_ns: Some(m.ctime() * 1_000_000_000 + m.ctime_nsec()),
                }
            })
            .collect();
        Report {
            version: REPORT_VERSION,
            tool: "test".into(),
            roots: vec![dir.to_path_buf()],
            groups: vec![Group { size: 4, files, cached: false }],
            summary: Summary::default(),
            dirs: None,
            unique: None,
            dir_summary: None,
        }
    }

    fn options(action: Action, dry_run: bool, quiet: bool, log: Option<PathBuf>) -> RunOptions {
        let keep = KeepPolicy::new(&[], &[]).unwrap();
        RunOptions {
            plan: PlanOptions { action, keep, isolate: false, dirs: false, any_owner: false },
            reference: vec![],
            script: None,
            dry_run,
            quiet,
            log,
        }
    }

    #[test]
    fn a_dry_run_shows_and_logs_every_change_and_makes_none() {
        let tmp = tempfile::tempdir().unwrap();
        let report = three_copies(tmp.path());
        let log = tmp.path().join("log");
        let (mut out, terminal) = (Vec::new(), KeptLines::default());
        let options = options(Action::Remove, true, false, Some(log.clone()));
        assert!(run(&report, &options, &mut out, &terminal).unwrap());
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
        assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 2);
        let lines = terminal.err_lines();
        // What is freed counts the file system's blocks, whatever their size here.
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("dedup: remove (dry run): 2 files would be removed, "));
        assert!(lines[0].ends_with(" would be freed"), "{lines:?}");
        assert!((0..3).all(|i| tmp.path().join(format!("f{i}")).exists()));
    }

    #[test]
    fn a_quiet_link_shows_neither_changes_nor_notes_and_a_loud_one_notes_the_shared_inode() {
        let tmp = tempfile::tempdir().unwrap();
        let report = three_copies(tmp.path());
        let (mut out, terminal) = (Vec::new(), KeptLines::default());
        assert!(
            run(&report, &options(Action::Link, true, true, None), &mut out, &terminal).unwrap()
        );
        assert!(out.is_empty() && terminal.err_lines().is_empty());
        assert!(
            run(&report, &options(Action::Link, false, false, None), &mut out, &terminal).unwrap()
        );
        let lines = terminal.err_lines();
        assert!(
            lines[0].starts_with("dedup: note: hard-linked files share one inode"),
            "{lines:?}"
        );
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
        let inodes: Vec<u64> =
            (0..3).map(|i| fs::metadata(tmp.path().join(format!("f{i}"))).unwrap().ino()).collect();
        assert!(inodes.iter().all(|&ino| ino == inodes[0]), "{inodes:?}");
    }

    #[test]
    fn output_that_cannot_be_written_fails_the_run() {
        let tmp = tempfile::tempdir().unwrap();
        let report = three_copies(tmp.path());
        let mut full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let result = run(
            &report,
            &options(Action::Remove, true, false, None),
            &mut full,
            &KeptLines::default(),
        );
        assert!(matches!(result, Err(RunError::Output(_))), "{result:?}");
    }
}
