//! A sync's changes and summary as the lines the user reads: one line per change in dedup's
//! words (`copy a/b`, `rename new <- old`) or as rsync's `--itemize-changes` prints it, and the
//! summary line. The binary prints them; this crate only formats.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_core::text::{quote_path, Bytes};
use dedup_scan::EntryKind;

use crate::change::{Change, ChangeKind};
use crate::summary::Summary;

impl Change {
    /// The change as one line: `copy a/b`, `rename new <- old`.
    pub fn line(&self) -> String {
        let mut s = format!("{} {}", self.kind.name(), quote_path(&self.path));
        if let Some(from) = &self.from {
            s.push_str(" <- ");
            s.push_str(&quote_path(from));
        }
        s
    }

    /// The change as rsync's `--itemize-changes` prints it: `YXcstpoguax PATH`, where Y is the
    /// kind of change (`>` content written from SRC, `c` made here, `h` a hard link, `.`
    /// metadata only; `*deleting` for a removal, `*backup` for an entry moved into the
    /// backups), X the kind of entry, and each further letter an attribute set (`+` for all of
    /// them on a new entry); a directory's path ends with `/`, a symlink's is followed by
    /// ` -> TARGET`, a hard link's by ` => OTHER`, a rename's, clone's or extent share's by
    /// ` <- OLD`.
    pub fn itemized(&self) -> String {
        let item = &self.item;
        let mut name = quote_path(&self.path);
        if item.entry == Some(EntryKind::Dir) && !name.ends_with('/') {
            name.push('/');
        }
        let y = match self.kind {
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
        if let Some(from) = &self.from {
            let arrow = match self.kind {
                ChangeKind::Link | ChangeKind::LinkDest => " => ",
                _ => " <- ",
            };
            s.push_str(arrow);
            s.push_str(&quote_path(from));
        }
        s
    }
}

impl Summary {
    /// The summary line (`dry_run`: what would be done).
    pub fn line(&self, dry_run: bool) -> String {
        let verb = if dry_run { "would be " } else { "" };
        let mut more = String::new();
        if self.shared > 0 {
            more.push_str(&format!(", shared {}", self.shared));
        }
        if self.backed_up > 0 {
            more.push_str(&format!(", backed up {}", self.backed_up));
        }
        format!(
            "dedup sync{}: {} {} checked; {verb}copied {}, updated {}, created {}, linked {}, \
             renamed {}, deleted {}{}; {} copied in {:.3} s{}{}",
            if dry_run { " (dry run)" } else { "" },
            self.checked,
            if self.checked == 1 { "entry" } else { "entries" },
            self.copied,
            self.updated,
            self.created,
            self.linked,
            self.renamed,
            self.deleted,
            more,
            Bytes(self.bytes_copied),
            self.duration.as_secs_f64(),
            if self.unread > 0 { format!("; {} not read", self.unread) } else { String::new() },
            if self.failed > 0 { format!("; {} failed", self.failed) } else { String::new() },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::{Differs, Item};
    use std::path::PathBuf;
    use std::time::Duration;

    #[test]
    fn the_summary_counts_in_words_that_agree_and_names_what_was_not_read() {
        let one = Summary { checked: 1, ..Summary::default() };
        assert!(one.line(false).contains(": 1 entry checked;"), "{}", one.line(false));
        let some = Summary { checked: 2, unread: 3, failed: 1, ..Summary::default() };
        let line = some.line(true);
        assert!(line.contains(": 2 entries checked;") && line.ends_with("; 3 not read; 1 failed"));
    }

    #[test]
    fn the_summary_reads_whole_as_before() {
        let s = Summary {
            checked: 12,
            copied: 3,
            updated: 1,
            created: 2,
            linked: 1,
            renamed: 1,
            shared: 2,
            deleted: 4,
            backed_up: 1,
            bytes_copied: 1536,
            duration: Duration::from_millis(1250),
            ..Summary::default()
        };
        assert_eq!(
            s.line(true),
            "dedup sync (dry run): 12 entries checked; would be copied 3, updated 1, created 2, \
             linked 1, renamed 1, deleted 4, shared 2, backed up 1; 1.50 KiB copied in 1.250 s"
        );
    }

    #[test]
    fn a_change_reads_as_one_line_whatever_its_bytes() {
        let c = Change::new(
            ChangeKind::Rename,
            PathBuf::from("new/a"),
            Some(PathBuf::from("old/a\nx")),
            Item::default(),
        );
        assert_eq!(c.line(), "rename new/a <- \"old/a\\nx\"");
    }

    #[test]
    fn itemized_lines_read_as_rsync_prints_them() {
        let file = |new, differs| Item { entry: Some(EntryKind::File), new, differs, target: None };
        let c = |kind, path: &str, item| Change::new(kind, PathBuf::from(path), None, item);
        let new = c(ChangeKind::Copy, "a/b", file(true, Differs::default()));
        assert_eq!(new.itemized(), ">f+++++++++ a/b");
        let st = Differs { size: true, time: true, ..Differs::default() };
        assert_eq!(c(ChangeKind::Copy, "f", file(false, st)).itemized(), ">f.st...... f");
        let px = Differs { perms: true, xattrs: true, ..Differs::default() };
        assert_eq!(c(ChangeKind::Update, "f", file(false, px)).itemized(), ".f...p....x f");
        let dir = Item { entry: Some(EntryKind::Dir), new: true, ..Item::default() };
        assert_eq!(c(ChangeKind::Mkdir, "d", dir.clone()).itemized(), "cd+++++++++ d/");
        assert_eq!(c(ChangeKind::Delete, ".", dir).itemized(), "*deleting   ./");
        let link = Item {
            entry: Some(EntryKind::Symlink),
            new: true,
            target: Some(b"../t".to_vec()),
            ..Item::default()
        };
        assert_eq!(c(ChangeKind::Symlink, "l", link).itemized(), "cL+++++++++ l -> ../t");
        let mut hard = c(ChangeKind::Link, "b", file(true, Differs::default()));
        hard.from = Some(PathBuf::from("a"));
        assert_eq!(hard.itemized(), "hf+++++++++ b => a");
        hard.kind = ChangeKind::Rename;
        assert_eq!(hard.itemized(), "cf+++++++++ b <- a");
    }
}
