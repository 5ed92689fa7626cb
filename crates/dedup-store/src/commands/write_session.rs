//! The writing session of `rewrite` and `copy`: a writer marker, a sink over the index without
//! what prunes plan to delete, and the commit of each new snapshot in the order of
//! docs/store-format.md §11-12 (its blobs stored and indexed, what a prune planned since
//! indexed again, then the snapshot file).

use std::collections::HashSet;

use crate::error::Result;
use crate::format::Snapshot;
use crate::id::Id;
use crate::repo::{BlobSink, Repository, WriterMarker};

/// A session that writes blobs and snapshots into one repository.
pub(crate) struct WriteSession<'r> {
    repo: &'r Repository,
    pub(crate) sink: BlobSink<'r>,
    marker: Option<WriterMarker>,
    planned: HashSet<Id>,
}

impl<'r> WriteSession<'r> {
    /// Begins a session of `host`; a `dry_run` writes nothing (but counts what it would).
    pub(crate) fn begin(repo: &'r Repository, host: &str, dry_run: bool) -> Result<Self> {
        let marker = if dry_run { None } else { Some(WriterMarker::create(repo, host)?) };
        // Read after the marker is written (§12): a prune that planned before then waits for
        // this session, one that plans after leaves out what this session will refer to.
        let planned = repo.planned_deletions()?;
        let index = repo.load_index_without(&planned)?.index;
        Ok(WriteSession { repo, sink: BlobSink::new(repo, index, dry_run), marker, planned })
    }

    /// Writes `snapshot`, whose trees this session stored or found: returns its id (none in a
    /// dry run).
    pub(crate) fn commit(&self, snapshot: &Snapshot) -> Result<Option<Id>> {
        self.sink.flush()?;
        if self.marker.is_none() {
            return Ok(None);
        }
        self.sink.keep_indexed_what_a_prune_planned_since(
            &self.planned,
            snapshot.tree,
            snapshot.status_tree,
        )?;
        Ok(Some(self.repo.save_snapshot(snapshot)?))
    }

    /// Ends the session: everything stored is indexed and the marker withdrawn.
    pub(crate) fn end(mut self) -> Result<()> {
        self.sink.flush()?;
        match self.marker.take() {
            Some(marker) => marker.remove(),
            None => Ok(()),
        }
    }
}

impl Drop for WriteSession<'_> {
    /// A session that stops on an error indexes the packs it stored (the next session reuses
    /// them without listing `data/`) and withdraws its marker; if even the index file cannot be
    /// written, it leaves the marker, which the next backup finds stale and so looks for them.
    fn drop(&mut self) {
        if let Some(marker) = self.marker.take() {
            match self.sink.index_stored() {
                Ok(()) => drop(marker),
                Err(_) => marker.leave(),
            }
        }
    }
}
