//! Directories far below their root are opened relative to their parent's open descriptor,
//! not by path. The kernel refuses a path over `PATH_MAX`, and opening such a path one component
//! at a time from the root costs as many `openat` calls as the directory is deep: a chain of
//! thousands of levels then costs a number of calls that grows with the square of its depth.
//! Holding the parent open makes each directory one call, and also means no symlink swapped into
//! a path above it can redirect the walk.
//!
//! Shallow directories keep being opened by path, so that a wide tree does not hold one
//! descriptor per pending directory; the descriptors held for deep ones are counted and capped
//! well below the usual limit of open files, beyond which the walk falls back to opening by path.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::open::{open_dir, open_dir_at};

/// Paths at least this long are opened relative to their parent: half of `PATH_MAX`, so that
/// every path the kernel would refuse is covered with room to spare.
const DEEP_PATH: usize = 2048;

/// At most this many parent directories are held open at once for their deep children.
const MOST_HELD: usize = 512;

static HELD: AtomicUsize = AtomicUsize::new(0);

/// A directory held open for its deep subdirectories; counted while it lives.
#[derive(Debug)]
pub(super) struct HeldDir(OwnedFd);

impl Drop for HeldDir {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `fd`, held for the subdirectories of the directory at `path` if they are deep enough to need
/// it and the cap allows; `None` otherwise (the descriptor is then closed).
pub(super) fn hold_for_children(fd: OwnedFd, path: &Path) -> Option<Arc<HeldDir>> {
    if path.as_os_str().len() + 1 < DEEP_PATH {
        return None;
    }
    let held = HELD.fetch_add(1, Ordering::Relaxed);
    if held >= MOST_HELD {
        HELD.fetch_sub(1, Ordering::Relaxed);
        return None;
    }
    Some(Arc::new(HeldDir(fd)))
}

/// Open the directory at `path` for listing: relative to its `parent` when one is held, by its
/// path otherwise. `follow` allows the last component to be a symlink.
pub(super) fn open(path: &Path, parent: Option<&HeldDir>, follow: bool) -> io::Result<OwnedFd> {
    match (parent, path.file_name()) {
        (Some(parent), Some(name)) => open_dir_at(parent.0.as_fd(), name, follow),
        _ => open_dir(path, follow),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{mkdirat, openat, Mode, OFlags};
    use std::path::PathBuf;

    fn dir_fd(path: &Path) -> OwnedFd {
        openat(rustix::fs::CWD, path, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn shallow_directories_are_not_held() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(hold_for_children(dir_fd(tmp.path()), tmp.path()).is_none());
    }

    #[test]
    fn a_deep_child_opens_through_its_held_parent_and_a_symlink_there_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path();
        mkdirat(dir_fd(parent), "child", Mode::from_raw_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("child", parent.join("link")).unwrap();
        let long = PathBuf::from(format!("{}/{}", parent.display(), "x/".repeat(DEEP_PATH)));
        let held = hold_for_children(dir_fd(parent), &long).expect("deep enough to hold");
        let child = long.join("child");
        // The long path does not exist: only the held parent can have opened it.
        assert!(open(&child, Some(&held), false).is_ok());
        let link = long.join("link");
        assert!(open(&link, Some(&held), false).is_err());
        assert!(open(&link, Some(&held), true).is_ok());
    }
}
