//! An action's steps and summary as the lines the user reads: one line per change on stdout
//! (the same in a dry run and a real run), one per skip with its reason on stderr, and the
//! summary line. The binary prints them; this crate only formats.

use std::path::Path;

use dedup_core::text::{count, quote_path, Bytes, Count};

use crate::action::Action;
use crate::execute::ExecSummary;
use crate::skip::SkipReason;
use crate::steps::{DirRemoval, Plan, Step};

impl Step {
    /// The line printed for a step done by `verb`, identical in a dry run and a real run.
    pub fn line(&self, verb: &str) -> String {
        let target = quote_path(&self.target.path);
        let kept = quote_path(&self.kept.path);
        match (&self.dest, &self.link_text) {
            (Some(dest), _) => format!("{verb} {target} -> {} (kept: {kept})", quote_path(dest)),
            (None, Some(text)) => format!("{verb} {target} -> {}", quote_path(text)),
            (None, None) if verb == "remove" => format!("{verb} {target} (kept: {kept})"),
            (None, None) => format!("{verb} {target} => {kept}"),
        }
    }
}

impl DirRemoval {
    /// The line printed for a directory removed (`--dirs`).
    pub fn line(&self) -> String {
        format!("rmdir {} (kept: {})", quote_path(&self.dir), quote_path(&self.kept))
    }
}

/// The line printed for a temporary name of an interrupted run removed.
pub fn cleaned_line(path: &Path) -> String {
    format!("clean {}", quote_path(path))
}

/// The warning for a temporary name that could not be removed.
pub fn not_cleaned_line(path: &Path, reason: &SkipReason) -> String {
    format!("dedup: warning: {}: temporary name not removed: {reason}", quote_path(path))
}

/// The line for a step or directory skipped, naming it and the reason.
pub fn skipped_line(path: &Path, reason: &SkipReason) -> String {
    format!("dedup: skipped: {}: {reason}", quote_path(path))
}

/// The summary line of a run of `plan` (`dry_run`: what would be done).
pub fn summary_line(plan: &Plan, s: &ExecSummary, dry_run: bool) -> String {
    let verb = plan.action.verb();
    let would = if dry_run { "would be " } else { "" };
    let done = match plan.action {
        Action::Link => "replaced by hard links",
        Action::Reflink => "deduplicated",
        Action::Symlink => "replaced by symlinks",
        Action::Remove => "removed",
        Action::Move { .. } => "moved",
    };
    let mut line = format!(
        "dedup: {verb}{}: {} {would}{done}",
        if dry_run { " (dry run)" } else { "" },
        count(s.changed, "file", "files")
    );
    if plan.action == Action::Reflink {
        line.push_str(&format!(
            ", {} {would}sharing extents with the kept files (space returns as far as no other \
             file or snapshot holds the old extents)",
            Bytes(s.shared_bytes)
        ));
    } else if !matches!(plan.action, Action::Move { .. }) {
        line.push_str(&format!(", {} {would}freed", Bytes(s.freed_bytes)));
    }
    if s.dirs_removed > 0 {
        line.push_str(&format!(
            ", {} {would}removed",
            count(s.dirs_removed, "directory", "directories")
        ));
    }
    let skipped = s.skipped + plan.skipped.len() as u64;
    if skipped > 0 {
        line.push_str(&format!("; {} skipped (see above)", Count(skipped)));
    }
    if plan.groups_left_alone > 0 {
        line.push_str(&format!(
            "; {} left alone (reference-only or one root)",
            count(plan.groups_left_alone, "group", "groups")
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::PlanFile;
    use dedup_core::{FileId, FileMeta};
    use std::path::PathBuf;

    fn file(path: &str) -> PlanFile {
        let meta = FileMeta { id: FileId { dev: 1, ino: 2 }, size: 3, mtime_ns: 0, ctime_ns: 0 };
        PlanFile { path: PathBuf::from(path), meta, root: 0, reference: false }
    }

    fn step(dest: Option<&str>, link_text: Option<&str>) -> Step {
        Step {
            group: 0,
            kept: file("keep/a"),
            target: file("dup/a\nb"),
            dest: dest.map(PathBuf::from),
            link_text: link_text.map(PathBuf::from),
        }
    }

    fn plan(action: Action, skipped: usize, groups_left_alone: u64) -> Plan {
        let skip = || crate::steps::Skipped { path: "x".into(), reason: SkipReason::Vanished };
        Plan {
            action,
            roots: Vec::new(),
            any_owner: false,
            steps: Vec::new(),
            skipped: (0..skipped).map(|_| skip()).collect(),
            strays: Vec::new(),
            groups_left_alone,
            dir_removals: Vec::new(),
        }
    }

    #[test]
    fn each_step_reads_as_one_line_naming_both_files() {
        assert_eq!(step(None, None).line("link"), "link \"dup/a\\nb\" => keep/a");
        assert_eq!(step(None, None).line("remove"), "remove \"dup/a\\nb\" (kept: keep/a)");
        assert_eq!(
            step(Some("to/a"), None).line("move"),
            "move \"dup/a\\nb\" -> to/a (kept: keep/a)"
        );
        assert_eq!(step(None, Some("/k/a")).line("symlink"), "symlink \"dup/a\\nb\" -> /k/a");
        let removal = DirRemoval { group: 0, dir: "d".into(), kept: "k".into() };
        assert_eq!(removal.line(), "rmdir d (kept: k)");
        assert_eq!(cleaned_line(Path::new("t")), "clean t");
    }

    #[test]
    fn the_summary_counts_sizes_and_skips_in_words_that_agree() {
        let s = ExecSummary { changed: 1, freed_bytes: 1536, ..ExecSummary::default() };
        assert_eq!(
            summary_line(&plan(Action::Link, 0, 0), &s, false),
            "dedup: link: 1 file replaced by hard links, 1.50 KiB freed"
        );
        let s = ExecSummary { changed: 2048, skipped: 1, dirs_removed: 1, ..s };
        assert_eq!(
            summary_line(&plan(Action::Remove, 1, 1), &s, true),
            "dedup: remove (dry run): 2,048 files would be removed, 1.50 KiB would be freed, \
             1 directory would be removed; 2 skipped (see above); 1 group left alone \
             (reference-only or one root)"
        );
        let moved = plan(Action::Move { to: "/m".into() }, 0, 0);
        assert_eq!(
            summary_line(&moved, &s, false),
            "dedup: move: 2,048 files moved, 1 directory removed; 1 skipped (see above)"
        );
        let shared = ExecSummary { changed: 3, shared_bytes: 1024, ..ExecSummary::default() };
        assert!(summary_line(&plan(Action::Reflink, 0, 0), &shared, false)
            .starts_with("dedup: reflink: 3 files deduplicated, 1.00 KiB sharing extents"));
    }
}
