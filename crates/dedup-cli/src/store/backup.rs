//! `dedup store backup`: the options read, the library's backup run beside its progress line
//! or `--json` status records, the summary printed (dedup-store's `text` words them).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use dedup_store::args::{BackupArgs, CommonArgs};
use dedup_store::backup::{backup_stream, BackupProgress};
use dedup_store::commands::{backup_counted, backup_options, Expected};
use dedup_store::text;

use super::json_progress::{self, JsonProblems};
use crate::messages::Messages;

/// Run `dedup store backup`; `Ok(false)` when some entries could not be read.
pub fn run(common: &CommonArgs, args: BackupArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let options = backup_options(&repo, args.request(super::program()))?;
    let problems = JsonProblems::new(
        Messages { verbose: common.verbose > 0, bar: None },
        "archival",
        args.json,
    );
    let progress = BackupProgress::default();
    let started = Instant::now();
    let outcome = if args.stdin {
        let name = args.stdin_filename.clone().unwrap_or_default();
        backup_stream(&repo, &options, name.as_bytes(), &mut std::io::stdin().lock(), &progress)
    } else {
        let show = !common.quiet && !args.json && std::io::stderr().is_terminal();
        let json_status = if args.json { json_progress::status_interval() } else { None };
        let expected = Expected::before(&options);
        let finished = AtomicBool::new(false);
        std::thread::scope(|scope| {
            if show {
                scope.spawn(|| show_progress(&progress, &expected, &finished));
            }
            if let Some(interval) = json_status {
                let (progress, expected, options) = (&progress, &expected, &options);
                let errors = &problems.errors;
                let status = move |elapsed| {
                    let errors = errors.load(Ordering::Relaxed);
                    text::backup_status_record(progress, expected, options, errors, elapsed)
                };
                let (finished, out) = (&finished, &problems.out);
                scope.spawn(move || json_progress::tick(interval, finished, out, status));
            }
            let estimate = (&expected, show || json_status.is_some());
            backup_counted(&repo, &options, &problems, &progress, estimate, &finished)
        })
    };
    let outcome = outcome.with_context(|| {
        format!(
            "backup into {} failed, no snapshot written",
            common.location().unwrap_or_default().display()
        )
    })?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        problems.out.line(text::backup_summary_record(&outcome, args.dry_run, seconds));
    } else if !common.quiet {
        for line in text::backup_summary_lines(&outcome, seconds) {
            problems.out.line(line);
        }
    }
    problems.out.result()?;
    Ok(!outcome.snapshot.incomplete)
}

/// Redraws the progress line on stderr five times a second until `finished`.
fn show_progress(progress: &BackupProgress, expected: &Expected, finished: &AtomicBool) {
    let started = Instant::now();
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        eprint!("\r\x1b[K{}", text::backup_progress_line(progress, expected, started.elapsed()));
    }
    eprint!("\r\x1b[K");
}
