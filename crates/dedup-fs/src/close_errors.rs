//! Which file systems can report a failed write only when a file is closed. NFS, SMB, FUSE and
//! the stacking file systems implement the kernel's `flush` file operation, run at every
//! `close`, and report there a write-back that failed after `write` returned; ext4, XFS, btrfs
//! and tmpfs have no `flush`, so a `close` there reports nothing and [`crate::flush`] has
//! nothing to collect. One `fstatfs` per destination device tells them apart, so that the
//! flush costs a copy onto a local disk nothing.

use std::os::fd::BorrowedFd;
use std::sync::Mutex;

/// `f_type` values of file systems with no `flush` file operation: a `close` there never
/// returns an error. Anything not listed (or not known) is flushed.
const NO_FLUSH: [i64; 4] = [
    0xef53,      // ext2, ext3, ext4
    0x5846_5342, // XFS
    0x9123_683e, // btrfs
    0x0102_1994, // tmpfs
];

/// True unless the file system `fd` lies on is known to report nothing at `close`.
pub fn errors_at_close(fd: BorrowedFd<'_>) -> bool {
    // `f_type` is an i64 on x86_64 but narrower elsewhere: the cast is needed.
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::fstatfs(fd).map_or(true, |s| !NO_FLUSH.contains(&(s.f_type as i64)))
}

/// [`errors_at_close`], asked once per device for a run that writes many files.
#[derive(Debug, Default)]
pub struct CloseErrors(Mutex<Vec<(u64, bool)>>);

impl CloseErrors {
    /// Whether a file made in `dir`, on device `dev`, must be flushed before it takes its name.
    pub fn at(&self, dev: u64, dir: BorrowedFd<'_>) -> bool {
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, errors)) = known.iter().find(|(d, _)| *d == dev) {
            return errors;
        }
        let errors = errors_at_close(dir);
        known.push((dev, errors));
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_directory_on_tmpfs_reports_nothing_at_close_and_procfs_is_not_trusted() {
        // /dev/shm is tmpfs on every Linux this runs on; /proc is none of the listed ones.
        let shm = std::fs::File::open("/dev/shm").unwrap();
        let proc = std::fs::File::open("/proc").unwrap();
        let seen = CloseErrors::default();
        assert!(!seen.at(1, shm.as_fd()));
        assert!(errors_at_close(proc.as_fd()));
        // Asked once per device: the answer for device 1 stands whatever directory is given.
        assert!(!seen.at(1, proc.as_fd()));
        assert!(seen.at(2, proc.as_fd()));
    }
}
