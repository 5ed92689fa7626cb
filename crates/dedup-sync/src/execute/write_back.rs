//! Sending the run's new copies to the destination's disk at the end of the run, from one
//! thread, small files first, each part in the order of the plan. Left to the kernel, the
//! copies are written back at the user's `sync` (or after 30 seconds) by its flusher threads,
//! and ext4 (which chooses the blocks only then) places and writes them from several CPUs'
//! streams a few megabytes apart: on a disk that seeks, the disk turns between them at nearly
//! every file ([`dedup_fs::start_write_back_all`] says why this order is one it can follow).
//!
//! Why at the end and not as the copies finish: creating files reads the destination's inode
//! tables (one 4 KiB read every few dozen new files on a cold ext4), and a read among the
//! writes costs two seeks; during the copies the disk is otherwise idle, so the reads cost
//! little there. Each copy is remembered by its place in the plan and its inode, not held open
//! (a large tree has more files than a process may hold open): it is opened again by name
//! without following anything and only when it is still the regular file of that inode
//! ([`dedup_fs::reopen_for_write_back`]). The run then returns once the writes are started (a
//! start waits while the device's queue is full), without waiting for them to finish: it
//! promises nothing more about the disk than before, only the order and time the bytes go.
//!
//! On where the destination's device says it rotates and its writes measure slow: the first
//! few small copies are written and waited for one at a time, and the rest is sent only when
//! the median took a seek's time ([`dedup_scan::layout::SLOW_REQUEST`]); a virtual disk may say
//! it rotates on solid-state storage, where sending the writes early only makes the run wait
//! for them instead of leaving them to the kernel after it returns. `DEDUP_SYNC_WRITEBACK=1` or
//! `0` forces it on or off (to measure one against the other).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use dedup_core::env_setting::{switch, SettingError};
use dedup_fs::{
    reopen_for_write_back, small_first, start_write_back, write_back_and_wait, SMALL_FILE,
};
use dedup_scan::layout::{reads_seek, PROBE_READS};

use super::{name_of, Exec};
use crate::plan::Plan;

/// A copy made by the run: its place in the plan (directory, action), its inode and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Made {
    at: (usize, usize),
    ino: u64,
    len: u64,
}

/// The copies made, remembered while the write-back is wanted.
#[derive(Default)]
pub struct WriteBack {
    on: AtomicBool,
    made: Mutex<Vec<Made>>,
}

/// `DEDUP_SYNC_WRITEBACK`, read.
pub fn setting() -> Result<Option<bool>, SettingError> {
    switch("DEDUP_SYNC_WRITEBACK")
}

/// Whether this run sends its copies to the disk itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// No.
    Never,
    /// Yes, every copy (`DEDUP_SYNC_WRITEBACK=1`).
    Always,
    /// Where the first small copies' writes, waited for, measure slow.
    Measured,
}

/// As `DEDUP_SYNC_WRITEBACK` says, else measured where the destination's device says it
/// `rotates` (`None` for a file system without one, such as tmpfs, where there is nothing to
/// send). A setting that is neither `0` nor `1` leaves the default (the run warns of it).
pub fn wanted(setting: Result<Option<bool>, SettingError>, rotates: Option<bool>) -> Wanted {
    match setting {
        Ok(Some(true)) => Wanted::Always,
        Ok(Some(false)) => Wanted::Never,
        Ok(None) | Err(_) if rotates == Some(true) => Wanted::Measured,
        Ok(None) | Err(_) => Wanted::Never,
    }
}

impl WriteBack {
    /// From now on the copies made are remembered.
    pub fn open(&self) {
        self.on.store(true, Ordering::Relaxed);
    }

    /// The copy `file` at `at` in the plan, `len` bytes long, is in place.
    pub fn add(&self, at: (usize, usize), file: &File, len: u64) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let Ok(st) = rustix::fs::fstat(file) else { return };
        let made = Made { at, ino: st.st_ino, len };
        self.made.lock().unwrap_or_else(PoisonError::into_inner).push(made);
    }

    /// The copies remembered, in the plan's order, forgotten here.
    fn take(&self) -> Vec<Made> {
        let mut made =
            std::mem::take(&mut *self.made.lock().unwrap_or_else(PoisonError::into_inner));
        made.sort_unstable_by_key(|m| m.at);
        made
    }
}

/// Starts the write-back of every copy remembered, small files first, each part in the plan's
/// order; a copy that is no longer there as made is left alone. `Measured`: the first few small
/// copies are written and waited for, and the rest is left to the kernel unless they were slow.
pub fn send(x: &Exec<'_>, plan: &Plan, wanted: Wanted) {
    let made = x.write_back.take();
    let lens: Vec<u64> = made.iter().map(|m| m.len).collect();
    let mut open: Option<(usize, Option<OwnedFd>)> = None;
    let mut probe = Probe::new(wanted);
    for i in small_first(&lens) {
        let Made { at: (dir, action), ino, len } = made[i];
        let d = &plan.dirs[dir];
        if open.as_ref().is_none_or(|(n, _)| *n != dir) {
            open = Some((dir, x.dst_dir(&d.rel).ok()));
        }
        let Some((_, Some(fd))) = open.as_ref() else { continue };
        let Some(file) = reopen_for_write_back(fd, name_of(d.actions[action].name()), ino) else {
            continue;
        };
        match probe.next(len) {
            Step::Probe => probe.time(&file),
            Step::Send => start_write_back(&file),
            Step::Stop => return,
        }
    }
}

/// A write waited for that took less than this wrote nothing (a solid-state disk's takes
/// longer, a seeking disk's milliseconds).
const NOTHING_WRITTEN: Duration = Duration::from_micros(100);

/// What to do with the next copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Write it and wait, timing it.
    Probe,
    /// Start its write-back.
    Send,
    /// Leave it and the rest to the kernel.
    Stop,
}

/// The measurement of the destination's writes, while it lasts.
struct Probe {
    /// Measuring (`Wanted::Measured`) and not yet decided.
    open: bool,
    /// Copies written and waited for.
    probed: usize,
    /// The times of those that had something to write.
    took: Vec<Duration>,
}

impl Probe {
    fn new(wanted: Wanted) -> Probe {
        Probe { open: wanted == Wanted::Measured, probed: 0, took: Vec::new() }
    }

    /// The step for a copy of `len` bytes: probes on small copies (a write of a few blocks,
    /// whose time is the disk's getting there) until enough wrote something (or four times as
    /// many were tried); then sending if they were slow. With nothing to tell by, the rest is
    /// sent as on a slow disk.
    fn next(&mut self, len: u64) -> Step {
        if !self.open {
            return Step::Send;
        }
        if len <= SMALL_FILE && self.took.len() < PROBE_READS && self.probed < 4 * PROBE_READS {
            self.probed += 1;
            return Step::Probe;
        }
        self.open = false;
        if self.took.is_empty() || reads_seek(&self.took) {
            Step::Send
        } else {
            Step::Stop
        }
    }

    /// Writes `file` and waits; its time counts unless it was too short to have written
    /// anything (the kernel's flusher, busy with others' writes, may have sent it already).
    fn time(&mut self, file: &File) {
        let started = Instant::now();
        write_back_and_wait(file);
        let took = started.elapsed();
        if took >= NOTHING_WRITTEN {
            self.took.push(took);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_decides_and_else_a_destination_that_rotates_is_measured() {
        assert_eq!(wanted(Ok(Some(true)), None), Wanted::Always);
        assert_eq!(wanted(Ok(Some(false)), Some(true)), Wanted::Never);
        assert_eq!(wanted(Ok(None), Some(true)), Wanted::Measured);
        assert_eq!(wanted(Ok(None), Some(false)), Wanted::Never);
        assert_eq!(wanted(Ok(None), None), Wanted::Never, "tmpfs: no device");
        let nonsense = SettingError::NotSwitch { name: "DEDUP_SYNC_WRITEBACK", value: "x".into() };
        assert_eq!(wanted(Err(nonsense), Some(true)), Wanted::Measured, "the default holds");
    }

    #[test]
    fn a_measured_write_back_probes_small_copies_then_sends_only_after_slow_writes() {
        let slow = Duration::from_millis(6);
        let fast = Duration::from_micros(300);
        for (took, then) in [(slow, Step::Send), (fast, Step::Stop)] {
            let mut probe = Probe::new(Wanted::Measured);
            for _ in 0..PROBE_READS {
                assert_eq!(probe.next(4096), Step::Probe);
                probe.took.push(took);
            }
            assert_eq!(probe.probed, PROBE_READS);
            assert_eq!(probe.next(4096), then);
            assert_eq!(probe.next(1 << 20), Step::Send, "decided: not asked again");
        }
        // Copies already written by the kernel time nothing: after four times the probes, the
        // rest is sent as on a slow disk.
        let mut probe = Probe::new(Wanted::Measured);
        for _ in 0..4 * PROBE_READS {
            assert_eq!(probe.next(4096), Step::Probe);
        }
        assert_eq!(probe.next(4096), Step::Send);
        // Only large copies: nothing to measure by, sent as on a slow disk.
        assert_eq!(Probe::new(Wanted::Measured).next(1 << 20), Step::Send);
        assert_eq!(Probe::new(Wanted::Always).next(4096), Step::Send);
    }

    #[test]
    fn copies_are_remembered_only_once_wanted_and_taken_in_the_plans_order() {
        let file = File::open("/dev/null").unwrap();
        let wb = WriteBack::default();
        wb.add((0, 0), &file, 1);
        assert!(wb.take().is_empty(), "not wanted: nothing remembered");
        wb.open();
        for at in [(3, 1), (0, 5), (3, 0), (1, 2)] {
            wb.add(at, &file, 10);
        }
        let order: Vec<(usize, usize)> = wb.take().iter().map(|m| m.at).collect();
        assert_eq!(order, [(0, 5), (1, 2), (3, 0), (3, 1)]);
        assert!(wb.take().is_empty(), "taken once");
    }
}
