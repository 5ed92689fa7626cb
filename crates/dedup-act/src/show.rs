//! What an action shows and logs as it runs: one line per change on standard output (the same
//! in a dry run), each skip with its reason on the terminal, a JSON line per step in `--log`.
//! The first failure to write the output or the log stops the showing and fails the run.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use dedup_core::Terminal;

use crate::lines::{cleaned_line, not_cleaned_line, skipped_line};
use crate::run_error::RunError;
use crate::{DirRemoval, Done, LogRecord, SkipReason, Step, StepEvents};

/// Shows and logs each step as it ends.
pub(crate) struct ShowSteps<'a> {
    verb: &'static str,
    dry_run: bool,
    quiet: bool,
    out: RefCell<&'a mut dyn Write>,
    log: RefCell<Option<File>>,
    terminal: &'a dyn Terminal,
    /// The first failure to write output or log: the run stops reporting and fails.
    failed: RefCell<Option<RunError>>,
    clean_failures: RefCell<u64>,
}

impl<'a> ShowSteps<'a> {
    /// Show steps of `verb` on `out` (unless `quiet`) and append them to `log`.
    pub(crate) fn new(
        verb: &'static str,
        (dry_run, quiet): (bool, bool),
        out: &'a mut dyn Write,
        log: Option<File>,
        terminal: &'a dyn Terminal,
    ) -> Self {
        ShowSteps {
            verb,
            dry_run,
            quiet,
            out: RefCell::new(out),
            log: RefCell::new(log),
            terminal,
            failed: RefCell::new(None),
            clean_failures: RefCell::new(0),
        }
    }

    /// Flush what was shown; the number of temporary names that could not be removed, or the
    /// first failure to write the output or the log.
    pub(crate) fn finish(self) -> Result<u64, RunError> {
        self.out.into_inner().flush().map_err(RunError::Stdout)?;
        if let Some(err) = self.failed.into_inner() {
            return Err(err);
        }
        // What a file system reports only at `close` (NFS, SMB, FUSE) fails the log too.
        if let Some(log) = self.log.into_inner() {
            dedup_fs::flush(&log).map_err(|e| RunError::Log(e.into_io_error()))?;
        }
        Ok(self.clean_failures.into_inner())
    }

    fn print(&self, line: &str) {
        if self.quiet || self.failed.borrow().is_some() {
            return;
        }
        if let Err(e) = writeln!(self.out.borrow_mut(), "{line}") {
            *self.failed.borrow_mut() = Some(RunError::Output(e));
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

impl StepEvents for ShowSteps<'_> {
    fn cleaned(&self, path: &Path, result: &Result<(), SkipReason>) {
        match result {
            Ok(()) => self.print(&cleaned_line(path)),
            Err(reason) => {
                *self.clean_failures.borrow_mut() += 1;
                self.terminal.line(&not_cleaned_line(path, reason));
            }
        }
        if !self.dry_run {
            self.log(&LogRecord::cleaned(path, result));
        }
    }

    fn step(&self, step: &Step, result: &Result<Done, SkipReason>) {
        match result {
            Ok(_) => self.print(&step.line(self.verb)),
            Err(reason) => self.terminal.line(&skipped_line(&step.target.path, reason)),
        }
        self.log(&LogRecord::step(self.verb, step, result, self.dry_run));
    }

    fn dir_removed(&self, removal: &DirRemoval, result: &Result<(), SkipReason>) {
        match result {
            Ok(()) => self.print(&removal.line()),
            Err(reason) => self.terminal.line(&skipped_line(&removal.dir, reason)),
        }
        let record =
            LogRecord::dir_removed(self.verb, &removal.dir, &removal.kept, result, self.dry_run);
        self.log(&record);
    }
}

/// Append `record` to the log as one line.
pub(crate) fn write_record(log: &mut File, record: &LogRecord) -> Result<(), RunError> {
    let mut line = Vec::with_capacity(256);
    record.write_line(&mut line).map_err(RunError::Record)?;
    log.write_all(&line).map_err(RunError::Log)
}
