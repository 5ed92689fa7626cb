//! The actions (`link`, `reflink`, `symlink`, `remove`, `move`): the report (scanned now or read
//! with `--from`), then dedup-act runs the plan, or writes it as a script, showing one line per
//! change on stdout and skips and the summary on stderr.

use std::io::{self, BufWriter};

use anyhow::Result;
use clap::Args;
use dedup_act::args::ActArgs;
use dedup_act::Action;
use dedup_find::args::SelectArgs;
use dedup_report::Report;

use crate::find;
use crate::messages::Messages;

/// An action's command line: its own arguments (dedup-act's), then the selection of the scan it
/// runs unless `--from` (dedup-find's).
#[derive(Debug, Args)]
pub struct ActionArgs<A: Args> {
    /// The action's own arguments.
    #[command(flatten)]
    pub action: A,

    /// Which files take part, and how the tree is read (when scanning).
    #[command(flatten)]
    pub select: SelectArgs,
}

/// Run `action`; `Ok(true)` when everything planned was done and the scan was complete.
pub fn run(action: Action, args: &ActArgs, select: &SelectArgs) -> Result<bool> {
    let options = args.options(action)?;
    let report = load_report(args, select)?;
    let messages = Messages { verbose: args.verbose, bar: None };
    let mut out = BufWriter::new(io::stdout().lock());
    let done = dedup_act::run(&report, &options, &mut out, &messages)?;
    Ok(report.summary.errors == 0 && done)
}

/// The report to act on: read from `--from`, else scanned now.
fn load_report(args: &ActArgs, select: &SelectArgs) -> Result<Report> {
    if let Some(from) = &args.from {
        let report = dedup_report::load(from, &mut io::stdin().lock())?;
        if args.dirs && report.dirs.is_none() {
            anyhow::bail!(
                "--dirs: the report has no \"dirs\" section; write it with `dedup find --dirs`"
            );
        }
        return Ok(report);
    }
    let mut options = select.options()?;
    options.analysis.dirs = args.dirs;
    Ok(find::scan(&args.roots(), &options, (args.quiet, args.verbose), false).report)
}
