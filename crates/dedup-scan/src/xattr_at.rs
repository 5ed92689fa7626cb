//! `listxattrat(2)` (Linux 6.13), which rustix does not wrap: the names of an entry's extended
//! attributes, by directory and name and without following a symlink. Before it, the only way
//! was `llistxattr` on the entry's `/proc/self/fd/<dir>/<name>` path, which the kernel resolves
//! through procfs on every call: several times the cost of the call on an open file
//! (docs/benchmarks/journal.md, "Sync start-up and per-file costs"). Here, beside the walk,
//! because both the walk (a backup reads every new entry's attributes) and dedup-fs use it. On
//! an older kernel the first call answers `ENOSYS`, and every later one goes the old way
//! without asking again.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::io::{Errno, Result as SysResult};

/// `__NR_listxattrat`: one number on every architecture (added after the system call tables
/// were unified, like the other calls from 424 on).
const SYS_LISTXATTRAT: libc::c_long = 465;

/// The kernel answered `ENOSYS` once.
static MISSING: AtomicBool = AtomicBool::new(false);

/// Whether `listxattrat` is worth trying.
pub fn available() -> bool {
    !MISSING.load(Ordering::Relaxed)
}

/// The names of `name`'s attributes in `dir` into `buf` (or their total size, without a
/// buffer), the symlink itself when it is one. `ENOSYS` is remembered: [`available`] is false
/// from then on.
pub fn list(dir: BorrowedFd<'_>, name: &CStr, buf: Option<&mut [u8]>) -> SysResult<usize> {
    let (ptr, len) = match buf {
        Some(b) => (b.as_mut_ptr(), b.len()),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: listxattrat(dirfd, path, at_flags, list, size) reads the NUL-terminated `name`,
    // which outlives the call, and writes at most `len` bytes at `ptr`, a buffer we hold
    // mutably for the call (or nothing, with a null pointer and a size of 0, when asked for the
    // size). `dir` is an open descriptor borrowed for the call.
    let r = unsafe {
        libc::syscall(
            SYS_LISTXATTRAT,
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
            ptr,
            len,
        )
    };
    if r >= 0 {
        return Ok(r as usize);
    }
    let errno = Errno::from_io_error(&std::io::Error::last_os_error()).unwrap_or(Errno::IO);
    if errno == Errno::NOSYS {
        MISSING.store(true, Ordering::Relaxed);
    }
    Err(errno)
}
