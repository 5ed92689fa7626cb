//! `restore`'s words: a line per change of the target, its `--json` records (a change, the
//! status while it runs, the summary) and the summary line.

use std::path::Path;
use std::time::Duration;

use dedup_core::text::{quote_path, Bytes, Count};
use serde_json::{json, Value};

use super::json::item;
use crate::id::Id;
use crate::restore::{Change, ChangeKind, Overwrite, RestoreSummary};

/// Whether a change is shown (unless `--quiet`): an entry kept only with `-v`.
pub fn restore_change_shown(change: &Change, verbose: bool) -> bool {
    change.kind != ChangeKind::Keep || verbose
}

/// A change as a line: `replace PATH`, `delete PATH`, `keep PATH`.
pub fn restore_line(change: &Change) -> String {
    format!("{} {}", change.kind.name(), quote_path(&change.path))
}

/// A change as restic's `verbose_status` record.
pub fn restore_change_record(change: &Change) -> Value {
    json!({
        "message_type": "verbose_status",
        "action": change.kind.name(),
        "item": item(&change.path),
    })
}

/// The `--json` status record, `elapsed` after the start: restic's fields for what is known
/// without walking the snapshot first (no totals, so no `percent_done`).
pub fn restore_status_record(s: &RestoreSummary, error_count: u64, elapsed: Duration) -> Value {
    json!({
        "message_type": "status",
        "seconds_elapsed": elapsed.as_secs(),
        "files_restored": s.files,
        "files_skipped": s.kept,
        "bytes_restored": s.bytes,
        "error_count": error_count,
    })
}

/// The `--json` summary: restic's fields, then dedup's own.
pub fn restore_summary_record(
    id: &Id,
    dry_run: bool,
    s: &RestoreSummary,
    elapsed: Duration,
) -> Value {
    json!({
        "message_type": "summary",
        "seconds_elapsed": elapsed.as_secs(),
        "files_restored": s.files,
        "files_skipped": s.kept,
        "bytes_restored": s.bytes,
        "snapshot_id": id.to_hex(),
        "dry_run": dry_run,
        "dirs": s.dirs,
        "links": s.links,
        "others": s.others,
        "replaced": s.replaced,
        "deleted": s.deleted,
        "errors": s.errors,
    })
}

/// The last line: what was restored, replaced, deleted and kept.
pub fn restore_summary_line(
    id: &Id,
    target: &Path,
    dry_run: bool,
    overwrite: Overwrite,
    s: &RestoreSummary,
) -> String {
    let mut line = format!(
        "{} snapshot {} into {}: {} files, {} dirs, {} hard links, {} other entries",
        if dry_run { "dry run: would restore" } else { "restored" },
        id.short(8),
        quote_path(target),
        Count(s.files),
        Count(s.dirs),
        Count(s.links),
        Count(s.others),
    );
    if !dry_run {
        line.push_str(&format!(", {} written", Bytes(s.bytes)));
    }
    if s.replaced > 0 {
        line.push_str(&format!("; {} replaced", Count(s.replaced)));
    }
    if s.deleted > 0 {
        line.push_str(&format!("; {} deleted", Count(s.deleted)));
    }
    if s.kept > 0 {
        line.push_str(&format!(
            "; {} existing entries kept (--overwrite {} keeps them; -v names them)",
            Count(s.kept),
            overwrite.name()
        ));
    }
    if s.errors > 0 {
        line.push_str(&format!("; {} problems", s.errors));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_what_was_done_and_what_was_kept() {
        let s = RestoreSummary { files: 1234, dirs: 2, bytes: 1536, kept: 3, ..Default::default() };
        let id = Id([0xab; 32]);
        assert_eq!(
            restore_summary_line(&id, Path::new("/t"), false, Overwrite::Never, &s),
            "restored snapshot abababab into /t: 1,234 files, 2 dirs, 0 hard links, 0 other \
             entries, 1.50 KiB written; 3 existing entries kept (--overwrite never keeps them; \
             -v names them)"
        );
        let dry = restore_summary_line(&id, Path::new("/t"), true, Overwrite::Always, &s);
        assert!(dry.starts_with("dry run: would restore snapshot abababab into /t: "), "{dry}");
        assert!(!dry.contains("written"), "{dry}");
    }

    #[test]
    fn a_change_reads_as_its_kind_and_path_and_keeps_show_only_with_verbose() {
        let keep = Change { kind: ChangeKind::Keep, path: "/t/a\nb".into() };
        assert_eq!(restore_line(&keep), "keep \"/t/a\\nb\"");
        assert!(!restore_change_shown(&keep, false) && restore_change_shown(&keep, true));
        assert_eq!(restore_change_record(&keep)["action"], "keep");
    }
}
