//! What a mount needs, checked before the repository is opened so that a missing piece is one
//! clear message: the FUSE device, `fusermount3` (how a user who is not root mounts and
//! unmounts), and an empty directory to mount on.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// The FUSE device.
pub const FUSE_DEVICE: &str = "/dev/fuse";
/// The set-user-id helper that mounts and unmounts FUSE file systems for users.
pub const FUSERMOUNT: &str = "fusermount3";

/// `program` found in `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Checks the FUSE device, the helper (not needed by root, who mounts directly) and the
/// mount point.
pub fn check(mountpoint: &Path) -> Result<()> {
    if !Path::new(FUSE_DEVICE).exists() {
        bail!(
            "{FUSE_DEVICE} is missing: load the FUSE module (`modprobe fuse`), or give the \
             container the device"
        );
    }
    if !rustix::process::geteuid().is_root() {
        if find_program(FUSERMOUNT).is_none() {
            bail!("{FUSERMOUNT} is not installed (Debian and Ubuntu: `apt install fuse3`)");
        }
        let both = rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK;
        if rustix::fs::access(FUSE_DEVICE, both).is_err() {
            bail!(
                "{FUSE_DEVICE} cannot be opened by this user (it is usually mode 0666; here only \
                 root may use FUSE)"
            );
        }
    }
    let shown = mountpoint.display();
    let meta = match std::fs::metadata(mountpoint) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            bail!("{shown}: no such directory to mount on")
        }
        Err(err) if err.raw_os_error() == Some(rustix::io::Errno::NOTCONN.raw_os_error()) => {
            bail!(
                "{shown}: a mount whose program ended is still there; `{FUSERMOUNT} -u {shown}` \
                 removes it"
            )
        }
        Err(err) => bail!("{shown}: {err}"),
    };
    if !meta.is_dir() {
        bail!("{shown}: not a directory");
    }
    let mut entries = std::fs::read_dir(mountpoint).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    if entries.next().is_some() {
        bail!("{shown}: not empty; mount on an empty directory");
    }
    Ok(())
}
