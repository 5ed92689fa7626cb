//! `--json` on `backup` and `restore`, as restic prints it for monitoring scripts: JSON lines on
//! stdout — `status` lines at a steady rate while the job runs, an `error` line for each entry
//! that could not be read or restored (also named on stderr as without `--json`), and one
//! `summary` line last. dedup-store's `text` words each record; this prints them, and the
//! job's other lines, without stopping the job when standard output fails.

use std::fmt::Display;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use dedup_core::{Observer, Problem, Severity};
use serde_json::Value;

use crate::messages::Messages;

/// The environment variable that sets the time between two status lines, in milliseconds
/// (default [`DEFAULT_INTERVAL`]; `0` prints none): for tests, and for scripts that want more
/// or fewer lines (restic's RESTIC_PROGRESS_FPS).
pub const INTERVAL_VARIABLE: &str = "DEDUP_JSON_STATUS_MS";

/// The time between two status lines unless [`INTERVAL_VARIABLE`] says otherwise.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// The time between two status lines; `None` when they are turned off.
pub fn status_interval() -> Option<Duration> {
    match std::env::var(INTERVAL_VARIABLE).ok().and_then(|v| v.trim().parse::<u64>().ok()) {
        Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
        None => Some(DEFAULT_INTERVAL),
    }
}

/// Standard output for the lines of a job that runs on: from any thread, each line whole. The
/// first line that cannot be written (a full disk, a closed pipe) stops the printing, not the
/// job; [`Out::result`] names it once the job is done.
#[derive(Default)]
pub struct Out {
    failed: Mutex<Option<io::Error>>,
}

impl Out {
    /// Prints `text` as one line, unless a line could not be written before.
    pub fn line(&self, text: impl Display) {
        let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        if failed.is_none() {
            *failed = writeln!(io::stdout().lock(), "{text}").err();
        }
    }

    /// The first line that could not be written, as an error.
    pub fn result(&self) -> anyhow::Result<()> {
        match self.failed.lock().unwrap_or_else(PoisonError::into_inner).take() {
            Some(err) => Err(anyhow::Error::new(err).context("cannot write to standard output")),
            None => Ok(()),
        }
    }
}

/// Calls `status` with the time elapsed and prints its line every `interval` until `finished`
/// (checked often, so that no status line follows the summary by long).
pub fn tick(
    interval: Duration,
    finished: &AtomicBool,
    out: &Out,
    status: impl Fn(Duration) -> Value,
) {
    let started = Instant::now();
    let mut next = interval;
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(interval));
        let elapsed = started.elapsed();
        if elapsed >= next && !finished.load(Ordering::Relaxed) {
            out.line(status(elapsed));
            next = elapsed + interval;
        }
    }
}

/// Problems as without `--json` (on stderr), and with it each error also as an `error` line.
pub struct JsonProblems {
    /// The stderr lines.
    pub messages: Messages,
    /// What the job was doing, for the `during` field (`archival`, `restore`).
    pub during: &'static str,
    /// Errors so far (restic's `error_count`).
    pub errors: AtomicU64,
    /// Standard output, for the `error` lines and the job's others.
    pub out: Out,
    /// Whether `--json` was given.
    pub json: bool,
}

impl JsonProblems {
    /// Problems of a job that is `during` (`archival`, `restore`), with `--json` or without.
    pub fn new(messages: Messages, during: &'static str, json: bool) -> JsonProblems {
        let (errors, out) = (AtomicU64::new(0), Out::default());
        JsonProblems { messages, during, errors, out, json }
    }
}

impl Observer for JsonProblems {
    fn problem(&self, problem: Problem) {
        if self.json && problem.severity == Severity::Error {
            self.errors.fetch_add(1, Ordering::Relaxed);
            self.out.line(dedup_store::text::error_record(&problem, self.during));
        }
        self.messages.problem(problem);
    }
}
