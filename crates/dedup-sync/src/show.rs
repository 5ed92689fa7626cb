//! What `dedup sync` shows as it runs: one line per change (`--dry-run`, `-v`, `-i`) on the
//! terminal's standard output, in dedup's words or as rsync's `--itemize-changes` prints it, one
//! JSON line per change in the `--log` file ([`ChangeLog`]), and problems passed on. A log or a
//! standard output that cannot be written is named with the reason, once, and makes the run
//! incomplete (a user who asked for a record of the changes must not take a short one for the
//! whole), but never stops the mirror half way; a closed pipe (`| head`) only ends the lines.

use std::io;
use std::sync::Mutex;

use dedup_core::{Observer, Problem, Terminal};

use crate::change_log::ChangeLog;
use crate::{Change, Events};

/// Shows and logs changes, and passes problems on to the terminal.
pub struct Show<'a> {
    terminal: &'a dyn Terminal,
    print: bool,
    itemize: bool,
    log: Option<ChangeLog>,
    out: Mutex<Output>,
}

/// What became of the change lines on standard output.
#[derive(Default)]
struct Output {
    /// A write failed or the reader went away: nothing more is printed.
    stopped: bool,
    /// A write failed for another reason than a closed pipe (named on the terminal).
    failed: bool,
}

impl<'a> Show<'a> {
    /// Print each change when `print` (as rsync's `--itemize-changes` does with `itemize`) and
    /// append it to `log`.
    pub fn new(
        terminal: &'a dyn Terminal,
        print: bool,
        itemize: bool,
        log: Option<ChangeLog>,
    ) -> Self {
        Show { terminal, print, itemize, log, out: Mutex::default() }
    }

    /// Write out the log; false (the failure already named) when the log or the change lines
    /// could not be written whole.
    pub fn finish(&self) -> bool {
        let log_whole = self.log.as_ref().is_none_or(|log| log.finish(self.terminal));
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        log_whole && !out.failed
    }

    fn print(&self, change: &Change) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if out.stopped {
            return;
        }
        let text = if self.itemize { change.itemized() } else { change.line() };
        if let Err(err) = self.terminal.out(&text) {
            out.stopped = true;
            if err.kind() != io::ErrorKind::BrokenPipe {
                out.failed = true;
                let line = format!(
                    "dedup: error: standard output: {err}; the change lines are incomplete"
                );
                self.terminal.line(&line);
            }
        }
    }
}

impl Observer for Show<'_> {
    fn problem(&self, problem: Problem) {
        self.terminal.problem(problem);
    }
}

impl Events for Show<'_> {
    fn change(&self, change: &Change) {
        if self.print {
            self.print(change);
        }
        if let Some(log) = &self.log {
            log.append(change, self.terminal);
        }
    }
}
