//! What an action shows and logs as it runs: one line per change on stdout (the same in a dry
//! run), each skip with its reason on stderr, a JSON line per step in `--log`. dedup-act
//! formats the lines and the records; this file prints and writes them.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use dedup_act::{
    cleaned_line, not_cleaned_line, skipped_line, DirRemoval, Done, LogRecord, SkipReason, Step,
    StepEvents,
};

use crate::messages::Messages;

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
            Ok(()) => self.print(&cleaned_line(path)),
            Err(reason) => {
                *self.clean_failures.borrow_mut() += 1;
                self.messages.line(&not_cleaned_line(path, reason));
            }
        }
        if !self.dry_run {
            self.log(&LogRecord::cleaned(path, result));
        }
    }

    fn step(&self, step: &Step, result: &Result<Done, SkipReason>) {
        match result {
            Ok(_) => self.print(&step.line(self.verb)),
            Err(reason) => self.messages.line(&skipped_line(&step.target.path, reason)),
        }
        self.log(&LogRecord::step(self.verb, step, result, self.dry_run));
    }

    fn dir_removed(&self, removal: &DirRemoval, result: &Result<(), SkipReason>) {
        match result {
            Ok(()) => self.print(&removal.line()),
            Err(reason) => self.messages.line(&skipped_line(&removal.dir, reason)),
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
