//! What `dedup sync` shows: one line per change (`--dry-run`, `-v`, `-i`) on stdout, in dedup's
//! words or as rsync's `--itemize-changes` prints it, one JSON line per change in the `--log`
//! file, problems on stderr, and the summary line.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Mutex;

use dedup_core::{Observer, Problem};
use dedup_scan::EntryKind;
use dedup_sync::{Change, ChangeKind, Events, Summary};
use indicatif::HumanBytes;
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

/// A change as rsync's `--itemize-changes` prints it: `YXcstpoguax PATH`, where Y is the kind
/// of change (`>` content written from SRC, `c` made here, `h` a hard link, `.` metadata only;
/// `*deleting` for a removal, `*backup` for an entry moved into the backups), X the kind of entry, and each further letter an attribute set
/// (`+` for all of them on a new entry); a directory's path ends with `/`, a symlink's is followed
/// by ` -> TARGET`, a hard link's by ` => OTHER`, a rename's, clone's or extent share's by
/// ` <- OLD`.
pub fn itemized(change: &Change) -> String {
    let item = &change.item;
    let mut name = quote_path(&change.path);
    if item.entry == Some(EntryKind::Dir) && !name.ends_with('/') {
        name.push('/');
    }
    let y = match change.kind {
        ChangeKind::Delete | ChangeKind::RemoveTemp => return format!("*deleting   {name}"),
        ChangeKind::Backup => return format!("*backup     {name}"),
        ChangeKind::Copy => '>',
        ChangeKind::Update => '.',
        ChangeKind::Link | ChangeKind::LinkDest => 'h',
        ChangeKind::Mkdir
        | ChangeKind::Symlink
        | ChangeKind::Special
        | ChangeKind::Clone
        | ChangeKind::Share
        | ChangeKind::Rename => 'c',
    };
    let x = match item.entry {
        Some(EntryKind::File) => 'f',
        Some(EntryKind::Dir) => 'd',
        Some(EntryKind::Symlink) => 'L',
        Some(EntryKind::CharDevice | EntryKind::BlockDevice) => 'D',
        Some(EntryKind::Fifo | EntryKind::Socket) => 'S',
        None => '?',
    };
    let attrs: String = if item.new {
        "+".repeat(9)
    } else {
        let d = &item.differs;
        let flags = [
            (d.content, 'c'),
            (d.size, 's'),
            (d.time, 't'),
            (d.perms, 'p'),
            (d.owner, 'o'),
            (d.group, 'g'),
            (false, 'u'),
            (false, 'a'),
            (d.xattrs, 'x'),
        ];
        flags.iter().map(|&(set, c)| if set { c } else { '.' }).collect()
    };
    let mut s = format!("{y}{x}{attrs} {name}");
    if let Some(target) = &item.target {
        s.push_str(" -> ");
        s.push_str(&quote_path(Path::new(OsStr::from_bytes(target))));
    }
    if let Some(from) = &change.from {
        let arrow = match change.kind {
            ChangeKind::Link | ChangeKind::LinkDest => " => ",
            _ => " <- ",
        };
        s.push_str(arrow);
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
            let text = if self.itemize { itemized(change) } else { line(change) };
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
    let mut more = String::new();
    if s.shared > 0 {
        more.push_str(&format!(", shared {}", s.shared));
    }
    if s.backed_up > 0 {
        more.push_str(&format!(", backed up {}", s.backed_up));
    }
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
        more,
        HumanBytes(s.bytes_copied),
        s.duration.as_secs_f64(),
        if s.unread > 0 { format!("; {} not read", s.unread) } else { String::new() },
        if s.failed > 0 { format!("; {} failed", s.failed) } else { String::new() },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_sync::change::{Differs, Item};
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
        let c = Change::new(
            ChangeKind::Rename,
            PathBuf::from("new/a"),
            Some(PathBuf::from("old/a\nx")),
            Item::default(),
        );
        assert_eq!(line(&c), "rename new/a <- \"old/a\\nx\"");
    }

    #[test]
    fn itemized_lines_read_as_rsync_prints_them() {
        let file = |new, differs| Item { entry: Some(EntryKind::File), new, differs, target: None };
        let c = |kind, path: &str, item| Change::new(kind, PathBuf::from(path), None, item);
        let new = c(ChangeKind::Copy, "a/b", file(true, Differs::default()));
        assert_eq!(itemized(&new), ">f+++++++++ a/b");
        let st = Differs { size: true, time: true, ..Differs::default() };
        assert_eq!(itemized(&c(ChangeKind::Copy, "f", file(false, st))), ">f.st...... f");
        let px = Differs { perms: true, xattrs: true, ..Differs::default() };
        assert_eq!(itemized(&c(ChangeKind::Update, "f", file(false, px))), ".f...p....x f");
        let dir = Item { entry: Some(EntryKind::Dir), new: true, ..Item::default() };
        assert_eq!(itemized(&c(ChangeKind::Mkdir, "d", dir.clone())), "cd+++++++++ d/");
        assert_eq!(itemized(&c(ChangeKind::Delete, ".", dir)), "*deleting   ./");
        let link = Item {
            entry: Some(EntryKind::Symlink),
            new: true,
            target: Some(b"../t".to_vec()),
            ..Item::default()
        };
        assert_eq!(itemized(&c(ChangeKind::Symlink, "l", link)), "cL+++++++++ l -> ../t");
        let mut hard = c(ChangeKind::Link, "b", file(true, Differs::default()));
        hard.from = Some(PathBuf::from("a"));
        assert_eq!(itemized(&hard), "hf+++++++++ b => a");
        hard.kind = ChangeKind::Rename;
        assert_eq!(itemized(&hard), "cf+++++++++ b <- a");
    }
}
