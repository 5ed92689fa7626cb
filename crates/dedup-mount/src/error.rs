//! Why a mount could not be made or served; each names the mount point or the repository object
//! and the reason.

use std::io;
use std::path::PathBuf;

use crate::preflight::PreflightError;

/// Everything that ends a mount.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// A piece a mount needs is missing (checked before anything is opened).
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    /// The repository could not give what mounting needs (its index, its snapshot list).
    #[error(transparent)]
    Store(#[from] dedup_store::Error),
    /// The kernel or `fusermount3` refused the mount.
    #[error("cannot mount on {}: {cause}", path.display())]
    Mount {
        /// The mount point.
        path: PathBuf,
        /// What was said.
        cause: io::Error,
    },
    /// The connection to the kernel failed while serving.
    #[error("the mount on {} failed: {cause}", path.display())]
    Serve {
        /// The mount point.
        path: PathBuf,
        /// What was said.
        cause: io::Error,
    },
}
