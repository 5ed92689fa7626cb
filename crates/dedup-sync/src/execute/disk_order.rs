//! Copying in the order of the disk, where the source lies on a disk that seeks: a spinning
//! disk spends 8-12 ms getting to a small file and well under one reading it, so files copied
//! by several threads at once make the head travel between nearly every request (the linux
//! source copied from the modelled disk of bench/hdd took several times as long as `cp -a`:
//! docs/BENCHMARKS.md has the figures).
//!
//! There, the copies of new files are sorted by where their first byte lies (`FIEMAP`,
//! `dedup_scan::layout`; files whose place is unknown go after, by inode number), one thread
//! asks the kernel for them in that order, small files a batch at a time so that files lying
//! back to back are read in merged requests (`dedup_scan::read::ahead`), and one thread copies
//! them in the same order, each waiting until its file was asked for, so it reads the page cache
//! instead of sending requests of its own. Every other action (metadata, renames, links,
//! symlinks, clones of a moved file) runs first, as it would otherwise: it reads no file
//! content. What is copied and how does not change, only the order; a page evicted before the
//! copy comes is simply read again.
//!
//! Where it is on: a source device that says it rotates (`queue/rotational`) and whose reads
//! measure slow (the first page of a few files not in the page cache, as the finder decides: a
//! virtual disk may say it rotates on solid-state storage, where one copying thread would only
//! hold back a device that serves many reads at once). [`DiskOrder`] forces it on or off.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use dedup_fs::open_file_at;
use dedup_scan::layout::{self, Address};
use dedup_scan::read::ahead::reading_ahead;
use dedup_scan::read::together::Wanted;
use dedup_scan::EntryKind;

use super::{entries, name_of, Exec};
use crate::options::DiskOrder;
use crate::plan::{Action, Op, Plan};

/// Bytes of one file asked for ahead at most: the kernel's own read-ahead follows a long file
/// read from its start, and asking for all of a huge file would fill the page cache at once.
const AHEAD_PER_FILE: u64 = 32 << 20;

/// One copy to make: the directory's index in the plan and the action's in the directory.
pub(super) type Copy = (usize, usize);

/// Whether `action` copies a source file's content (the reads this module orders).
pub(super) fn reads_source(action: &Action) -> bool {
    matches!(action.op, Op::Create)
        && action.src.kind == EntryKind::File
        && action.src.meta.is_some_and(|m| m.size > 0)
}

/// Whether copies from a device are made in the order of the disk under `choice`, given whether
/// it says it rotates; `slow` measures, and is asked only when the answer depends on it.
pub(super) fn chosen(
    choice: DiskOrder,
    rotates: Option<bool>,
    slow: impl FnOnce() -> bool,
) -> bool {
    match choice {
        DiskOrder::Always => true,
        DiskOrder::Never => false,
        DiskOrder::Measured => rotates == Some(true) && slow(),
    }
}

/// Whether `copies` are made in the order of the disk in this run.
pub(super) fn on(x: &Exec<'_>, plan: &Plan, copies: &[Copy]) -> bool {
    if copies.len() < 2 {
        return false;
    }
    let dev = rustix::fs::fstat(&x.src_fd).map_or(0, |st| st.st_dev);
    chosen(x.disk_order, layout::rotational(dev), || layout::reads_seek(&probe(x, plan, copies)))
}

/// How long reading the first page took, for up to [`layout::PROBE_READS`] of `copies` spread over the
/// list whose pages are not in the page cache (a cached page says nothing of the device).
fn probe(x: &Exec<'_>, plan: &Plan, copies: &[Copy]) -> Vec<Duration> {
    let step = (copies.len() / layout::PROBE_READS).max(1);
    let mut took = Vec::new();
    for &(dir, action) in copies.iter().step_by(step) {
        if took.len() >= layout::PROBE_READS {
            break;
        }
        let Some(file) = open_source(x, plan, (dir, action)) else { continue };
        took.extend(layout::first_page_read(&file));
    }
    took
}

/// The source file of a copy, opened without following a symlink (`None`: the copy reports it).
fn open_source(x: &Exec<'_>, plan: &Plan, (dir, action): Copy) -> Option<File> {
    let d = &plan.dirs[dir];
    let dir_fd = x.src_dir(&d.rel).ok()?;
    open_file_at(&dir_fd, name_of(d.actions[action].name())).ok()
}

/// Where a copy's first byte lies, as a key that sorts copies in the order of the disk: known
/// places first, by device and address, then the others by inode number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Place {
    dev: u64,
    unknown: bool,
    at: u64,
}

impl Place {
    fn new(dev: u64, ino: u64, address: Address) -> Place {
        match address {
            Address::At(at) => Place { dev, unknown: false, at },
            Address::Unknown | Address::Unsupported => Place { dev, unknown: true, at: ino },
        }
    }
}

/// `copies` sorted by their places: each directory's source opened once, a device that cannot
/// tell where files lie asked once.
fn sorted(x: &Exec<'_>, plan: &Plan, mut copies: Vec<Copy>) -> Vec<Copy> {
    copies.sort_unstable();
    let mut blind: Vec<u64> = Vec::new();
    let mut open: Option<(usize, Option<OwnedFd>)> = None;
    let mut placed: Vec<(Place, Copy)> = Vec::with_capacity(copies.len());
    for (dir, action) in copies {
        let d = &plan.dirs[dir];
        let (dev, ino) = d.actions[action].src.meta.map_or((0, 0), |m| (m.dev, m.ino));
        let address = if blind.contains(&dev) {
            Address::Unsupported
        } else {
            if open.as_ref().is_none_or(|(n, _)| *n != dir) {
                open = Some((dir, x.src_dir(&d.rel).ok()));
            }
            let fd = open.as_ref().and_then(|(_, fd)| fd.as_ref());
            fd.and_then(|fd| open_file_at(fd, name_of(d.actions[action].name())).ok())
                .map_or(Address::Unknown, |file| layout::address_of(&file, 0))
        };
        if address == Address::Unsupported {
            blind.push(dev);
        }
        placed.push((Place::new(dev, ino, address), (dir, action)));
    }
    placed.sort_by_key(|&(place, copy)| (place, copy));
    placed.into_iter().map(|(_, copy)| copy).collect()
}

/// Consecutive copies of one directory, as (directory, its actions, index of the first in the
/// whole order): each run opens its directories once.
pub(super) fn runs(order: &[Copy]) -> Vec<(usize, Vec<usize>, usize)> {
    let mut runs: Vec<(usize, Vec<usize>, usize)> = Vec::new();
    for (n, &(dir, action)) in order.iter().enumerate() {
        match runs.last_mut() {
            Some((d, list, _)) if *d == dir => list.push(action),
            _ => runs.push((dir, vec![action], n)),
        }
    }
    runs
}

/// Make `copies`, one at a time, in the order of the disk, while a thread reads ahead of them.
pub(super) fn copy_in_order(x: &Exec<'_>, plan: &Plan, copies: Vec<Copy>) {
    let order = sorted(x, plan, copies);
    let dev = rustix::fs::fstat(&x.src_fd).map_or(0, |st| st.st_dev);
    let piece = layout::read_ahead_piece(dev);
    // Only the read-ahead thread opens through it: consecutive files mostly share a directory.
    let dir_open: Mutex<Option<(usize, OwnedFd)>> = Mutex::new(None);
    let request = |i: usize| -> Option<Wanted> {
        let (dir, action) = order[i];
        let d = &plan.dirs[dir];
        let mut open = dir_open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.as_ref().is_none_or(|(n, _)| *n != dir) {
            *open = Some((dir, x.src_dir(&d.rel).ok()?));
        }
        let (_, fd) = open.as_ref()?;
        let file = open_file_at(fd.as_fd(), name_of(d.actions[action].name())).ok()?;
        let size = d.actions[action].src.meta.map_or(0, |m| m.size);
        Some(Wanted { file, offset: 0, len: size.min(AHEAD_PER_FILE), piece })
    };
    reading_ahead(order.len(), &request, |ahead| {
        for (dir, list, first) in runs(&order) {
            let wait = |n| ahead.wait_for(first + n);
            entries::run_dir_waiting(x, dir, &plan.dirs[dir], &list, &wait);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_choices_stand_and_a_measured_one_needs_a_slow_disk_that_rotates() {
        let never_measured = || -> bool { panic!("not measured when forced or not rotating") };
        assert!(chosen(DiskOrder::Always, Some(false), never_measured));
        assert!(!chosen(DiskOrder::Never, Some(true), never_measured));
        assert!(!chosen(DiskOrder::Measured, Some(false), never_measured));
        assert!(!chosen(DiskOrder::Measured, None, never_measured));
        assert!(chosen(DiskOrder::Measured, Some(true), || true));
        // A virtual disk that says it rotates but reads fast.
        assert!(!chosen(DiskOrder::Measured, Some(true), || false));
    }

    #[test]
    fn known_places_go_first_by_device_and_address_then_unknown_ones_by_inode() {
        let mut places = [
            Place::new(1, 50, Address::Unknown),
            Place::new(1, 10, Address::At(9 << 20)),
            Place::new(1, 99, Address::At(4096)),
            Place::new(1, 5, Address::Unsupported),
            Place::new(0, 7, Address::At(1 << 30)),
        ];
        places.sort();
        let keys: Vec<(u64, bool, u64)> = places.iter().map(|p| (p.dev, p.unknown, p.at)).collect();
        assert_eq!(
            keys,
            [
                (0, false, 1 << 30),
                (1, false, 4096),
                (1, false, 9 << 20),
                (1, true, 5),
                (1, true, 50)
            ]
        );
    }

    #[test]
    fn consecutive_copies_of_a_directory_make_one_run_numbered_from_its_first() {
        let order = [(3, 0), (3, 2), (1, 4), (3, 1), (3, 5), (3, 6)];
        assert_eq!(runs(&order), [(3, vec![0, 2], 0), (1, vec![4], 2), (3, vec![1, 5, 6], 3)],);
        assert!(runs(&[]).is_empty());
    }
}
