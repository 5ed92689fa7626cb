//! The actions (`link`, `reflink`, `symlink`, `remove`, `move`): settings from arguments, the
//! report (scanned now or read with `--from`), the plan, and its execution or its rendering as a
//! dry run or a script. Prints one line per change on stdout, skips and the summary on stderr.

pub mod args;
mod events;

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use dedup_act::{
    build_plan, execute, skipped_line, summary_line, write_script, Action, ExecOptions, KeepPolicy,
    KeepRule, LogRecord, Places, PlanOptions,
};
use dedup_core::text::Count;
use dedup_core::Progress;
use dedup_find::{find, PHASES};
use dedup_report::Report;

use self::args::{ActArgs, KeepArg};
use self::events::{write_record, Events};
use crate::find::find_options;
use crate::messages::{quote_path, Messages};
use crate::progress::Display;

/// Which action a subcommand asked for (move carries its directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `dedup link`
    Link,
    /// `dedup reflink`
    Reflink,
    /// `dedup symlink`
    Symlink,
    /// `dedup remove`
    Remove,
    /// `dedup move`
    Move,
}

/// Run an action; `Ok(true)` when everything planned was done and the scan was complete.
pub fn run(kind: Kind, args: ActArgs, to: Option<PathBuf>) -> Result<bool> {
    let action = match kind {
        Kind::Link => Action::Link,
        Kind::Reflink => Action::Reflink,
        Kind::Symlink => Action::Symlink,
        Kind::Remove => Action::Remove,
        Kind::Move => {
            let to = to.context("move needs --to DIR")?;
            Action::Move { to: std::path::absolute(&to).context("cannot resolve --to")? }
        }
    };
    let keep = KeepPolicy::new(&rules(&args.keep), &args.prefer).context("bad --prefer glob")?;
    let messages = Messages { verbose: args.verbose, bar: None };
    let (report, scan_complete) = load_report(&args)?;
    let places = Places::new(&report.roots, &args.reference).context("bad --reference")?;
    let options =
        PlanOptions { action: action.clone(), keep, isolate: args.isolate, dirs: args.dirs };
    let dir_count = report.dirs.as_ref().map_or(0, Vec::len);
    if !args.dirs && dir_count > 0 {
        messages.line(&format!(
            "dedup: note: the report lists {} duplicated directories; their files are acted on \
             only with --dirs",
            Count(dir_count as u64)
        ));
    }
    let plan = build_plan(&report, &places, &options)?;

    if args.script {
        let mut out = BufWriter::new(io::stdout().lock());
        let tool = format!("dedup {}", env!("CARGO_PKG_VERSION"));
        write_script(&plan, &tool, &mut out)?;
        out.flush().context("cannot write to standard output")?;
        return Ok(scan_complete && plan.skipped.is_empty());
    }

    let mut log = match &args.log {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot write the log {}", quote_path(path)))?,
        ),
        None => None,
    };
    let verb = action.verb();
    for skipped in &plan.skipped {
        messages.line(&skipped_line(&skipped.path, &skipped.reason));
        if let Some(log) = &mut log {
            let step_like = LogRecord::skipped_path(verb, &skipped.path, &skipped.reason);
            write_record(log, &step_like)?;
        }
    }
    if action == Action::Link && !plan.steps.is_empty() && !args.quiet {
        messages.line(
            "dedup: note: hard-linked files share one inode: one owner, one set of permissions \
             and times (the kept file's); a change through one name shows through all",
        );
    }
    let events = Events::new(verb, args.dry_run, args.quiet, log, &messages);
    let summary = execute(&plan, ExecOptions { dry_run: args.dry_run }, &events);
    let clean_failures = events.finish()?;
    if !args.quiet {
        eprintln!("{}", summary_line(&plan, &summary, args.dry_run));
    }
    Ok(scan_complete && plan.skipped.is_empty() && summary.skipped == 0 && clean_failures == 0)
}

fn rules(keep: &[KeepArg]) -> Vec<KeepRule> {
    keep.iter()
        .map(|k| match k {
            KeepArg::Oldest => KeepRule::Oldest,
            KeepArg::Newest => KeepRule::Newest,
            KeepArg::Shallowest => KeepRule::Shallowest,
            KeepArg::Deepest => KeepRule::Deepest,
            KeepArg::FirstRoot => KeepRule::FirstRoot,
            KeepArg::PathPriority => KeepRule::PathPriority,
        })
        .collect()
}

/// The report to act on, and whether the scan behind it was complete.
fn load_report(args: &ActArgs) -> Result<(Report, bool)> {
    if let Some(from) = &args.from {
        let report = if from == Path::new("-") {
            let mut buf = Vec::new();
            io::stdin().read_to_end(&mut buf).context("cannot read the report from stdin")?;
            Report::from_json_slice(&buf).context("cannot use the report from stdin")?
        } else {
            let file = File::open(from)
                .with_context(|| format!("cannot open the report {}", quote_path(from)))?;
            Report::from_json(io::BufReader::new(file))
                .with_context(|| format!("cannot use the report {}", quote_path(from)))?
        };
        if args.dirs && report.dirs.is_none() {
            anyhow::bail!(
                "--dirs: the report has no \"dirs\" section; write it with `dedup find --dirs`"
            );
        }
        let complete = report.summary.errors == 0;
        return Ok((report, complete));
    }
    let mut roots =
        if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    for r in &args.reference {
        if !roots.contains(r) {
            roots.push(r.clone());
        }
    }
    let mut options = find_options(&args.select)?;
    options.analysis.dirs = args.dirs;
    let progress = Arc::new(Progress::new(PHASES));
    let display = Display::start(progress.clone(), args.quiet);
    let messages = Messages { verbose: args.verbose, bar: display.as_ref().map(Display::bar) };
    let report = find(&roots, &options, &messages, &progress);
    if let Some(display) = display {
        display.finish();
    }
    let complete = report.summary.errors == 0;
    Ok((report, complete))
}
