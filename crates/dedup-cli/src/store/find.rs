//! `dedup store find`: the entries of snapshots whose name or path matches, each under the
//! snapshot that holds it, as text or JSON. Nothing found is no error (restic's rule): the exit
//! status is 1 only when a snapshot or tree could not be searched.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use anyhow::{bail, Result};
use dedup_store::commands::{self, FindOptions, Found, Patterns};
use dedup_store::format::{Node, NodeKind};

use super::args::CommonArgs;
use super::history_args::FindArgs;
use super::show_time;
use super::snapshot_view::json_path;
use dedup_store::text::{quote, rfc3339};

/// restic's names of entry kinds.
pub fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::File => "file",
        NodeKind::Dir => "dir",
        NodeKind::Symlink => "symlink",
        NodeKind::Fifo => "fifo",
        NodeKind::CharDevice => "chardev",
        NodeKind::BlockDevice => "dev",
        NodeKind::Socket => "socket",
    }
}

/// `dedup store find`.
pub fn run(common: &CommonArgs, args: FindArgs) -> Result<bool> {
    let patterns: Vec<Vec<u8>> = args.patterns.iter().map(|p| p.as_bytes().to_vec()).collect();
    let options = FindOptions {
        patterns: Patterns::new(&patterns, args.ignore_case)?,
        oldest: args.oldest.as_deref().map(|t| parse_time(t, false)).transpose()?,
        newest: args.newest.as_deref().map(|t| parse_time(t, true)).transpose()?,
    };
    let repo = super::open(common)?;
    let selection = super::selection::selection_of(&args.snapshots, &args.filter);
    let selected = commands::select(&repo, &selection)?;
    for err in &selected.unreadable {
        eprintln!("dedup: error: {err}");
    }
    let mut out = std::io::stdout().lock();
    // JSON goes out a snapshot at a time: memory holds one snapshot's matches, not the run's.
    let mut group: Option<serde_json::Value> = None;
    let mut groups_written = 0u64;
    let mut current: Option<dedup_store::Id> = None;
    let report = commands::find(&repo, &selected.snapshots, &options, &mut |found: Found<'_>| {
        let first = current != Some(*found.id);
        current = Some(*found.id);
        if args.json {
            if first {
                if let Some(done) = group.take() {
                    write_group(&mut out, &done, &mut groups_written)?;
                }
                group = Some(serde_json::json!({
                    "snapshot": found.id.to_hex(), "short_id": found.id.short(8),
                    "time": rfc3339(found.snapshot.time), "host": found.snapshot.host,
                    "hits": 0, "matches": [],
                }));
            }
            let group = group.as_mut().expect("a group per snapshot with matches");
            group["hits"] = (group["hits"].as_u64().unwrap_or(0) + 1).into();
            if let Some(matches) = group["matches"].as_array_mut() {
                matches.push(json_match(found.path, found.node));
            }
            return Ok(());
        }
        if first {
            writeln!(
                out,
                "Found in snapshot {} of {} ({}):",
                found.id.short(8),
                show_time(found.snapshot.time),
                quote(found.snapshot.host.as_bytes())
            )
            .map_err(stdout_error)?;
        }
        writeln!(out, "  {}", line(found.path, found.node)).map_err(stdout_error)
    })?;
    if args.json {
        if let Some(done) = group.take() {
            write_group(&mut out, &done, &mut groups_written)?;
        }
        let end = if groups_written == 0 { "[]" } else { "\n]" };
        writeln!(out, "{end}")?;
    }
    for problem in &report.problems {
        eprintln!("dedup: error: {problem}");
    }
    Ok(selected.unreadable.is_empty() && report.problems.is_empty())
}

/// One snapshot's object of the JSON array, after the `[` or a `,`.
fn write_group(
    out: &mut impl Write,
    group: &serde_json::Value,
    written: &mut u64,
) -> Result<(), dedup_store::Error> {
    let before = if *written == 0 { "[\n" } else { ",\n" };
    *written += 1;
    write!(out, "{before}{group}").map_err(stdout_error)
}

fn stdout_error(e: std::io::Error) -> dedup_store::Error {
    dedup_store::Error::io("standard output", e)
}

/// One entry found, as `ls -l` shows it.
fn line(path: &[u8], node: &Node) -> String {
    let mark = if node.incomplete { " (incomplete)" } else { "" };
    format!(
        "{}{:04o} {:>12} {} {}{mark}",
        node.kind.letter(),
        node.mode,
        node.size,
        show_time(node.mtime),
        quote(path)
    )
}

fn json_match(path: &[u8], node: &Node) -> serde_json::Value {
    serde_json::json!({
        "path": json_path(path), "type": kind_name(node.kind), "mode": node.mode,
        "size": node.size, "mtime": rfc3339(node.mtime), "mtime_ns": node.mtime,
        "uid": node.uid, "gid": node.gid, "incomplete": node.incomplete,
    })
}

/// Days since the epoch of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD[ HH:MM[:SS]]` (or with a `T`) in UTC as ns since the epoch; with `end`, the last
/// nanosecond of what it names (a date alone: its last second).
fn parse_time(text: &str, end: bool) -> Result<i64> {
    let bad = || anyhow::anyhow!("{text:?}: not a time; give YYYY-MM-DD[ HH:MM[:SS]] (UTC)");
    let (date, clock) = match text.trim().split_once([' ', 'T']) {
        Some((date, clock)) => (date, Some(clock)),
        None => (text.trim(), None),
    };
    let numbers = |s: &str, sep: char| -> Option<Vec<i64>> {
        s.split(sep).map(|n| n.parse::<i64>().ok()).collect()
    };
    let [year, month, day] = numbers(date, '-').ok_or_else(bad)?[..] else { bail!(bad()) };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        bail!(bad());
    }
    let (clock, span) = match clock.map(|c| numbers(c, ':')) {
        None => ([0, 0, 0], 86_400),
        Some(Some(parts)) if parts.len() == 2 => ([parts[0], parts[1], 0], 60),
        Some(Some(parts)) if parts.len() == 3 => ([parts[0], parts[1], parts[2]], 1),
        _ => bail!(bad()),
    };
    if clock[0] > 23 || clock[1] > 59 || clock[2] > 60 || clock.iter().any(|&n| n < 0) {
        bail!(bad());
    }
    let secs = days_from_civil(year, month, day) * 86_400
        + clock[0] * 3600
        + clock[1] * 60
        + clock[2]
        + if end { span } else { 0 };
    let ns = secs.checked_mul(1_000_000_000).ok_or_else(bad)?;
    Ok(if end { ns - 1 } else { ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc_and_an_end_covers_what_it_names() {
        assert_eq!(parse_time("1970-01-01", false).unwrap(), 0);
        assert_eq!(parse_time("1970-01-01", true).unwrap(), 86_400_000_000_000 - 1);
        assert_eq!(parse_time("2000-02-29 00:00", false).unwrap(), 951_782_400_000_000_000);
        assert_eq!(parse_time("2023-11-14T22:13:20", false).unwrap(), 1_700_000_000_000_000_000);
        assert_eq!(parse_time("2023-11-14 22:13", true).unwrap(), 1_700_000_039_999_999_999);
        for bad in ["", "2023", "2023-13-01", "2023-01-01 25:00", "2023-01-01 1:2:3:4", "x-y-z"] {
            assert!(parse_time(bad, false).is_err(), "{bad}");
        }
    }
}
