//! The log of a run (`--log FILE`): one JSON object per line for every change made and every
//! step skipped, written as the run goes, so it tells what happened even after a crash.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::Serialize;

use crate::execute::Done;
use crate::skip::SkipReason;
use crate::steps::Step;

/// A path in the report's convention: `{"text": …}` or `{"bytes": <base64>}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
enum JsonPath {
    Text(String),
    Bytes(String),
}

impl JsonPath {
    fn new(path: &Path) -> JsonPath {
        let bytes = path.as_os_str().as_bytes();
        match std::str::from_utf8(bytes) {
            Ok(text) => JsonPath::Text(text.to_owned()),
            Err(_) => JsonPath::Bytes(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, Serialize)]
pub struct LogRecord {
    time_ns: u128,
    action: &'static str,
    /// `done`, `skipped`, `would` (dry run), `cleaned` or `clean-failed`.
    result: &'static str,
    path: JsonPath,
    #[serde(skip_serializing_if = "Option::is_none")]
    kept: Option<JsonPath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dest: Option<JsonPath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    freed_bytes: u64,
    shared_bytes: u64,
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

impl LogRecord {
    /// The record of a step's outcome.
    pub fn step(
        action: &'static str,
        step: &Step,
        result: &Result<Done, SkipReason>,
        dry_run: bool,
    ) -> LogRecord {
        let dest = step.dest.as_deref().or(step.link_text.as_deref()).map(JsonPath::new);
        let (outcome, done, reason) = match result {
            Ok(done) => (if dry_run { "would" } else { "done" }, *done, None),
            Err(r) => ("skipped", Done::default(), Some(r)),
        };
        LogRecord {
            time_ns: now_ns(),
            action,
            result: outcome,
            path: JsonPath::new(&step.target.path),
            kept: Some(JsonPath::new(&step.kept.path)),
            dest,
            reason: reason.map(SkipReason::code),
            message: reason.map(ToString::to_string),
            freed_bytes: done.freed_bytes,
            shared_bytes: done.shared_bytes,
        }
    }

    /// The record of a path left out while planning.
    pub fn skipped_path(action: &'static str, path: &Path, reason: &SkipReason) -> LogRecord {
        LogRecord {
            time_ns: now_ns(),
            action,
            result: "skipped",
            path: JsonPath::new(path),
            kept: None,
            dest: None,
            reason: Some(reason.code()),
            message: Some(reason.to_string()),
            freed_bytes: 0,
            shared_bytes: 0,
        }
    }

    /// The record of a directory removed by `--dirs` (or left because it was not empty).
    pub fn dir_removed(
        action: &'static str,
        dir: &Path,
        kept: &Path,
        result: &Result<(), SkipReason>,
        dry_run: bool,
    ) -> LogRecord {
        let reason = result.as_ref().err();
        LogRecord {
            time_ns: now_ns(),
            action,
            result: match (reason, dry_run) {
                (Some(_), _) => "skipped",
                (None, true) => "would",
                (None, false) => "done",
            },
            path: JsonPath::new(dir),
            kept: Some(JsonPath::new(kept)),
            dest: None,
            reason: reason.map(SkipReason::code),
            message: reason.map(ToString::to_string),
            freed_bytes: 0,
            shared_bytes: 0,
        }
    }

    /// The record of a stray temporary name's clean-up.
    pub fn cleaned(path: &Path, result: &Result<(), SkipReason>) -> LogRecord {
        LogRecord {
            time_ns: now_ns(),
            action: "clean",
            result: if result.is_ok() { "cleaned" } else { "clean-failed" },
            path: JsonPath::new(path),
            kept: None,
            dest: None,
            reason: result.as_ref().err().map(SkipReason::code),
            message: result.as_ref().err().map(ToString::to_string),
            freed_bytes: 0,
            shared_bytes: 0,
        }
    }

    /// Write the record as one line.
    pub fn write_line(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.write_all(b"\n")
    }
}
