//! The destination file system's timestamp precision, probed rather than assumed: a temporary
//! file of ours is given a modification time with every digit of nanoseconds set, and what the
//! file system kept tells its granularity (1 ns on ext4, XFS, btrfs and tmpfs; 100 ns on NTFS;
//! 10 ms on exFAT; 2 s on FAT). Probed only when a comparison needs it: when a destination time
//! is the source's cut short. The directory's own times are put back afterwards.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::OnceLock;

use dedup_fs::{set_times, Target, TempFile};
use dedup_scan::{open_dir, Metadata};
use rustix::fs::fstat;

/// A time with every digit of its nanoseconds set (2023-11-14, far from any edge).
const PROBE_NS: i64 = 1_700_000_001_987_654_321;

/// Granularities recognised, finest first.
const GRAINS: [i64; 7] = [1, 100, 1_000, 1_000_000, 10_000_000, 1_000_000_000, 2_000_000_000];

/// The destination's precision, probed on first need.
pub struct Probe<'a> {
    dst: Option<&'a Path>,
    root: Option<Metadata>,
    grain: OnceLock<i64>,
}

impl<'a> Probe<'a> {
    /// A probe of the file system holding `dst` (none when it does not exist yet: then every
    /// destination time is one this run sets, and the finest grain is assumed); `root` is the
    /// directory's metadata as walked, to put its times back.
    pub fn new(dst: Option<&'a Path>, root: Option<Metadata>) -> Probe<'a> {
        Probe { dst, root, grain: OnceLock::new() }
    }

    /// The granularity in nanoseconds (1 when it cannot be probed: the safe answer, which
    /// copies rather than trusts).
    pub fn grain(&self) -> i64 {
        *self.grain.get_or_init(|| self.dst.and_then(|d| probe(d, self.root)).unwrap_or(1))
    }
}

fn probe(dst: &Path, root: Option<Metadata>) -> Option<i64> {
    let dir = open_dir(dst, true).ok()?;
    let kept = {
        let tmp = TempFile::new_in(dir.as_fd()).ok()?;
        set_times(Target::Fd(tmp.file().as_fd()), PROBE_NS, PROBE_NS).ok()?;
        let st = fstat(tmp.file()).ok()?;
        Metadata::from_stat(&st)?.mtime_ns
    };
    if let Some(m) = root {
        let _ = set_times(Target::Fd(dir.as_fd()), m.atime_ns, m.mtime_ns);
    }
    Some(grain_of(kept))
}

/// The coarsest recognised granularity that cutting [`PROBE_NS`] to gives `kept`.
fn grain_of(kept: i64) -> i64 {
    GRAINS.iter().rev().copied().find(|g| PROBE_NS.div_euclid(*g) * g == kept).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_file_system_kept_names_its_grain() {
        assert_eq!(grain_of(PROBE_NS), 1);
        assert_eq!(grain_of(1_700_000_001_987_654_000), 1_000);
        assert_eq!(grain_of(1_700_000_001_000_000_000), 1_000_000_000);
        assert_eq!(grain_of(1_700_000_000_000_000_000), 2_000_000_000);
        assert_eq!(grain_of(1_700_000_001_980_000_000), 10_000_000);
    }

    #[test]
    fn a_local_file_system_keeps_nanoseconds_and_the_directory_keeps_its_times() {
        let t = tempfile::tempdir().unwrap();
        let before = std::fs::metadata(t.path()).unwrap().modified().unwrap();
        let st = rustix::fs::stat(t.path()).unwrap();
        let probe = Probe::new(Some(t.path()), Metadata::from_stat(&st));
        assert!(probe.grain() <= 1_000, "{}", probe.grain());
        assert_eq!(std::fs::metadata(t.path()).unwrap().modified().unwrap(), before);
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "the probe file is gone");
    }
}
