//! The actions (`link`, `reflink`, `symlink`, `remove`, `move`): settings from arguments, the
//! report (scanned now or read with `--from`), then dedup-act runs the plan, or writes it as a
//! script, showing one line per change on stdout and skips and the summary on stderr.

pub mod args;

use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use dedup_act::{Action, KeepPolicy, KeepRule, PlanOptions, RunOptions};
use dedup_report::Report;

use self::args::{ActArgs, KeepArg};
use crate::find::{self, find_options};
use crate::messages::Messages;

/// `dedup move --to DIR`: the action, its directory made absolute.
pub fn move_to(to: &Path) -> Result<Action> {
    Ok(Action::Move { to: std::path::absolute(to).context("cannot resolve --to")? })
}

/// Run `action`; `Ok(true)` when everything planned was done and the scan was complete.
pub fn run(action: Action, args: ActArgs) -> Result<bool> {
    let keep = KeepPolicy::new(&rules(&args.keep), &args.prefer).context("bad --prefer glob")?;
    let (report, scan_complete) = load_report(&args)?;
    let options = RunOptions {
        plan: PlanOptions { action, keep, isolate: args.isolate, dirs: args.dirs },
        reference: args.reference.clone(),
        script: args.script.then(|| format!("dedup {}", env!("CARGO_PKG_VERSION"))),
        dry_run: args.dry_run,
        quiet: args.quiet,
        log: args.log.clone(),
    };
    let messages = Messages { verbose: args.verbose, bar: None };
    let mut out = BufWriter::new(io::stdout().lock());
    let done = dedup_act::run(&report, &options, &mut out, &messages)?;
    Ok(scan_complete && done)
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
    let report = if let Some(from) = &args.from {
        let report = dedup_report::load(from, &mut io::stdin().lock())?;
        if args.dirs && report.dirs.is_none() {
            anyhow::bail!(
                "--dirs: the report has no \"dirs\" section; write it with `dedup find --dirs`"
            );
        }
        report
    } else {
        let mut roots =
            if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
        for r in &args.reference {
            if !roots.contains(r) {
                roots.push(r.clone());
            }
        }
        let mut options = find_options(&args.select)?;
        options.analysis.dirs = args.dirs;
        find::scan(&roots, &options, (args.quiet, args.verbose), false).report
    };
    let complete = report.summary.errors == 0;
    Ok((report, complete))
}
