//! The FUSE file systems of dedup's store, apart from the binary: [`snapshots`] shows every
//! snapshot of a repository read-only (`dedup store mount`); [`volume`] serves a writable,
//! deduplicating volume (`dedup store mount --writable NAME`); [`session`] mounts a file system,
//! serves it in the foreground and unmounts it; [`preflight`] checks what a mount needs before
//! the repository is opened.
//!
//! Libraries never print: what the file systems meet while they serve goes to a
//! [`MountEvents`], errors are returned, and the caller owns signals and messages (it stops a
//! mount with an [`Unmounter`]).

pub mod error;
pub mod events;
pub mod preflight;
pub mod session;
pub mod snapshots;
pub mod volume;

pub use error::MountError;
pub use events::{Doing, MountEvents, MountProblem};
pub use session::{Session, SessionOptions, Unmounted, Unmounter};
