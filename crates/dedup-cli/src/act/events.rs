//! What an action shows and logs as it runs: one line per change on stdout (the same in a dry
//! run), each skip with its reason on stderr, a JSON line per step in `--log`, and the summary.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use dedup_act::{
    Action, DirRemoval, Done, ExecSummary, LogRecord, Plan, SkipReason, Step, StepEvents,
};
use indicatif::{HumanBytes, HumanCount};

use crate::messages::{count, quote_path, Messages};

/// Prints and logs each step as it ends.
pub struct Events<'a> {
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

impl<'a> Events<'a> {
    /// Show steps of `verb` on stdout (unless `quiet`) and append them to `log`.
    pub fn new(
        verb: &'static str,
        dry_run: bool,
        quiet: bool,
        log: Option<File>,
        messages: &'a Messages,
    ) -> Self {
        Events {
            verb,
            dry_run,
            quiet,
            out: RefCell::new(BufWriter::new(io::stdout().lock())),
            log: RefCell::new(log),
            messages,
            failed: RefCell::new(None),
            clean_failures: RefCell::new(0),
        }
    }

    /// Flush what was printed; the number of temporary names that could not be removed, or the
    /// first failure to write the output or the log.
    pub fn finish(self) -> Result<u64> {
        self.out.into_inner().flush().context("cannot write to standard output")?;
        match self.failed.into_inner() {
            Some(err) => Err(err),
            None => Ok(self.clean_failures.into_inner()),
        }
    }

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

pub fn write_record(log: &mut File, record: &LogRecord) -> Result<()> {
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

pub fn summary_line(plan: &Plan, s: &ExecSummary, dry_run: bool) -> String {
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
