//! What `dedup sync` shows: one line per change (`--dry-run`, `-v`) on stdout, one JSON line per
//! change in the `--log` file, problems on stderr, and the summary line.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use dedup_core::{Observer, Problem};
use dedup_sync::{Change, Events, Summary};
use indicatif::HumanBytes;
use serde::Serialize;

use crate::messages::{quote_path, Messages};

/// Prints and logs changes, and passes problems on to the messages.
pub struct Render {
    /// Problems, drawn around the progress display.
    pub messages: Messages,
    /// Print each change on stdout.
    pub print: bool,
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

/// A change as one line: `copy a/b`, `rename new <- old`.
pub fn line(change: &Change) -> String {
    let mut s = format!("{} {}", change.kind.name(), quote_path(&change.path));
    if let Some(from) = &change.from {
        s.push_str(" <- ");
        s.push_str(&quote_path(from));
    }
    s
}

impl Observer for Render {
    fn problem(&self, problem: Problem) {
        self.messages.problem(problem);
    }
}

impl Events for Render {
    fn change(&self, change: &Change) {
        if self.print {
            let _one = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let text = line(change);
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

/// The summary line.
pub fn summary(s: &Summary, dry_run: bool) -> String {
    let verb = if dry_run { "would be " } else { "" };
    format!(
        "dedup sync{}: {} entries checked; {verb}copied {}, updated {}, created {}, linked {}, \
         renamed {}, deleted {}{}; {} copied in {:.3} s{}",
        if dry_run { " (dry run)" } else { "" },
        s.checked,
        s.copied,
        s.updated,
        s.created,
        s.linked,
        s.renamed,
        s.deleted,
        if s.shared > 0 { format!(", shared {}", s.shared) } else { String::new() },
        HumanBytes(s.bytes_copied),
        s.duration.as_secs_f64(),
        if s.failed > 0 { format!("; {} failed", s.failed) } else { String::new() },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_sync::ChangeKind;
    use std::path::PathBuf;

    #[test]
    fn a_change_reads_as_one_line_whatever_its_bytes() {
        let c = Change {
            kind: ChangeKind::Rename,
            path: PathBuf::from("new/a"),
            from: Some(PathBuf::from("old/a\nx")),
            bytes: 0,
        };
        assert_eq!(line(&c), "rename new/a <- \"old/a\\nx\"");
    }
}
