//! Mounting a file system and serving it in the foreground until it is unmounted: the FUSE
//! options every dedup mount takes, the request loop, and an [`Unmounter`] for whoever stops it
//! early (the binary, on a signal): it unmounts, and a mount in use (a shell inside it, a file
//! open) is detached lazily: it leaves the tree at once and is served until its last user lets
//! go, when the request loop ends as it does when someone else unmounts it.
//!
//! The FUSE protocol is spoken by the `fuser` crate without libfuse: as root it mounts
//! `/dev/fuse` itself, as a user through `fusermount3`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fuser::{Config, Filesystem, MountOption, SessionUnmounter};

use crate::error::MountError;
use crate::preflight::FUSERMOUNT;

/// Threads answering the kernel: a read and an `ls` (or two reads) go on at once. More made
/// `ls -l` slower on 2 cores, each request waking more threads (docs/benchmarks/journal.md,
/// "Mounted snapshots"); data is fetched ahead by the file reader's own threads anyway.
const FUSE_THREADS: usize = 2;

/// How a file system is mounted.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Mounted `ro`: the kernel refuses every change before asking.
    pub read_only: bool,
    /// Threads answering the kernel's requests.
    pub threads: usize,
}

impl SessionOptions {
    /// A read-only mount.
    pub fn read_only() -> SessionOptions {
        SessionOptions { read_only: true, threads: FUSE_THREADS }
    }

    /// A writable mount: the kernel checks permissions by the mode bits (`default_permissions`).
    pub fn writable() -> SessionOptions {
        SessionOptions { read_only: false, threads: FUSE_THREADS }
    }

    fn config(&self) -> Config {
        let mut config = Config::default();
        let access = if self.read_only { MountOption::RO } else { MountOption::RW };
        config.mount_options = vec![
            access,
            MountOption::NoDev,
            MountOption::NoSuid,
            MountOption::FSName("dedup".into()),
            MountOption::Subtype("dedup".into()),
        ];
        if !self.read_only {
            config.mount_options.push(MountOption::DefaultPermissions);
        }
        config.n_threads = Some(self.threads.max(1));
        config.clone_fd = true;
        config
    }
}

/// A mounted file system, not served yet.
pub struct Session<FS: Filesystem> {
    session: fuser::Session<FS>,
    mountpoint: PathBuf,
    /// Set once an [`Unmounter`] was used: the end of the connection is then expected.
    unmounting: Arc<AtomicBool>,
}

impl<FS: Filesystem> Session<FS> {
    /// Mounts `fs` on `mountpoint` (checked by [`crate::preflight::check`]).
    pub fn mount(fs: FS, mountpoint: &Path, options: &SessionOptions) -> Result<Self, MountError> {
        let session = fuser::Session::new(fs, mountpoint, &options.config())
            .map_err(|cause| MountError::Mount { path: mountpoint.to_path_buf(), cause })?;
        Ok(Session {
            session,
            mountpoint: mountpoint.to_path_buf(),
            unmounting: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Where it is mounted.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// A handle that unmounts it from another thread.
    pub fn unmounter(&mut self) -> Unmounter {
        Unmounter {
            unmounter: self.session.unmount_callable(),
            mountpoint: self.mountpoint.clone(),
            unmounting: Arc::clone(&self.unmounting),
        }
    }

    /// Answers the kernel's requests until the file system is unmounted, by anyone.
    pub fn run(self) -> Result<(), MountError> {
        let Session { session, mountpoint, unmounting } = self;
        match session.run() {
            Ok(()) => Ok(()),
            // A detached mount ends when its last user lets go; the kernel then closes the
            // connection, which the session's reads may see as aborted rather than gone.
            Err(cause)
                if unmounting.load(Ordering::SeqCst)
                    && cause.raw_os_error()
                        == Some(rustix::io::Errno::CONNABORTED.raw_os_error()) =>
            {
                Ok(())
            }
            Err(cause) => Err(MountError::Serve { path: mountpoint, cause }),
        }
    }
}

/// How an unmount went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmounted {
    /// The file system left the tree; the request loop ends.
    Now,
    /// It was in use: detached from the tree, it is served until its last user lets go.
    Detached,
    /// Neither worked: it is still mounted.
    Failed,
}

/// Unmounts a [`Session`] from another thread.
pub struct Unmounter {
    unmounter: SessionUnmounter,
    mountpoint: PathBuf,
    unmounting: Arc<AtomicBool>,
}

impl Unmounter {
    /// Where the file system is mounted.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// Unmounts; a mount in use is detached lazily (with `fusermount3 -u -z`, or `umount -l`).
    pub fn unmount(&mut self) -> Unmounted {
        self.unmounting.store(true, Ordering::SeqCst);
        if self.unmounter.unmount().is_ok() {
            return Unmounted::Now;
        }
        let lazy = |program: &str, args: &[&str]| {
            Command::new(program)
                .args(args)
                .arg(&self.mountpoint)
                .status()
                .is_ok_and(|s| s.success())
        };
        if lazy(FUSERMOUNT, &["-u", "-z", "--"]) || lazy("umount", &["-l", "--"]) {
            Unmounted::Detached
        } else {
            Unmounted::Failed
        }
    }
}
