//! `cachestat(2)` (Linux 6.5), which rustix and libc do not wrap: how many pages of a range of an
//! open file are in the page cache, counting those still being read in. A reader that read a
//! file ahead into the page cache asks it before relying on those pages: a read that must not
//! wait (`RWF_NOWAIT`) cannot tell a page still on its way from one that was evicted. On an older
//! kernel the first call answers `ENOSYS`, and every later one answers `None` without asking.
#![allow(unsafe_code)]

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// `__NR_cachestat`: one number on every architecture (from 424 on, the tables are unified).
const SYS_CACHESTAT: libc::c_long = 451;

/// The kernel answered `ENOSYS` once.
static MISSING: AtomicBool = AtomicBool::new(false);

/// `struct cachestat_range`.
#[repr(C)]
struct Range {
    off: u64,
    len: u64,
}

/// `struct cachestat`.
#[repr(C)]
#[derive(Default)]
struct Stat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// Pages of `file` from `offset` for `len` bytes that are in the page cache (read in or being
/// read in); `None` where the kernel cannot tell.
pub(crate) fn pages_cached(file: &File, offset: u64, len: u64) -> Option<u64> {
    if MISSING.load(Ordering::Relaxed) {
        return None;
    }
    let range = Range { off: offset, len };
    let mut stat = Stat::default();
    // SAFETY: cachestat(fd, range, stat, flags) reads the `struct cachestat_range` at `range` and
    // writes one `struct cachestat` at `stat`; both are `repr(C)` structs of the kernel's layout
    // (two and five u64s), alive and borrowed for the call. The descriptor is open for the call.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0 as libc::c_uint,
        )
    };
    if r == 0 {
        return Some(stat.nr_cache);
    }
    if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
        MISSING.store(true, Ordering::Relaxed);
    }
    None
}

/// The size of a page of the page cache.
pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf only reads a value of the running system; it has no pointer arguments.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_just_written_is_in_the_page_cache_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![3u8; 5 * 4096 + 10]).unwrap();
        let file = File::open(&path).unwrap();
        // Where the kernel has no cachestat there is nothing to check.
        if let Some(pages) = pages_cached(&file, 0, 5 * 4096 + 10) {
            assert_eq!(pages, 6);
        }
    }
}
