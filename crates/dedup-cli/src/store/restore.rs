//! `dedup store restore SNAPSHOT[:PATH] --target DIR`: the library's restore, its changes and
//! problems printed as they come (text or `--json` records), then its summary.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::Result;
use dedup_core::{Observer, Problem};
use dedup_store::args::{CommonArgs, RestoreArgs};
use dedup_store::commands::restore_snapshot;
use dedup_store::restore::{Change, Events, RestoreSummary};
use dedup_store::text;

use super::json_progress::{self, JsonProblems};
use crate::messages::Messages;

/// Prints changes on stdout and problems on stderr (with `--json`, as JSON lines on stdout too).
struct Render {
    problems: JsonProblems,
    quiet: bool,
    /// The counts after the last batch, for the status lines.
    so_far: Mutex<RestoreSummary>,
}

impl Observer for Render {
    fn problem(&self, problem: Problem) {
        self.problems.problem(problem);
    }
}

impl Events for Render {
    fn change(&self, change: &Change) {
        if self.quiet || !text::restore_change_shown(change, self.problems.messages.verbose) {
            return;
        }
        match self.problems.json {
            true => self.problems.out.line(text::restore_change_record(change)),
            false => self.problems.out.line(text::restore_line(change)),
        }
    }

    fn progress(&self, so_far: &RestoreSummary) {
        *self.so_far.lock().unwrap_or_else(PoisonError::into_inner) = *so_far;
    }
}

/// Run `dedup store restore`; `Ok(false)` when some entries could not be restored.
pub fn run(common: &CommonArgs, args: RestoreArgs) -> Result<bool> {
    let repo = Arc::new(super::open(common)?);
    let location = common.location()?;
    let mut request = args.request();
    // A repository on this machine is neither restored into nor removed by --delete.
    let local = (!dedup_store::backend::is_remote(&location)).then_some(location.as_path());
    request.repository = local;
    // Nor the file the password is read from: it may be the only copy of the key.
    let password_file = common.password_sources().file_named();
    request.password_file = password_file.as_deref();
    let render = Render {
        problems: JsonProblems::new(
            Messages { verbose: common.verbose > 0, bar: None },
            "restore",
            args.json,
        ),
        quiet: common.quiet,
        so_far: Mutex::new(RestoreSummary::default()),
    };
    let started = Instant::now();
    let json_status = if args.json { json_progress::status_interval() } else { None };
    let restored = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        if let Some(interval) = json_status {
            let (restored, render) = (&restored, &render);
            scope.spawn(move || {
                json_progress::tick(interval, restored, &render.problems.out, |elapsed| {
                    let so_far = *render.so_far.lock().unwrap_or_else(PoisonError::into_inner);
                    let errors = render.problems.errors.load(Ordering::Relaxed);
                    text::restore_status_record(&so_far, errors, elapsed)
                })
            });
        }
        let outcome = restore_snapshot(&repo, &request, &render, &restored);
        restored.store(true, Ordering::Relaxed);
        outcome
    })?;
    for problem in &outcome.problems {
        render.problems.messages.line(&format!("dedup: error: {problem}"));
    }
    let (id, s) = (&outcome.id, &outcome.summary);
    if args.json {
        let elapsed = started.elapsed();
        render.problems.out.line(text::restore_summary_record(id, args.dry_run, s, elapsed));
    } else if !common.quiet {
        let line = text::restore_summary_line(id, &args.target, args.dry_run, request.overwrite, s);
        render.problems.out.line(line);
    }
    render.problems.out.result()?;
    Ok(outcome.complete())
}
