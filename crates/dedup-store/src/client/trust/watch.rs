//! A backend that tells the client's state about the snapshots this client writes and deletes
//! itself, so that the next comparison with the repository counts only someone else's: its own
//! `forget` is no rollback (docs/store-format.md, "Outside the repository: the client's state").
//! Until [`SnapshotWatch::attach`] (after the repository's identity was checked) it only passes
//! every call through.

use std::io;
use std::sync::{Arc, OnceLock};

use super::ClientState;
use crate::backend::{Backend, DeleteFailure, ObjectInfo, ObjectWriter, PutOutcome, RangeReader};
use crate::id::Id;

/// A backend whose snapshot writes and deletions update the client's record of its location.
pub struct SnapshotWatch {
    inner: Arc<dyn Backend>,
    record: OnceLock<(ClientState, String)>,
}

impl SnapshotWatch {
    /// `inner`, not yet watched.
    pub fn new(inner: Arc<dyn Backend>) -> Self {
        SnapshotWatch { inner, record: OnceLock::new() }
    }

    /// From now on, keeps the record of `location` in `state` up to date.
    pub fn attach(&self, state: ClientState, location: String) {
        let _ = self.record.set((state, location));
    }

    /// Applies `change` to the record, if attached. The record is a convenience of this client:
    /// failing to update it costs at most a warning later, never the operation.
    fn note(&self, change: impl FnOnce(&mut super::Record)) {
        if let Some((state, location)) = self.record.get() {
            let _ = state.update(location, |known| {
                let record = known.map(|mut record| {
                    change(&mut record);
                    record
                });
                (record, ())
            });
        }
    }
}

/// The snapshot id of object `name`, if it is one.
fn snapshot_of(name: &str) -> Option<Id> {
    name.strip_prefix("snapshots/").and_then(Id::from_hex)
}

impl Backend for SnapshotWatch {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        let outcome = self.inner.put(name, bytes)?;
        if let Some(id) = snapshot_of(name) {
            self.note(|record| {
                record.snapshots.insert(id);
            });
        }
        Ok(outcome)
    }

    fn begin_object(&self, folder: &str) -> io::Result<Option<Box<dyn ObjectWriter>>> {
        // Snapshots go through `put`, which sees them.
        if folder == "snapshots" {
            return Ok(None);
        }
        self.inner.begin_object(folder)
    }

    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        self.inner.get(name)
    }

    fn get_into(&self, name: &str, buf: &mut Vec<u8>) -> io::Result<()> {
        self.inner.get_into(name, buf)
    }

    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.inner.get_range(name, offset, len)
    }

    fn open_ranges(&self, name: &str) -> io::Result<Option<Box<dyn RangeReader>>> {
        self.inner.open_ranges(name)
    }

    fn get_metadata_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.inner.get_metadata_range(name, offset, len)
    }

    fn forget_metadata_range(&self, name: &str, offset: u64, len: u64) {
        self.inner.forget_metadata_range(name, offset, len)
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
        self.inner.list(prefix)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        self.inner.delete(name)?;
        if let Some(id) = snapshot_of(name) {
            self.note(|record| record.mark_gone([id]));
        }
        Ok(())
    }

    fn delete_many(&self, names: &[String]) -> Result<(), DeleteFailure> {
        let deleted = self.inner.delete_many(names);
        // Even when one failed: those before it may be gone, and one marked gone too many is
        // only a warning less if it is later found deleted.
        let ids: Vec<Id> = names.iter().filter_map(|name| snapshot_of(name)).collect();
        if !ids.is_empty() {
            self.note(|record| record.mark_gone(ids));
        }
        deleted
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        self.inner.exists(name)
    }

    fn remove_stale_temporaries(&self, stale_after: std::time::Duration) -> io::Result<u64> {
        self.inner.remove_stale_temporaries(stale_after)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Identity, SnapshotNews};
    use super::*;
    use crate::backend::LocalBackend;

    #[test]
    fn the_snapshots_this_client_writes_and_deletes_are_no_news() {
        let dir = tempfile::tempdir().unwrap();
        let state = ClientState::new(dir.path().join("state"));
        let watch = SnapshotWatch::new(Arc::new(LocalBackend::new(dir.path().join("repo"))));
        let identity = Identity { repository: Id([1; 32]), encrypted: true, key: [2; 32] };
        let (a, b, c) = (Id([3; 32]), Id([4; 32]), Id([5; 32]));
        let name = |id: Id| format!("snapshots/{id}");
        watch.put(&name(a), b"before attaching").unwrap();
        state.remember("r", identity, Id([0; 32]), &[a], false).unwrap();
        watch.attach(state.clone(), "r".into());
        watch.put(&name(b), b"b").unwrap();
        watch.put(&name(c), b"c").unwrap();
        watch.put("index/ab", b"not a snapshot").unwrap();
        watch.delete(&name(a)).unwrap();
        watch.delete_many(&[name(b)]).unwrap();
        let record = state.load("r").unwrap().unwrap();
        assert_eq!(record.snapshots.into_iter().collect::<Vec<_>>(), [c]);
        assert_eq!(record.gone, [a, b]);
        let news = state.remember("r", identity, Id([0; 32]), &[c], false).unwrap();
        assert_eq!(news, SnapshotNews::default());
    }
}
