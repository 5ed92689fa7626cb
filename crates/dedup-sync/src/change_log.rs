//! The `--log` file of `dedup sync`: one JSON line per change (`{"change": "copy", "path":
//! {"text": "a/b"}, "from": …, "bytes": 12}`, paths as the report spells them so that any name
//! survives), written until the first write error, which is named once on the terminal and
//! makes the log incomplete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dedup_core::text::quote_path;
use dedup_core::Terminal;
use serde::Serialize;

use crate::Change;

/// The `--log` file.
pub struct ChangeLog {
    path: PathBuf,
    state: Mutex<LogState>,
}

struct LogState {
    out: BufWriter<File>,
    /// Set at the first write that failed; nothing is written after it.
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

impl ChangeLog {
    /// Create (or truncate) the log at `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        let out = BufWriter::new(File::create(path)?);
        Ok(ChangeLog { path: path.to_owned(), state: Mutex::new(LogState { out, failed: false }) })
    }

    /// Append the record of `change`; a failure is named on `terminal` (once).
    pub fn append(&self, change: &Change, terminal: &dyn Terminal) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.failed {
            return;
        }
        let record = Record {
            change: change.kind.name(),
            path: &change.path,
            from: change.from.as_deref().map(FromPath),
            bytes: change.bytes,
        };
        let mut line = serde_json::to_vec(&record).unwrap_or_default();
        line.push(b'\n');
        if let Err(err) = state.out.write_all(&line) {
            state.failed = true;
            self.report(&err, terminal);
        }
    }

    /// Write out what is buffered; false (the failure already named on `terminal`) when any
    /// part of the log could not be written.
    pub fn finish(&self, terminal: &dyn Terminal) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.failed {
            return false;
        }
        // A file system that reports a failed write-back only at `close` (NFS, SMB, FUSE) is
        // asked before the log is called written.
        let written = state.out.flush().and_then(|()| {
            dedup_fs::flush(state.out.get_ref()).map_err(dedup_fs::FsError::into_io_error)
        });
        match written {
            Ok(()) => true,
            Err(err) => {
                state.failed = true;
                self.report(&err, terminal);
                false
            }
        }
    }

    fn report(&self, err: &io::Error, terminal: &dyn Terminal) {
        let path = quote_path(&self.path);
        terminal.line(&format!("dedup: error: {path}: {err}; the log is incomplete"));
    }
}
