//! `snapshots`: the snapshots a filter accepts, and those that could not be read.

use crate::error::{Error, Result};
use crate::format::Snapshot;
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};

/// The snapshots of a listing.
pub struct SnapshotList {
    /// The snapshots the filter accepts, oldest first.
    pub snapshots: Vec<(Id, Snapshot)>,
    /// Snapshot files that could not be read (each names its file).
    pub unreadable: Vec<Error>,
}

/// The snapshots of `repo` that `filter` accepts.
pub fn snapshots(repo: &Repository, filter: &SnapshotFilter) -> Result<SnapshotList> {
    let (mut all, unreadable) = repo.snapshots()?;
    all.retain(|(_, s)| filter.accepts(s));
    Ok(SnapshotList { snapshots: all, unreadable })
}
