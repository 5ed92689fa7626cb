//! `--json` on `backup` and `restore`, as restic prints it for monitoring scripts: JSON lines on
//! stdout — `status` lines at a steady rate while the job runs, an `error` line for each entry
//! that could not be read or restored (also named on stderr as without `--json`), and one
//! `summary` line last — with restic's field names where the meaning is the same.

use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dedup_core::{Observer, Problem, Severity};
use serde_json::{json, Value};

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

/// Prints `value` as one line on stdout.
pub fn print(value: &Value) {
    println!("{value}");
}

/// Calls `status` with the time elapsed and prints its line every `interval` until `finished`
/// (checked often, so that no status line follows the summary by long).
pub fn tick(interval: Duration, finished: &AtomicBool, status: impl Fn(Duration) -> Value) {
    let started = Instant::now();
    let mut next = interval;
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(interval));
        let elapsed = started.elapsed();
        if elapsed >= next && !finished.load(Ordering::Relaxed) {
            print(&status(elapsed));
            next = elapsed + interval;
        }
    }
}

/// A path as restic writes an item: text (lossy where it is not UTF-8).
pub fn item(path: &std::path::Path) -> String {
    String::from_utf8_lossy(path.as_os_str().as_bytes()).into_owned()
}

/// The `error` line for `problem`, met while `during` (`archival`, `restore`).
pub fn error_line(problem: &Problem, during: &str) -> Value {
    json!({
        "message_type": "error",
        "error": { "message": problem.kind.to_string() },
        "during": during,
        "item": item(&problem.path),
    })
}

/// Problems as without `--json` (on stderr), and each error also as an `error` line.
pub struct JsonProblems {
    /// The stderr lines.
    pub messages: Messages,
    /// What the job was doing, for the `during` field.
    pub during: &'static str,
    /// Errors so far (restic's `error_count`).
    pub errors: AtomicU64,
}

impl JsonProblems {
    /// Problems of a job that is `during` (`archival`, `restore`).
    pub fn new(messages: Messages, during: &'static str) -> JsonProblems {
        JsonProblems { messages, during, errors: AtomicU64::new(0) }
    }
}

impl Observer for JsonProblems {
    fn problem(&self, problem: Problem) {
        if problem.severity == Severity::Error {
            self.errors.fetch_add(1, Ordering::Relaxed);
            print(&error_line(&problem, self.during));
        }
        self.messages.problem(problem);
    }
}

/// `part` of `total` as restic's `percent_done` (0 to 1), 0 while the total is unknown.
pub fn fraction(part: u64, total: Option<u64>) -> f64 {
    match total {
        Some(total) if total > 0 => (part as f64 / total as f64).min(1.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_core::ProblemKind;

    #[test]
    fn an_error_line_names_the_item_and_the_reason_as_restic_does() {
        let problem =
            Problem::error("/src/secret", ProblemKind::Io(std::io::Error::from_raw_os_error(13)));
        let line = error_line(&problem, "archival");
        assert_eq!(line["message_type"], "error");
        assert_eq!(line["item"], "/src/secret");
        assert_eq!(line["during"], "archival");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(message.contains("Permission denied"), "{message}");
    }

    #[test]
    fn the_fraction_done_is_zero_until_the_total_is_known_and_never_above_one() {
        assert_eq!(fraction(5, None), 0.0);
        assert_eq!(fraction(5, Some(0)), 0.0);
        assert_eq!(fraction(5, Some(20)), 0.25);
        assert_eq!(fraction(30, Some(20)), 1.0);
    }
}
