//! Where a running job's own lines go. A job that shows each change as it makes it (an action, a
//! mirror) or has a note for the person running it hands the line to a [`Terminal`] instead of
//! printing: the binary decides where it goes and draws it around its progress display.

use std::io;
use std::sync::Mutex;

use crate::{Observer, Problem};

/// Takes a running job's lines (and, as an [`Observer`], its problems), from any thread.
pub trait Terminal: Observer {
    /// One line for standard error: a note, a skip, a failure to write the output.
    fn line(&self, text: &str);

    /// One line for standard output; the error when it could not be written (a closed pipe, a
    /// full disk).
    fn out(&self, text: &str) -> io::Result<()>;
}

/// A terminal that keeps every line instead of showing it, standard output's apart from
/// standard error's (problems as [`Problem::line`] words them, notes included): for callers
/// that want a job's lines as values, and for tests.
#[derive(Debug, Default)]
pub struct KeptLines {
    /// The lines for standard output.
    pub out: Mutex<Vec<String>>,
    /// The lines for standard error.
    pub err: Mutex<Vec<String>>,
}

impl KeptLines {
    /// The lines kept for standard error so far.
    pub fn err_lines(&self) -> Vec<String> {
        self.err.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Observer for KeptLines {
    fn problem(&self, problem: Problem) {
        if let Some(line) = problem.line(true) {
            Terminal::line(self, &line);
        }
    }
}

impl Terminal for KeptLines {
    fn line(&self, text: &str) {
        self.err.lock().unwrap_or_else(|e| e.into_inner()).push(text.to_owned());
    }

    fn out(&self, text: &str) -> io::Result<()> {
        self.out.lock().unwrap_or_else(|e| e.into_inner()).push(text.to_owned());
        Ok(())
    }
}
