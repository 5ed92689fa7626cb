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
//! On where the destination's device spins ([`dedup_scan::layout::spins`]: it says it rotates
//! and is no virtual disk saying so by default), or as `DEDUP_SYNC_WRITEBACK=1` or `0`
//! asks (to measure one against the other).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use dedup_core::env_setting::{switch, SettingError};
use dedup_fs::{reopen_for_write_back, small_first, start_write_back};

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

/// Whether this run sends its copies to the disk itself: as `DEDUP_SYNC_WRITEBACK` says, else
/// where the destination's device `rotates` ([`dedup_scan::layout::spins`]; `None` for a file
/// system without one or a virtual disk,
/// such as tmpfs, where there is nothing to send). A setting that is neither `0` nor `1`
/// leaves the default (the run warns of it).
pub fn wanted(setting: Result<Option<bool>, SettingError>, rotates: Option<bool>) -> bool {
    match setting {
        Ok(Some(forced)) => forced,
        Ok(None) | Err(_) => rotates == Some(true),
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
/// order; a copy that is no longer there as made is left alone.
pub fn send(x: &Exec<'_>, plan: &Plan) {
    let made = x.write_back.take();
    let lens: Vec<u64> = made.iter().map(|m| m.len).collect();
    let mut open: Option<(usize, Option<OwnedFd>)> = None;
    for i in small_first(&lens) {
        let Made { at: (dir, action), ino, .. } = made[i];
        let d = &plan.dirs[dir];
        if open.as_ref().is_none_or(|(n, _)| *n != dir) {
            open = Some((dir, x.dst_dir(&d.rel).ok()));
        }
        let Some((_, Some(fd))) = open.as_ref() else { continue };
        if let Some(file) = reopen_for_write_back(fd, name_of(d.actions[action].name()), ino) {
            start_write_back(&file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_decides_and_else_a_destination_that_rotates() {
        assert!(wanted(Ok(Some(true)), None));
        assert!(!wanted(Ok(Some(false)), Some(true)));
        assert!(wanted(Ok(None), Some(true)));
        assert!(!wanted(Ok(None), Some(false)));
        assert!(!wanted(Ok(None), None), "tmpfs: no device");
        let nonsense = SettingError::NotSwitch { name: "DEDUP_SYNC_WRITEBACK", value: "x".into() };
        assert!(wanted(Err(nonsense), Some(true)), "nonsense leaves the default");
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
