//! What `dedup sync` shows as it runs: one line per change (`--dry-run`, `-v`, `-i`) on stdout,
//! in dedup's words or as rsync's `--itemize-changes` prints it (dedup-sync formats both), one
//! JSON line per change in the `--log` file, and problems on stderr. A log or a standard output
//! that cannot be written is named with the reason, once, and makes the run incomplete (a user
//! who asked for a record of the changes must not take a short one for the whole), but never
//! stops the mirror half way; a closed pipe (`| head`) only ends the lines.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dedup_core::{Observer, Problem};
use dedup_sync::{Change, Events};
use serde::Serialize;

use crate::messages::{quote_path, Messages};

/// Prints and logs changes, and passes problems on to the messages.
pub struct Render {
    /// Problems, drawn around the progress display.
    pub messages: Messages,
    /// Print each change on stdout.
    pub print: bool,
    /// Print it as rsync's `--itemize-changes` does.
    pub itemize: bool,
    /// The `--log` file.
    pub log: Option<Log>,
    /// stdout, locked per line.
    pub out: Mutex<Stdout>,
}

/// What became of the change lines on stdout.
#[derive(Default)]
pub struct Stdout {
    /// A write failed or the reader went away: nothing more is printed.
    stopped: bool,
    /// A write failed for another reason than a closed pipe (named on stderr).
    failed: bool,
}

#[derive(Serialize)]
struct Record<'a> {
    change: &'static str,
    #[serde(with = "dedup_report::json_path")]
    path: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<FromPath<'a>>,
    bytes: u64,
}

#[derive(Serialize)]
struct FromPath<'a>(#[serde(with = "dedup_report::json_path")] &'a Path);

impl Observer for Render {
    fn problem(&self, problem: Problem) {
        self.messages.problem(problem);
    }
}

impl Events for Render {
    fn change(&self, change: &Change) {
        if self.print {
            let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
            if !out.stopped {
                let text = if self.itemize { change.itemized() } else { change.line() };
                let write = || writeln!(io::stdout().lock(), "{text}");
                let written = match &self.messages.bar {
                    Some(bar) => bar.suspend(write),
                    None => write(),
                };
                if let Err(err) = written {
                    out.stopped = true;
                    if err.kind() != io::ErrorKind::BrokenPipe {
                        out.failed = true;
                        let line = format!(
                            "dedup: error: standard output: {err}; the change lines are incomplete"
                        );
                        self.messages.line(&line);
                    }
                }
            }
        }
        if let Some(log) = &self.log {
            let record = Record {
                change: change.kind.name(),
                path: &change.path,
                from: change.from.as_deref().map(FromPath),
                bytes: change.bytes,
            };
            log.append(&record, &self.messages);
        }
    }
}

impl Render {
    /// Write out the log; false (the failure already named on stderr) when the log or the
    /// change lines on stdout could not be written whole.
    pub fn finish(&self) -> bool {
        let log_whole = self.log.as_ref().is_none_or(|log| log.finish(&self.messages));
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        log_whole && !out.failed
    }
}

/// The `--log` file: JSON lines written until the first write error, which is reported once.
pub struct Log {
    path: PathBuf,
    state: Mutex<LogState>,
}

struct LogState {
    out: BufWriter<File>,
    /// Set at the first write that failed; nothing is written after it.
    failed: bool,
}

impl Log {
    /// Create (or truncate) the log at `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        let out = BufWriter::new(File::create(path)?);
        Ok(Log { path: path.to_owned(), state: Mutex::new(LogState { out, failed: false }) })
    }

    fn append(&self, record: &Record<'_>, messages: &Messages) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.failed {
            return;
        }
        let mut line = serde_json::to_vec(record).unwrap_or_default();
        line.push(b'\n');
        if let Err(err) = state.out.write_all(&line) {
            state.failed = true;
            self.report(&err, messages);
        }
    }

    /// Write out what is buffered; false (the failure already named on stderr) when any part of
    /// the log could not be written.
    pub fn finish(&self, messages: &Messages) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.failed {
            return false;
        }
        match state.out.flush() {
            Ok(()) => true,
            Err(err) => {
                state.failed = true;
                self.report(&err, messages);
                false
            }
        }
    }

    fn report(&self, err: &io::Error, messages: &Messages) {
        let path = quote_path(&self.path);
        messages.line(&format!("dedup: error: {path}: {err}; the log is incomplete"));
    }
}
