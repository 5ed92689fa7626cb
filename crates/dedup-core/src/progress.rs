//! Progress of a running job, in the job's own phases: a set of counters the job bumps and
//! whoever displays them polls.
//!
//! Counters are relaxed atomics bumped once per file or per read, so keeping them costs nothing
//! measurable; a progress display reads them on its own timer, which is what keeps drawing from
//! ever slowing the job.
//!
//! # Phases
//!
//! A job (the finder, later the store and sync) names its phases in a static list of [`Phase`]s,
//! in the order they run, with a constant for each one's index; the caller makes the job's
//! [`Progress`] from that list, and the binary draws and times whatever phases it finds there,
//! knowing nothing of the job. For a new job:
//!
//! ```
//! use dedup_core::{Phase, Progress, Shows};
//!
//! pub const WALK: usize = 0;
//! pub const COPY: usize = 1;
//! pub const DONE: usize = 2;
//! /// At most [`dedup_core::MAX_PHASES`].
//! pub static PHASES: &[Phase] = &[
//!     Phase { name: "walk", label: "scanning:", shows: Shows::Found { unit: "files" } },
//!     Phase { name: "copy", label: "copying:", shows: Shows::Items { unit: Some("files") } },
//!     Phase { name: "done", label: "finishing", shows: Shows::Label },
//! ];
//!
//! let progress = Progress::new(PHASES);
//! progress.start_phase(WALK, 0);
//! progress.found_file(4096);
//! progress.start_phase(COPY, 1);
//! progress.read(4096);
//! progress.done(1);
//! progress.start_phase(DONE, 0);
//! let timed: Vec<&str> = progress.phase_durations().iter().map(|(p, _)| p.name).collect();
//! assert_eq!(timed, ["walk", "copy"]);
//! ```
//!
//! The line the binary draws is the phase's label, then what [`Shows`] asks for:
//! `scanning: 1 files, 4 KiB`, `copying: 0/1 files (4 KiB read)`, `finishing`. `-v` prints how
//! long each phase took from its start to the start of the next one that ran.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The most phases a job may declare: the start times are a fixed array, so that starting a
/// phase is one atomic store.
pub const MAX_PHASES: usize = 16;

/// One phase of a job, as the job declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    /// A short name, for `-v` timings (`walk`).
    pub name: &'static str,
    /// What the progress line says while the phase runs (`scanning:`).
    pub label: &'static str,
    /// Which counters follow the label.
    pub shows: Shows,
}

/// The counters a progress line shows after a phase's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shows {
    /// None: the label alone (`writing report`).
    Label,
    /// What the walk has found so far and its bytes (`1,204 files, 3.20 MiB`); `unit` names
    /// what [`Progress::found_file`] counts.
    Found {
        /// What is counted (`files`).
        unit: &'static str,
    },
    /// The phase's items done of its total, then the bytes read so far
    /// (`12/40 files (3.20 MiB read)`); `unit`, when given, names the items.
    Items {
        /// What the items are (`files`), or nothing.
        unit: Option<&'static str>,
    },
}

/// Live counters of a job, shared between its worker threads and whoever displays them.
#[derive(Debug)]
pub struct Progress {
    phases: &'static [Phase],
    phase: AtomicU8,
    files_found: AtomicU64,
    bytes_found: AtomicU64,
    phase_total: AtomicU64,
    phase_done: AtomicU64,
    bytes_read: AtomicU64,
    epoch: OnceLock<Instant>,
    /// Nanoseconds after `epoch` at which each phase started, plus one (0 = not started).
    phase_started: [AtomicU64; MAX_PHASES],
}

/// Counters without named phases: they count and time as usual, but nothing names or draws
/// them (for callers that only want the result, and tests).
impl Default for Progress {
    fn default() -> Progress {
        Progress::new(&[])
    }
}

/// A consistent-enough copy of [`Progress`] for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressSnapshot {
    /// Index of the current phase in [`Progress::phases`] (0 before the first has started).
    pub phase: usize,
    /// Entries (for the finder, regular files) found by the walk so far.
    pub files_found: u64,
    /// Their total size.
    pub bytes_found: u64,
    /// Work items the current phase has to handle.
    pub phase_total: u64,
    /// Work items the current phase has finished.
    pub phase_done: u64,
    /// Bytes of file content read so far.
    pub bytes_read: u64,
}

impl Progress {
    /// Counters for a job with these phases, in order.
    ///
    /// # Panics
    /// With more than [`MAX_PHASES`] phases.
    pub fn new(phases: &'static [Phase]) -> Progress {
        assert!(phases.len() <= MAX_PHASES, "a job declares at most {MAX_PHASES} phases");
        Progress {
            phases,
            phase: AtomicU8::new(0),
            files_found: AtomicU64::new(0),
            bytes_found: AtomicU64::new(0),
            phase_total: AtomicU64::new(0),
            phase_done: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            epoch: OnceLock::new(),
            phase_started: Default::default(),
        }
    }

    /// The job's phases, in order.
    pub fn phases(&self) -> &'static [Phase] {
        self.phases
    }

    /// Enter the phase of index `phase` with `total` items to do.
    pub fn start_phase(&self, phase: usize, total: u64) {
        debug_assert!(phase < MAX_PHASES, "phase {phase} beyond the {MAX_PHASES} a job may have");
        let phase = phase.min(MAX_PHASES - 1);
        let epoch = *self.epoch.get_or_init(Instant::now);
        let at = epoch.elapsed().as_nanos() as u64 + 1;
        self.phase_started[phase].store(at, Ordering::Relaxed);
        self.phase_total.store(total, Ordering::Relaxed);
        self.phase_done.store(0, Ordering::Relaxed);
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// Count an entry found by the walk (for the finder, a regular file) and its size.
    pub fn found_file(&self, size: u64) {
        self.files_found.fetch_add(1, Ordering::Relaxed);
        self.bytes_found.fetch_add(size, Ordering::Relaxed);
    }

    /// Count finished items of the current phase.
    pub fn done(&self, items: u64) {
        self.phase_done.fetch_add(items, Ordering::Relaxed);
    }

    /// Count bytes of content read.
    pub fn read(&self, bytes: u64) {
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }

    /// How long each declared phase that ran took, in order (for `-v`): from its start to the
    /// start of the next phase that ran. The last phase that ran has no end and is left out.
    pub fn phase_durations(&self) -> Vec<(Phase, Duration)> {
        let starts: Vec<(Phase, u64)> = self
            .phases
            .iter()
            .zip(&self.phase_started)
            .map(|(&phase, at)| (phase, at.load(Ordering::Relaxed)))
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
            phase: usize::from(self.phase.load(Ordering::Relaxed)),
            files_found: self.files_found.load(Ordering::Relaxed),
            bytes_found: self.bytes_found.load(Ordering::Relaxed),
            phase_total: self.phase_total.load(Ordering::Relaxed),
            phase_done: self.phase_done.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn phase(name: &'static str) -> Phase {
        Phase { name, label: name, shows: Shows::Label }
    }

    static FOUR: &[Phase] = &[phase("a"), phase("b"), phase("c"), phase("d")];

    #[test]
    fn stage_counters_reset_on_new_stage() {
        let p = Progress::new(FOUR);
        p.found_file(10);
        p.found_file(5);
        p.start_phase(2, 4);
        p.done(3);
        p.read(100);
        let s = p.snapshot();
        assert_eq!((s.phase, s.files_found, s.bytes_found), (2, 2, 15));
        assert_eq!((s.phase_total, s.phase_done, s.bytes_read), (4, 3, 100));
        p.start_phase(3, 2);
        let s = p.snapshot();
        assert_eq!((s.phase, s.phase_total, s.phase_done, s.bytes_read), (3, 2, 0, 100));
    }

    #[test]
    fn durations_follow_the_declared_order_and_skip_phases_that_did_not_run() {
        let p = Progress::new(FOUR);
        p.start_phase(0, 0);
        std::thread::sleep(Duration::from_millis(2));
        p.start_phase(2, 0);
        p.start_phase(3, 0);
        let timed = p.phase_durations();
        let names: Vec<&str> = timed.iter().map(|(phase, _)| phase.name).collect();
        assert_eq!(names, ["a", "c"]);
        assert!(timed[0].1 >= Duration::from_millis(2), "{timed:?}");
    }

    #[test]
    fn any_number_of_phases_up_to_the_limit_is_timed() {
        static MANY: [Phase; MAX_PHASES] = [phase("p"); MAX_PHASES];
        let p = Progress::new(&MANY);
        for i in 0..MAX_PHASES {
            p.start_phase(i, 0);
        }
        assert_eq!(p.phase_durations().len(), MAX_PHASES - 1);
        assert_eq!(p.snapshot().phase, MAX_PHASES - 1);
    }

    #[test]
    #[should_panic(expected = "at most 16 phases")]
    fn more_phases_than_the_limit_are_refused() {
        static TOO_MANY: [Phase; MAX_PHASES + 1] = [phase("p"); MAX_PHASES + 1];
        let _ = Progress::new(&TOO_MANY);
    }

    #[test]
    fn counters_without_named_phases_time_nothing() {
        let p = Progress::default();
        p.start_phase(0, 0);
        p.start_phase(1, 0);
        assert!(p.phases().is_empty());
        assert!(p.phase_durations().is_empty());
    }
}
