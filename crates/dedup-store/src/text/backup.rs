//! `backup`'s words: the progress line on a terminal (files and bytes gone through out of the
//! expected total, bytes read, the rate, an ETA), its `--json` status and summary records, and
//! the summary lines.

use std::sync::atomic::Ordering;
use std::time::Duration;

use dedup_core::text::{Bytes, Count};
use serde_json::{json, Value};

use super::json::{fraction, item};
use crate::backup::{BackupOptions, BackupOutcome, BackupProgress};
use crate::commands::Expected;

/// The time left at the rate so far, once the total is known and there is a rate.
fn eta(done: u64, total: u64, elapsed: Duration) -> Option<Duration> {
    if done == 0 || done >= total || elapsed < Duration::from_millis(500) {
        return None;
    }
    let rate = done as f64 / elapsed.as_secs_f64();
    Some(Duration::from_secs_f64((total - done) as f64 / rate))
}

/// `42s`, `3m05s`, `2h07m`.
fn short(duration: Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// The progress line for the counters as they are, `elapsed` after the start.
pub fn backup_progress_line(
    progress: &BackupProgress,
    expected: &Expected,
    elapsed: Duration,
) -> String {
    let files = progress.files.load(Ordering::Relaxed);
    let done = progress.bytes_done.load(Ordering::Relaxed);
    let read = progress.bytes_read.load(Ordering::Relaxed);
    let rate = done as f64 / elapsed.as_secs_f64().max(0.001);
    let total = expected.total.load(Ordering::Relaxed);
    let known = expected.known.load(Ordering::Relaxed);
    let of = if known && total >= done {
        format!("{} of {}", Bytes(done), Bytes(total))
    } else {
        format!("{} done", Bytes(done))
    };
    let eta = match eta(done, total, elapsed).filter(|_| known) {
        Some(left) => format!(", ETA {}", short(left)),
        None => String::new(),
    };
    format!("{} files, {of}, {} read, {}/s{eta}", Count(files), Bytes(read), Bytes(rate as u64))
}

/// The `--json` status record for the counters as they are, `elapsed` after the start:
/// restic's fields (`total_files` only when the parent snapshot gives it, `seconds_remaining`
/// once the total is known).
pub fn backup_status_record(
    progress: &BackupProgress,
    expected: &Expected,
    options: &BackupOptions,
    error_count: u64,
    elapsed: Duration,
) -> Value {
    let files = progress.files.load(Ordering::Relaxed);
    let done = progress.bytes_done.load(Ordering::Relaxed);
    let total =
        expected.known.load(Ordering::Relaxed).then(|| expected.total.load(Ordering::Relaxed));
    let mut status = json!({
        "message_type": "status",
        "seconds_elapsed": elapsed.as_secs(),
        "percent_done": fraction(done, total),
        "files_done": files,
        "bytes_done": done,
        "bytes_read": progress.bytes_read.load(Ordering::Relaxed),
        "error_count": error_count,
    });
    if let Some(total) = total {
        status["total_bytes"] = total.into();
        if let Some(left) = eta(done, total, elapsed) {
            status["seconds_remaining"] = left.as_secs().into();
        }
    }
    if let Some((_, parent)) = &options.parent {
        let s = &parent.summary;
        status["total_files"] = (s.files_new + s.files_changed + s.files_unchanged).into();
    }
    if let Some(current) = progress.current_file() {
        status["current_files"] = json!([item(&current)]);
    }
    status
}

/// The `--json` summary: restic's fields, then the ones dedup printed before them (kept for
/// scripts).
pub fn backup_summary_record(outcome: &BackupOutcome, dry_run: bool, seconds: f64) -> Value {
    let s = &outcome.snapshot.summary;
    let files_processed = s.files_new + s.files_changed + s.files_unchanged;
    json!({
        "message_type": "summary",
        "snapshot_id": outcome.id.map(|id| id.to_hex()),
        "files_unmodified": s.files_unchanged,
        "data_added": s.bytes_added,
        "total_files_processed": files_processed,
        "total_bytes_processed": s.bytes_total,
        "total_duration": seconds,
        "snapshot": outcome.id.map(|id| id.to_hex()),
        "dry_run": dry_run,
        "incomplete": outcome.snapshot.incomplete,
        "files_new": s.files_new, "files_changed": s.files_changed, "files_unchanged": s.files_unchanged,
        "dirs": s.dirs, "others": s.others, "errors": s.errors,
        "bytes_read": s.bytes_read, "bytes_total": s.bytes_total, "bytes_added": s.bytes_added,
        "blobs_added": s.blobs_added, "packs_written": outcome.packs_written,
        "packs_adopted": outcome.packs_adopted, "seconds": seconds,
    })
}

/// The summary lines: the files by kind of change, the bytes, and the snapshot saved.
pub fn backup_summary_lines(outcome: &BackupOutcome, seconds: f64) -> [String; 3] {
    let s = &outcome.snapshot.summary;
    let files = format!(
        "files: {} new, {} changed, {} unchanged; {} dirs, {} other entries",
        Count(s.files_new),
        Count(s.files_changed),
        Count(s.files_unchanged),
        Count(s.dirs),
        Count(s.others)
    );
    let bytes = format!(
        "read {} of {}; added {} to the repository ({} blobs, {} packs) in {seconds:.2} s",
        Bytes(s.bytes_read),
        Bytes(s.bytes_total),
        Bytes(s.bytes_added),
        Count(s.blobs_added),
        Count(outcome.packs_written)
    );
    let saved = match outcome.id {
        Some(id) if outcome.snapshot.incomplete => format!(
            "snapshot {} saved, INCOMPLETE: {} entries or paths could not be read whole (each \
             is named above with what the snapshot holds of it)",
            id.short(8),
            s.errors
        ),
        Some(id) => format!("snapshot {} saved", id.short(8)),
        None => "dry run: nothing written".to_string(),
    };
    [files, bytes, saved]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Snapshot;
    use crate::id::Id;

    #[test]
    fn the_eta_is_what_is_left_at_the_rate_so_far() {
        let ten = Duration::from_secs(10);
        assert_eq!(eta(100, 400, ten), Some(Duration::from_secs(30)));
        assert_eq!(eta(0, 400, ten), None, "no rate yet");
        assert_eq!(eta(400, 400, ten), None, "done, or the tree grew past the estimate");
        assert_eq!(short(Duration::from_secs(42)), "42s");
        assert_eq!(short(Duration::from_secs(185)), "3m05s");
        assert_eq!(short(Duration::from_secs(7620)), "2h07m");
    }

    #[test]
    fn a_json_status_record_has_restics_fields_and_the_file_being_read() {
        let progress = BackupProgress::default();
        progress.files.store(3, Ordering::Relaxed);
        progress.bytes_done.store(1 << 20, Ordering::Relaxed);
        *progress.current.lock().unwrap() = Some("/src/big".into());
        let mut parent = Snapshot::default();
        parent.summary.files_new = 9;
        let options =
            BackupOptions { parent: Some((Id([1; 32]), parent)), ..BackupOptions::default() };
        let expected = Expected::default();
        expected.total.store(4 << 20, Ordering::Relaxed);
        let status =
            |e: &Expected| backup_status_record(&progress, e, &options, 2, Duration::from_secs(2));
        let unknown = status(&expected);
        assert_eq!(unknown["message_type"], "status");
        assert_eq!(unknown["percent_done"], 0.0, "the total is not known yet");
        assert!(unknown.get("total_bytes").is_none() && unknown.get("seconds_remaining").is_none());
        expected.known.store(true, Ordering::Relaxed);
        let known = status(&expected);
        assert_eq!(known["percent_done"], 0.25);
        assert_eq!(
            (known["total_bytes"].as_u64(), known["bytes_done"].as_u64()),
            (Some(4 << 20), Some(1 << 20))
        );
        assert_eq!(known["seconds_remaining"], 6);
        assert_eq!(
            (known["files_done"].as_u64(), known["total_files"].as_u64()),
            (Some(3), Some(9))
        );
        assert_eq!(known["error_count"], 2);
        assert_eq!(known["current_files"], json!(["/src/big"]));
    }

    #[test]
    fn the_line_shows_the_total_and_eta_only_once_the_total_is_known() {
        let progress = BackupProgress::default();
        progress.files.store(3, Ordering::Relaxed);
        progress.bytes_done.store(1 << 20, Ordering::Relaxed);
        progress.bytes_read.store(1 << 19, Ordering::Relaxed);
        let expected = Expected::default();
        expected.total.store(4 << 20, Ordering::Relaxed);
        let line_now = |e: &Expected| backup_progress_line(&progress, e, Duration::from_secs(2));
        assert_eq!(line_now(&expected), "3 files, 1.00 MiB done, 512.00 KiB read, 512.00 KiB/s");
        expected.known.store(true, Ordering::Relaxed);
        assert_eq!(
            line_now(&expected),
            "3 files, 1.00 MiB of 4.00 MiB, 512.00 KiB read, 512.00 KiB/s, ETA 6s"
        );
    }
}
