//! What a mount needs, checked before the repository is opened so that a missing piece is one
//! clear message: the FUSE device, `fusermount3` (how a user who is not root mounts and
//! unmounts), and an empty directory to mount on.

use std::io;
use std::path::{Path, PathBuf};

/// The FUSE device.
pub const FUSE_DEVICE: &str = "/dev/fuse";
/// The set-user-id helper that mounts and unmounts FUSE file systems for users.
pub const FUSERMOUNT: &str = "fusermount3";

/// A piece a mount needs is missing.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// No FUSE device.
    #[error(
        "{FUSE_DEVICE} is missing: load the FUSE module (`modprobe fuse`), or give the container \
         the device"
    )]
    NoFuseDevice,
    /// A user who is not root has no `fusermount3`.
    #[error("{FUSERMOUNT} is not installed (Debian and Ubuntu: `apt install fuse3`)")]
    NoFusermount,
    /// A user who is not root may not open the FUSE device.
    #[error(
        "{FUSE_DEVICE} cannot be opened by this user (it is usually mode 0666; here only root may \
         use FUSE)"
    )]
    FuseDeviceDenied,
    /// The mount point does not exist.
    #[error("{}: no such directory to mount on", .0.display())]
    NoMountPoint(PathBuf),
    /// A FUSE mount whose program ended is still on the mount point.
    #[error(
        "{}: a mount whose program ended is still there; `{FUSERMOUNT} -u {}` removes it",
        .0.display(),
        .0.display()
    )]
    StaleMount(PathBuf),
    /// The mount point is not a directory.
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The mount point holds entries.
    #[error("{}: not empty; mount on an empty directory", .0.display())]
    NotEmpty(PathBuf),
    /// The mount point could not be looked at.
    #[error("{}: {cause}", path.display())]
    Unreadable {
        /// The mount point.
        path: PathBuf,
        /// Why.
        cause: io::Error,
    },
}

/// `program` found in `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Checks the FUSE device, the helper (not needed by root, who mounts directly) and the
/// mount point; returns the mount point made absolute, with no symlink in it, where it can be.
pub fn check(mountpoint: &Path) -> Result<PathBuf, PreflightError> {
    if !Path::new(FUSE_DEVICE).exists() {
        return Err(PreflightError::NoFuseDevice);
    }
    if !rustix::process::geteuid().is_root() {
        if find_program(FUSERMOUNT).is_none() {
            return Err(PreflightError::NoFusermount);
        }
        let both = rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK;
        if rustix::fs::access(FUSE_DEVICE, both).is_err() {
            return Err(PreflightError::FuseDeviceDenied);
        }
    }
    let path = mountpoint.to_path_buf();
    let meta = match std::fs::metadata(mountpoint) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(PreflightError::NoMountPoint(path))
        }
        Err(err) if err.raw_os_error() == Some(rustix::io::Errno::NOTCONN.raw_os_error()) => {
            return Err(PreflightError::StaleMount(path))
        }
        Err(cause) => return Err(PreflightError::Unreadable { path, cause }),
    };
    if !meta.is_dir() {
        return Err(PreflightError::NotADirectory(path));
    }
    let mut entries = match std::fs::read_dir(mountpoint) {
        Ok(entries) => entries,
        Err(cause) => return Err(PreflightError::Unreadable { path, cause }),
    };
    if entries.next().is_some() {
        return Err(PreflightError::NotEmpty(path));
    }
    Ok(mountpoint.canonicalize().unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether FUSE can be used here; if not, the test is skipped with a message, or fails under
    /// DEDUP_TEST_REQUIRE_ALL=1.
    fn fuse_usable(test: &str) -> bool {
        let why = if !Path::new(FUSE_DEVICE).exists() {
            format!("{FUSE_DEVICE} is missing")
        } else if !rustix::process::geteuid().is_root() && find_program(FUSERMOUNT).is_none() {
            format!("{FUSERMOUNT} is not installed")
        } else {
            return true;
        };
        if std::env::var("DEDUP_TEST_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!("{test}: cannot run: {why} (DEDUP_TEST_REQUIRE_ALL=1)");
        }
        eprintln!("SKIPPED {test}: {why} (set DEDUP_TEST_REQUIRE_ALL=1 to make this a failure)");
        false
    }

    #[test]
    fn only_an_empty_directory_passes() {
        if !fuse_usable("only_an_empty_directory_passes") {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(check(&empty).unwrap(), empty.canonicalize().unwrap());
        std::fs::write(empty.join("x"), b"").unwrap();
        assert!(matches!(check(&empty), Err(PreflightError::NotEmpty(_))));
        assert!(matches!(check(&empty.join("x")), Err(PreflightError::NotADirectory(_))));
        let absent = check(&tmp.path().join("absent")).unwrap_err().to_string();
        assert!(absent.ends_with("absent: no such directory to mount on"), "{absent}");
    }
}
