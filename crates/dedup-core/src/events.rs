//! How a running scan tells its caller what it is doing without printing: problems are handed to
//! an [`Observer`] as they happen, and progress is a set of counters the caller may poll.
//!
//! Counters are relaxed atomics bumped once per file or per read, so keeping them costs nothing
//! measurable; a progress display reads them on its own timer, which is what keeps drawing from
//! ever slowing the scan.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::Problem;

/// Receives problems as they happen, from any thread.
pub trait Observer: Sync {
    /// Called once per problem.
    fn problem(&self, problem: Problem);
}

/// An observer that drops everything: for callers that only want the result.
impl Observer for () {
    fn problem(&self, _problem: Problem) {}
}

/// The stage of a run, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Listing directories.
    Walking = 0,
    /// Grouping by size and identity (no I/O).
    Grouping = 1,
    /// Reading samples of candidate files.
    Sampling = 2,
    /// Comparing full contents.
    Comparing = 3,
    /// Finished.
    Done = 4,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 5] =
        [Stage::Walking, Stage::Grouping, Stage::Sampling, Stage::Comparing, Stage::Done];

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Walking => "walk",
            Stage::Grouping => "group",
            Stage::Sampling => "sample",
            Stage::Comparing => "compare",
            Stage::Done => "done",
        }
    }

    fn from_u8(v: u8) -> Stage {
        match v {
            0 => Stage::Walking,
            1 => Stage::Grouping,
            2 => Stage::Sampling,
            3 => Stage::Comparing,
            _ => Stage::Done,
        }
    }
}

/// Live counters of a run, shared between the worker threads and whoever displays them.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    files_found: AtomicU64,
    bytes_found: AtomicU64,
    stage_total: AtomicU64,
    stage_done: AtomicU64,
    bytes_read: AtomicU64,
    epoch: OnceLock<Instant>,
    /// Nanoseconds after `epoch` at which each stage started, plus one (0 = not started).
    stage_started: [AtomicU64; 5],
}

/// A consistent-enough copy of [`Progress`] for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressSnapshot {
    /// Current stage.
    pub stage: Stage,
    /// Regular files found by the walk so far.
    pub files_found: u64,
    /// Their total size.
    pub bytes_found: u64,
    /// Work items (files) the current stage has to handle.
    pub stage_total: u64,
    /// Work items the current stage has finished.
    pub stage_done: u64,
    /// Bytes of file content read so far.
    pub bytes_read: u64,
}

impl Progress {
    /// Enter a stage with `total` items to do.
    pub fn start_stage(&self, stage: Stage, total: u64) {
        let epoch = *self.epoch.get_or_init(Instant::now);
        let at = epoch.elapsed().as_nanos() as u64 + 1;
        self.stage_started[stage as usize].store(at, Ordering::Relaxed);
        self.stage_total.store(total, Ordering::Relaxed);
        self.stage_done.store(0, Ordering::Relaxed);
        self.stage.store(stage as u8, Ordering::Relaxed);
    }

    /// Count a regular file found by the walk.
    pub fn found_file(&self, size: u64) {
        self.files_found.fetch_add(1, Ordering::Relaxed);
        self.bytes_found.fetch_add(size, Ordering::Relaxed);
    }

    /// Count finished items of the current stage.
    pub fn done(&self, items: u64) {
        self.stage_done.fetch_add(items, Ordering::Relaxed);
    }

    /// Count bytes of content read.
    pub fn read(&self, bytes: u64) {
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }

    /// How long each stage that ran took, in order (for `-v`).
    pub fn stage_durations(&self) -> Vec<(Stage, Duration)> {
        let starts: Vec<(Stage, u64)> = Stage::ALL
            .iter()
            .map(|&s| (s, self.stage_started[s as usize].load(Ordering::Relaxed)))
            .filter(|&(_, at)| at > 0)
            .collect();
        starts
            .windows(2)
            .map(|w| (w[0].0, Duration::from_nanos(w[1].1.saturating_sub(w[0].1))))
            .collect()
    }

    /// Copy the counters.
    pub fn snapshot(&self) -> ProgressSnapshot {
        ProgressSnapshot {
            stage: Stage::from_u8(self.stage.load(Ordering::Relaxed)),
            files_found: self.files_found.load(Ordering::Relaxed),
            bytes_found: self.bytes_found.load(Ordering::Relaxed),
            stage_total: self.stage_total.load(Ordering::Relaxed),
            stage_done: self.stage_done.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_counters_reset_on_new_stage() {
        let p = Progress::default();
        p.found_file(10);
        p.found_file(5);
        p.start_stage(Stage::Sampling, 4);
        p.done(3);
        p.read(100);
        let s = p.snapshot();
        assert_eq!((s.stage, s.files_found, s.bytes_found), (Stage::Sampling, 2, 15));
        assert_eq!((s.stage_total, s.stage_done, s.bytes_read), (4, 3, 100));
        p.start_stage(Stage::Comparing, 2);
        let s = p.snapshot();
        assert_eq!(
            (s.stage, s.stage_total, s.stage_done, s.bytes_read),
            (Stage::Comparing, 2, 0, 100)
        );
    }
}
