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
        "dedup sync{}: {} {} checked; {verb}copied {}, updated {}, created {}, linked {}, \
         renamed {}, deleted {}{}; {} copied in {:.3} s{}{}",
        if dry_run { " (dry run)" } else { "" },
        s.checked,
        if s.checked == 1 { "entry" } else { "entries" },
        s.copied,
        s.updated,
        s.created,
        s.linked,
        s.renamed,
        s.deleted,
        if s.shared > 0 { format!(", shared {}", s.shared) } else { String::new() },
        HumanBytes(s.bytes_copied),
        s.duration.as_secs_f64(),
        if s.unread > 0 { format!("; {} not read", s.unread) } else { String::new() },
        if s.failed > 0 { format!("; {} failed", s.failed) } else { String::new() },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_sync::ChangeKind;
    use std::path::PathBuf;

    #[test]
    fn the_summary_counts_in_words_that_agree_and_names_what_was_not_read() {
        let one = Summary { checked: 1, ..Summary::default() };
        assert!(summary(&one, false).contains(": 1 entry checked;"), "{}", summary(&one, false));
        let some = Summary { checked: 2, unread: 3, failed: 1, ..Summary::default() };
        let line = summary(&some, true);
        assert!(line.contains(": 2 entries checked;") && line.ends_with("; 3 not read; 1 failed"));
    }

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
