//! Hard links during a restore: the first name restored of a linked file, and the later names
//! that wait for it to be in place (made at the end of the batch, `commit.rs`).

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

/// The first name restored of a hard-linked file: the later names are links to it.
#[derive(Clone)]
pub(crate) struct LinkFirst {
    /// Its directory, while some part of the restore holds it open.
    pub dir: Weak<OwnedFd>,
    /// Its path below the target (to reach its directory again once closed).
    pub rel: Vec<u8>,
}

impl LinkFirst {
    pub fn new(dir: Option<&Arc<OwnedFd>>, rel: Vec<u8>) -> LinkFirst {
        LinkFirst { dir: dir.map_or_else(Weak::new, Arc::downgrade), rel }
    }

    /// Its name in its directory.
    pub(super) fn name(&self) -> &[u8] {
        self.rel.rsplit(|&b| b == b'/').next().unwrap_or(&self.rel)
    }
}

/// A later name of a hard-linked file, made once the batch has put the first name in place.
pub(crate) struct PendingLink {
    pub first: LinkFirst,
    /// The link group (source device and inode).
    pub key: (u64, u64),
    pub dir: Arc<OwnedFd>,
    pub name: Vec<u8>,
    pub path: PathBuf,
    /// Whether it replaces what stands at its name.
    pub replace: bool,
}
