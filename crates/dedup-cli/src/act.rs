//! The actions (`link`, `reflink`, `symlink`, `remove`, `move`): settings from arguments, the
//! report (scanned now or read with `--from`), the plan, and its execution or its rendering as a
//! dry run or a script. Prints one line per change on stdout, skips and the summary on stderr.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use dedup_act::{
    build_plan, execute, write_script, Action, DirRemoval, Done, ExecOptions, ExecSummary,
    KeepPolicy, KeepRule, LogRecord, Places, Plan, PlanOptions, SkipReason, Step, StepEvents,
};
use dedup_core::Progress;
use dedup_find::{find, PHASES};
use dedup_report::Report;
use indicatif::{HumanBytes, HumanCount};

use crate::args::{ActArgs, KeepArg};
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
            HumanCount(dir_count as u64)
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
        messages.line(&format!(
            "dedup: skipped: {}: {}",
            quote_path(&skipped.path),
            skipped.reason
        ));
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
    let events = Events {
        verb,
        dry_run: args.dry_run,
        quiet: args.quiet,
        out: RefCell::new(BufWriter::new(io::stdout().lock())),
        log: RefCell::new(log),
        messages: &messages,
        failed: RefCell::new(None),
        clean_failures: RefCell::new(0),
    };
    let summary = execute(&plan, ExecOptions { dry_run: args.dry_run }, &events);
    events.out.borrow_mut().flush().context("cannot write to standard output")?;
    if let Some(err) = events.failed.take() {
        return Err(err);
    }
    if !args.quiet {
        eprintln!("{}", summary_line(&plan, &summary, args.dry_run));
    }
    let clean_failures = *events.clean_failures.borrow();
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

/// Prints and logs each step as it ends.
struct Events<'a> {
    verb: &'static str,
    dry_run: bool,
    quiet: bool,
    out: RefCell<BufWriter<io::StdoutLock<'static>>>,
    log: RefCell<Option<File>>,
    messages: &'a Messages,
    /// The first failure to write output or log: the run stops reporting and fails.
    failed: RefCell<Option<anyhow::Error>>,
    clean_failures: RefCell<u64>,
}

impl Events<'_> {
    fn print(&self, line: &str) {
        if self.quiet || self.failed.borrow().is_some() {
            return;
        }
        if let Err(e) = writeln!(self.out.borrow_mut(), "{line}") {
            *self.failed.borrow_mut() = Some(anyhow::Error::new(e).context("cannot write output"));
        }
    }

    fn log(&self, record: &LogRecord) {
        if let Some(log) = self.log.borrow_mut().as_mut() {
            if let Err(e) = write_record(log, record) {
                self.failed.borrow_mut().get_or_insert(e);
            }
        }
    }
}

impl StepEvents for Events<'_> {
    fn cleaned(&self, path: &Path, result: &Result<(), SkipReason>) {
        match result {
            Ok(()) => self.print(&format!("clean {}", quote_path(path))),
            Err(reason) => {
                *self.clean_failures.borrow_mut() += 1;
                self.messages.line(&format!(
                    "dedup: warning: {}: temporary name not removed: {reason}",
                    quote_path(path)
                ));
            }
        }
        if !self.dry_run {
            self.log(&LogRecord::cleaned(path, result));
        }
    }

    fn step(&self, step: &Step, result: &Result<Done, SkipReason>) {
        match result {
            Ok(_) => self.print(&step_line(self.verb, step)),
            Err(reason) => self
                .messages
                .line(&format!("dedup: skipped: {}: {reason}", quote_path(&step.target.path))),
        }
        self.log(&LogRecord::step(self.verb, step, result, self.dry_run));
    }

    fn dir_removed(&self, removal: &DirRemoval, result: &Result<(), SkipReason>) {
        match result {
            Ok(()) => self.print(&format!(
                "rmdir {} (kept: {})",
                quote_path(&removal.dir),
                quote_path(&removal.kept)
            )),
            Err(reason) => self
                .messages
                .line(&format!("dedup: skipped: {}: {reason}", quote_path(&removal.dir))),
        }
        let record =
            LogRecord::dir_removed(self.verb, &removal.dir, &removal.kept, result, self.dry_run);
        self.log(&record);
    }
}

fn write_record(log: &mut File, record: &LogRecord) -> Result<()> {
    let mut line = Vec::with_capacity(256);
    record.write_line(&mut line)?;
    log.write_all(&line).context("cannot write the log")
}

/// The line printed for a step, identical in a dry run and a real run.
fn step_line(verb: &str, step: &Step) -> String {
    let target = quote_path(&step.target.path);
    let kept = quote_path(&step.kept.path);
    match (&step.dest, &step.link_text) {
        (Some(dest), _) => format!("{verb} {target} -> {} (kept: {kept})", quote_path(dest)),
        (None, Some(text)) => format!("{verb} {target} -> {}", quote_path(text)),
        (None, None) if verb == "remove" => format!("{verb} {target} (kept: {kept})"),
        (None, None) => format!("{verb} {target} => {kept}"),
    }
}

fn summary_line(plan: &Plan, s: &ExecSummary, dry_run: bool) -> String {
    let verb = plan.action.verb();
    let would = if dry_run { "would be " } else { "" };
    let done = match plan.action {
        Action::Link => "replaced by hard links",
        Action::Reflink => "deduplicated",
        Action::Symlink => "replaced by symlinks",
        Action::Remove => "removed",
        Action::Move { .. } => "moved",
    };
    let mut line = format!(
        "dedup: {verb}{}: {} {would}{done}",
        if dry_run { " (dry run)" } else { "" },
        count(s.changed, "file", "files")
    );
    if plan.action == Action::Reflink {
        line.push_str(&format!(
            ", {} {would}sharing extents with the kept files (space returns as far as no other \
             file or snapshot holds the old extents)",
            HumanBytes(s.shared_bytes)
        ));
    } else if !matches!(plan.action, Action::Move { .. }) {
        line.push_str(&format!(", {} {would}freed", HumanBytes(s.freed_bytes)));
    }
    if s.dirs_removed > 0 {
        line.push_str(&format!(
            ", {} {would}removed",
            count(s.dirs_removed, "directory", "directories")
        ));
    }
    let skipped = s.skipped + plan.skipped.len() as u64;
    if skipped > 0 {
        line.push_str(&format!("; {} skipped (see above)", HumanCount(skipped)));
    }
    if plan.groups_left_alone > 0 {
        line.push_str(&format!(
            "; {} left alone (reference-only or one root)",
            count(plan.groups_left_alone, "group", "groups")
        ));
    }
    line
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", HumanCount(n), if n == 1 { one } else { many })
}
