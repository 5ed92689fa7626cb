//! The store's commands in the words a person reads: each command's result as lines, each
//! marked with where it goes (the answer, what was done, a problem), and the few shared forms
//! (a time, a label quoted so that no byte of it can forge a line), and the records of each
//! command's `--json` output. The binary prints them; nothing here prints.

mod backup;
mod browse;
mod check;
mod find;
mod forget;
mod history;
mod json;
mod prune;
mod repair;
mod restore;
mod snapshot_record;
mod stats;
mod time;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub use backup::{
    backup_progress_line, backup_status_record, backup_summary_lines, backup_summary_record,
};
pub use browse::{ls_line, ls_long_line, snapshot_line};
pub use find::{find_line, find_match_record, kind_name, FindWriter};
pub use forget::{
    forget_done_line, forget_unreadable_lines, forget_verdict_lines, group_paths, parse_keep_within,
};
pub use history::{copy_lines, rewrite_lines, tag_lines, unreadable_lines};
pub use json::{error_record, fraction, item, json_path};
pub use prune::{parse_max_unused, prune_event_line, prune_plan_lines, prune_report_lines};
pub use repair::{
    index_repair_lines, index_repair_whole, snapshots_repair_lines, snapshots_repair_whole,
};
pub use restore::{
    restore_change_record, restore_change_shown, restore_line, restore_status_record,
    restore_summary_line, restore_summary_record,
};
pub use snapshot_record::snapshot_record;
pub use time::parse_time;

/// One line of a command's output, and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Standard output, also with `--quiet`: the command's answer.
    Answer(String),
    /// Standard output, left out with `--quiet`: what was done.
    Info(String),
    /// Standard error, also with `--quiet`: something wrong, named with its reason.
    Problem(String),
    /// Standard error, left out with `--quiet`.
    Warning(String),
}

/// Any bytes as one printable line: as they are when they are printable UTF-8, else quoted
/// with escapes (`"a\nb"`).
pub fn quote(bytes: &[u8]) -> String {
    dedup_core::text::quote_path(Path::new(OsStr::from_bytes(bytes)))
}

/// A time in ns since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn show_time(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    let (year, month, day) = crate::forget::civil(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A time in ns since the epoch as RFC 3339 in UTC, to the nanosecond:
/// `2023-11-14T22:13:20.123456789Z`.
pub fn rfc3339(ns: i64) -> String {
    format!("{}.{:09}Z", show_time(ns).replacen(' ', "T", 1), ns.rem_euclid(1_000_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_show_in_utc() {
        assert_eq!(show_time(0), "1970-01-01 00:00:00");
        assert_eq!(show_time(951_782_400_000_000_000), "2000-02-29 00:00:00");
        assert_eq!(show_time(1_700_000_000_123_000_000), "2023-11-14 22:13:20");
    }

    #[test]
    fn times_are_rfc3339_in_utc_to_the_nanosecond() {
        assert_eq!(rfc3339(1_700_000_000_123_456_789), "2023-11-14T22:13:20.123456789Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
    }
}
