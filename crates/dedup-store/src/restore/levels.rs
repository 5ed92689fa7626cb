//! The stack of the target's directories during a restore: the state of each (pending, open,
//! virtual in a dry run, blocked), and a look at what stands at a name without following a link.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use rustix::fs::{statat, AtFlags};
use rustix::io::Errno;

use super::conflict::Existing;
use crate::format::Node;

/// A directory of the target on the walk's way down.
pub(super) enum State {
    /// Not made or opened yet: nothing below it was restored so far.
    Pending,
    /// Open.
    Open(Arc<OwnedFd>),
    /// A dry run's directory that a real run would create: nothing is below it yet.
    Virtual,
    /// Nothing below it is restored (kept by the policy, or it could not be made).
    Blocked,
}

/// One directory of the stack.
pub(super) struct Level {
    pub state: State,
    /// The snapshot's directory.
    pub node: Node,
    /// Its path below the target is `rel[..rel_len]`.
    pub rel_len: usize,
    /// Picked by the filter (or below a picked one), not only passed through.
    pub selected: bool,
    /// Made by this restore: it held nothing else, so its names need no look before use.
    pub created: bool,
}

/// What stands at `name` in `dir`, not following a symlink; `None` when nothing does.
pub(super) fn lstat(dir: &OwnedFd, name: &OsStr) -> Result<Option<Existing>, Errno> {
    match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(Existing::of(&st))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}
