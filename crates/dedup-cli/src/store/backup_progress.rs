//! The backup's progress line on a terminal: files and bytes gone through out of the expected
//! total, bytes read, the rate, and an ETA. The total comes from the parent snapshot when there
//! is one (no extra work), else from a count that walks the tree beside the backup.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dedup_store::backup::BackupProgress;
use indicatif::{HumanBytes, HumanCount};

use super::json_progress;

/// The bytes the backup is expected to go through.
#[derive(Debug, Default)]
pub struct Expected {
    /// Bytes of regular files, so far.
    pub total: AtomicU64,
    /// Whether `total` is complete (the count finished, or the parent's was taken).
    pub known: AtomicBool,
}

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

/// The line for the counters as they are, `elapsed` after the start.
fn line(progress: &BackupProgress, expected: &Expected, elapsed: Duration) -> String {
    let files = progress.files.load(Ordering::Relaxed);
    let done = progress.bytes_done.load(Ordering::Relaxed);
    let read = progress.bytes_read.load(Ordering::Relaxed);
    let rate = done as f64 / elapsed.as_secs_f64().max(0.001);
    let total = expected.total.load(Ordering::Relaxed);
    let known = expected.known.load(Ordering::Relaxed);
    let of = if known && total >= done {
        format!("{} of {}", HumanBytes(done), HumanBytes(total))
    } else {
        format!("{} done", HumanBytes(done))
    };
    let eta = match eta(done, total, elapsed).filter(|_| known) {
        Some(left) => format!(", ETA {}", short(left)),
        None => String::new(),
    };
    format!(
        "{} files, {of}, {} read, {}/s{eta}",
        HumanCount(files),
        HumanBytes(read),
        HumanBytes(rate as u64)
    )
}

/// The `--json` status line for the counters as they are, `elapsed` after the start: restic's
/// fields (`total_files` only when the parent snapshot gives it, `seconds_remaining` once the
/// total is known).
pub fn json_status(
    progress: &BackupProgress,
    expected: &Expected,
    total_files: Option<u64>,
    error_count: u64,
    elapsed: Duration,
) -> serde_json::Value {
    let files = progress.files.load(Ordering::Relaxed);
    let done = progress.bytes_done.load(Ordering::Relaxed);
    let total =
        expected.known.load(Ordering::Relaxed).then(|| expected.total.load(Ordering::Relaxed));
    let mut status = serde_json::json!({
        "message_type": "status",
        "seconds_elapsed": elapsed.as_secs(),
        "percent_done": json_progress::fraction(done, total),
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
    if let Some(total_files) = total_files {
        status["total_files"] = total_files.into();
    }
    if let Some(current) = progress.current_file() {
        status["current_files"] = serde_json::json!([json_progress::item(&current)]);
    }
    status
}

/// Redraws the progress line on stderr five times a second until `finished`.
pub fn tick(progress: &BackupProgress, expected: &Expected, finished: &AtomicBool) {
    let started = Instant::now();
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        eprint!("\r\x1b[K{}", line(progress, expected, started.elapsed()));
    }
    eprint!("\r\x1b[K");
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_json_status_line_has_restics_fields_and_the_file_being_read() {
        let progress = BackupProgress::default();
        progress.files.store(3, Ordering::Relaxed);
        progress.bytes_done.store(1 << 20, Ordering::Relaxed);
        *progress.current.lock().unwrap() = Some("/src/big".into());
        let expected = Expected::default();
        expected.total.store(4 << 20, Ordering::Relaxed);
        let status = |e: &Expected| json_status(&progress, e, Some(9), 2, Duration::from_secs(2));
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
        assert_eq!(known["current_files"], serde_json::json!(["/src/big"]));
    }

    #[test]
    fn the_line_shows_the_total_and_eta_only_once_the_total_is_known() {
        let progress = BackupProgress::default();
        progress.files.store(3, Ordering::Relaxed);
        progress.bytes_done.store(1 << 20, Ordering::Relaxed);
        progress.bytes_read.store(1 << 19, Ordering::Relaxed);
        let expected = Expected::default();
        expected.total.store(4 << 20, Ordering::Relaxed);
        let line_now = |e: &Expected| line(&progress, e, Duration::from_secs(2));
        assert_eq!(line_now(&expected), "3 files, 1.00 MiB done, 512.00 KiB read, 512.00 KiB/s");
        expected.known.store(true, Ordering::Relaxed);
        assert_eq!(
            line_now(&expected),
            "3 files, 1.00 MiB of 4.00 MiB, 512.00 KiB read, 512.00 KiB/s, ETA 6s"
        );
    }
}
