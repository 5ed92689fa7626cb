//! What `dedup sync` shows as it runs: one line per change (`--dry-run`, `-v`, `-i`) on stdout,
//! in dedup's words or as rsync's `--itemize-changes` prints it (dedup-sync formats both), one
//! JSON line per change in the `--log` file, and problems on stderr.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use dedup_core::{Observer, Problem};
use dedup_sync::{Change, Events};
use serde::Serialize;

use crate::messages::Messages;

/// Prints and logs changes, and passes problems on to the messages.
pub struct Render {
    /// Problems, drawn around the progress display.
    pub messages: Messages,
    /// Print each change on stdout.
    pub print: bool,
    /// Print it as rsync's `--itemize-changes` does.
    pub itemize: bool,
    /// The `--log` file.
    pub log: Option<Mutex<BufWriter<File>>>,
    /// stdout, locked per line.
    pub out: Mutex<()>,
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
            let _one = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let text = if self.itemize { change.itemized() } else { change.line() };
            match &self.messages.bar {
                Some(bar) => bar.suspend(|| println!("{text}")),
                None => println!("{text}"),
            }
        }
        if let Some(log) = &self.log {
            let record = Record {
                change: change.kind.name(),
                path: &change.path,
                from: change.from.as_deref().map(FromPath),
                bytes: change.bytes,
            };
            let mut w = log.lock().unwrap_or_else(|e| e.into_inner());
            let _ = serde_json::to_writer(&mut *w, &record);
            let _ = w.write_all(b"\n");
        }
    }
}
