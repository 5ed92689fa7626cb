//! Opening paths the careful way. Reading never blocks on a FIFO that appeared where a regular
//! file was (`O_NONBLOCK`), a symlink swapped in below the roots is not followed unless asked
//! (`O_NOFOLLOW`), paths longer than `PATH_MAX` (deep trees of long names) are opened one
//! component at a time instead of failing, and reading a file's content or listing a directory
//! leaves its access time as it was (`O_NOATIME`, where the kernel allows it): a backup that
//! changed the access times it records would find every entry's metadata changed at its next
//! run, and rewrite the tree of every directory.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use dedup_core::{nanos, FileId, FileMeta};
use rustix::fs::{openat, Mode, OFlags, Stat, CWD};
use rustix::io::Errno;

/// The flags of every open for reading content.
const CONTENT: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK).union(OFlags::NOCTTY);

/// The kernel refused `O_NOATIME` once (`EPERM`: only the file's owner, or a process with
/// `CAP_FOWNER`, may ask for it). From then on this process opens without it, so that a tree of
/// other users' files costs one refused open, not one per file.
static NOATIME_REFUSED: AtomicBool = AtomicBool::new(false);

/// Runs `open` with `flags` plus `O_NOATIME` until the kernel first refuses it, then with
/// `flags` alone.
fn keeping_atime<T>(flags: OFlags, open: impl Fn(OFlags) -> io::Result<T>) -> io::Result<T> {
    if !NOATIME_REFUSED.load(Ordering::Relaxed) {
        match open(flags | OFlags::NOATIME) {
            Err(e) if e.raw_os_error() == Some(Errno::PERM.raw_os_error()) => {
                NOATIME_REFUSED.store(true, Ordering::Relaxed);
            }
            other => return other,
        }
    }
    open(flags)
}

/// Open a file for reading its content. `follow` allows the last component to be a symlink.
pub fn open_for_read(path: &Path, follow: bool) -> io::Result<File> {
    let mut flags = CONTENT | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    keeping_atime(flags, |flags| open_path(path, flags)).map(File::from)
}

/// Open the entry `name` of the directory `dir` for reading its content, without following a
/// symlink at `name` (`ELOOP`) or blocking on a FIFO that took a file's place.
pub fn open_content_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = CONTENT | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let open = |flags| openat(dir, name, flags, Mode::empty()).map_err(io::Error::from);
    keeping_atime(flags, open).map(File::from)
}

/// Open a directory for listing (leaving its access time as it was, as [`open_for_read`]).
/// `follow` allows the last component to be a symlink.
pub fn open_dir(path: &Path, follow: bool) -> io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    keeping_atime(flags, |flags| open_path(path, flags))
}

/// Open the subdirectory `name` of the open directory `dir` for listing, as [`open_dir`] does a
/// path.
pub fn open_dir_at(dir: BorrowedFd<'_>, name: &OsStr, follow: bool) -> io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let open = |flags| openat(dir, name, flags, Mode::empty()).map_err(io::Error::from);
    keeping_atime(flags, open)
}

/// The metadata dedup keeps from a `stat` result.
// The nanosecond fields are u64 on x86_64 but u32 on other architectures: the casts are needed.
#[allow(clippy::unnecessary_cast)]
pub fn meta_from_stat(st: &Stat) -> FileMeta {
    FileMeta {
        id: FileId { dev: st.st_dev, ino: st.st_ino },
        size: st.st_size.max(0) as u64,
        mtime_ns: nanos(st.st_mtime, st.st_mtime_nsec as u64),
        ctime_ns: nanos(st.st_ctime, st.st_ctime_nsec as u64),
    }
}

fn open_path(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    match openat(CWD, path, flags, Mode::empty()) {
        Err(Errno::NAMETOOLONG) => open_by_components(path, flags),
        other => other.map_err(io::Error::from),
    }
}

/// The kernel refuses paths over `PATH_MAX` bytes, but every single name is short: walk down with
/// `openat`, holding only the current directory open.
fn open_by_components(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let bytes = path.as_os_str().as_bytes();
    let (start, rest): (&[u8], &[u8]) = match bytes.strip_prefix(b"/") {
        Some(rest) => (b"/", rest),
        None => (b".", bytes),
    };
    let mut names: Vec<&[u8]> = rest.split(|&b| b == b'/').filter(|n| !n.is_empty()).collect();
    let last = names.pop().unwrap_or(b".");
    let step = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(CWD, start, step, Mode::empty())?;
    for name in names {
        dir = openat(&dir, name, step, Mode::empty())?;
    }
    Ok(openat(&dir, last, flags, Mode::empty())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn opens_paths_longer_than_path_max() {
        let tmp = tempfile::tempdir().unwrap();
        let mut path = tmp.path().to_path_buf();
        let name = "d".repeat(200);
        for _ in 0..30 {
            path.push(&name);
        }
        // create_dir_all fails beyond PATH_MAX, so build it relative to each level.
        let mut dir = File::open(tmp.path()).map(OwnedFd::from).unwrap();
        for _ in 0..30 {
            rustix::fs::mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            dir = openat(&dir, name.as_str(), OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty())
                .unwrap();
        }
        let fd =
            openat(&dir, "f", OFlags::CREATE | OFlags::WRONLY, Mode::from_raw_mode(0o644)).unwrap();
        rustix::io::write(&fd, b"deep").unwrap();
        path.push("f");
        assert!(path.as_os_str().len() > 4096);
        let mut content = String::new();
        open_for_read(&path, false).unwrap().read_to_string(&mut content).unwrap();
        assert_eq!(content, "deep");
        assert!(open_dir(path.parent().unwrap(), false).is_ok());
    }

    #[test]
    fn reading_and_listing_leave_access_times_as_they_were() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        std::fs::write(&path, b"content").unwrap();
        // Older than the modification time: a `relatime` mount would update it on a read.
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        let times = std::fs::FileTimes::new().set_accessed(old);
        File::options().write(true).open(&path).unwrap().set_times(times).unwrap();
        let dir = File::open(tmp.path()).unwrap();
        let by_name = open_content_at(std::os::fd::AsFd::as_fd(&dir), OsStr::new("f")).unwrap();
        for mut file in [open_for_read(&path, false).unwrap(), by_name] {
            let mut content = String::new();
            file.read_to_string(&mut content).unwrap();
            assert_eq!(content, "content");
        }
        assert_eq!(std::fs::metadata(&path).unwrap().accessed().unwrap(), old);

        let sub = tmp.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("entry"), b"").unwrap();
        File::open(&sub).unwrap().set_times(times).unwrap();
        let listed = open_dir(&sub, false).unwrap();
        let names = rustix::fs::Dir::read_from(&listed).unwrap().count();
        assert_eq!(names, 3, "., .. and entry");
        assert_eq!(std::fs::metadata(&sub).unwrap().accessed().unwrap(), old);
    }

    #[test]
    fn fifo_opens_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("pipe");
        rustix::fs::mknodat(CWD, &fifo, rustix::fs::FileType::Fifo, Mode::from_raw_mode(0o644), 0)
            .unwrap();
        // Without O_NONBLOCK this open would wait for a writer forever.
        assert!(open_for_read(&fifo, false).is_ok());
    }

    #[test]
    fn symlink_is_not_followed_unless_asked() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("target"), b"x").unwrap();
        std::os::unix::fs::symlink("target", tmp.path().join("link")).unwrap();
        assert!(open_for_read(&tmp.path().join("link"), false).is_err());
        assert!(open_for_read(&tmp.path().join("link"), true).is_ok());
    }
}

/// Why a file recorded by the walk could not be opened as that same file.
#[derive(Debug, thiserror::Error)]
pub enum OpenRecordedError {
    /// The operating system refused (permission, vanished, I/O error).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Something else now stands at the path (another inode, or not a regular file).
    #[error("file was replaced during the scan")]
    Replaced,
}

/// Open the file the walk recorded as `meta` at `path`, and check that the descriptor really is
/// that file (same device and inode, still a regular file) before anything is read from it.
pub fn open_recorded(
    path: &Path,
    meta: &FileMeta,
    follow: bool,
) -> Result<File, OpenRecordedError> {
    check_recorded(open_for_read(path, follow)?, meta)
}

/// The file just opened, once `fstat` shows that it is the regular file the walk recorded as
/// `meta` (same device and inode): for a file opened some other way than [`open_recorded`].
pub fn check_recorded(file: File, meta: &FileMeta) -> Result<File, OpenRecordedError> {
    let st = rustix::fs::fstat(&file).map_err(io::Error::from)?;
    if is_recorded(&st, meta) {
        Ok(file)
    } else {
        Err(OpenRecordedError::Replaced)
    }
}

/// Whether `st` is of the regular file the walk recorded as `meta` (same device and inode).
pub fn is_recorded(st: &Stat, meta: &FileMeta) -> bool {
    rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
        && FileId { dev: st.st_dev, ino: st.st_ino } == meta.id
}

/// Current metadata of an open file.
pub fn meta_of(file: &File) -> io::Result<FileMeta> {
    Ok(meta_from_stat(&rustix::fs::fstat(file).map_err(io::Error::from)?))
}
