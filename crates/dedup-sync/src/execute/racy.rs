//! Copies this run made of sources read within the racy window of their stamp and finished
//! before the window passed (`copy::Written::racy_until`): once it has passed, each is compared
//! with its source and, found equal, given its times again, which moves its change time past
//! the window, so that later runs trust its stamp instead of reading both files every time (git's
//! "racily clean" entries). The run that wrote the copy does this, so a later run with nothing
//! to do writes nothing. The window is 50 ms past a stamp with sub-second digits: the run waits
//! for what is left of it. A whole-second stamp's window is two seconds: those copies are left
//! to later runs, which compare them by content (and write nothing).

use std::os::fd::AsFd;
use std::sync::Mutex;
use std::time::Duration;

use dedup_fs::{open_file_at, set_times, Target};
use dedup_scan::Metadata;
use rustix::fs::fstat;

use super::{name_of, Exec};
use crate::rel_path::split;
use crate::verify::{Comparer, Depth};

/// The longest a run waits at its end for racy windows to pass.
const LONGEST_WAIT_NS: i64 = 100_000_000;

/// Past a window's end, for the kernel's coarse clock, by which change times are stamped, to
/// have passed it too (it lags the precise clock by up to a tick).
const CLOCK_MARGIN_NS: i64 = 10_000_000;

/// Copies to compare once their window has passed: path below DST and the window's end.
#[derive(Debug, Default)]
pub struct Pending(Mutex<Vec<(Vec<u8>, i64)>>);

impl Pending {
    /// The copy at `rel` is racy until `until`.
    pub fn add(&self, rel: Vec<u8>, until: i64) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push((rel, until));
    }

    fn take(&self) -> Vec<(Vec<u8>, i64)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Wait for the short windows to pass, then settle each of their copies.
pub fn settle(x: &Exec<'_>) {
    let now = now_ns();
    let due: Vec<(Vec<u8>, i64)> =
        x.racy.take().into_iter().filter(|(_, until)| *until - now <= LONGEST_WAIT_NS).collect();
    let Some(last) = due.iter().map(|(_, until)| *until).max() else { return };
    let wait = last + CLOCK_MARGIN_NS - now;
    if wait > 0 {
        std::thread::sleep(Duration::from_nanos(wait.unsigned_abs()));
    }
    let mut comparer = Comparer::default();
    for (rel, _) in due {
        // Not settled (an error, or bytes that differ): a later run compares it again.
        let _ = settle_one(x, &rel, &mut comparer);
    }
}

fn settle_one(x: &Exec<'_>, rel: &[u8], comparer: &mut Comparer) -> Result<(), dedup_fs::FsError> {
    let (parent, _) = split(rel);
    let source = open_file_at(x.src_dir(parent)?, name_of(rel))?;
    let copy = open_file_at(x.dst_dir(parent)?, name_of(rel))?;
    let (s, c) = (fstat(&source)?, fstat(&copy)?);
    let (Some(s), Some(c)) = (Metadata::from_stat(&s), Metadata::from_stat(&c)) else {
        return Ok(());
    };
    if (s.size, s.mtime_ns) != (c.size, c.mtime_ns) {
        return Ok(());
    }
    if comparer.same_files(&source, &copy, s.size, Depth::Whole)? {
        set_times(Target::Fd(copy.as_fd()), c.atime_ns, c.mtime_ns)?;
    }
    Ok(())
}

/// The current time in ns since the epoch.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
