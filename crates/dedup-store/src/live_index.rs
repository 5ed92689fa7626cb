//! The index of the moment, for readers that live while the repository changes (the mount, a
//! long dump or verification): a prune moves chunks to other packs and writes new index files,
//! a backup adds some. A read that fails is tried once more after the index is read again, if
//! its files changed since it was read (looked at most once per [`LOOK_EVERY`]), so that files
//! read on across a prune.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::id::Id;
use crate::index::Index;
use crate::repo::Repository;

/// The index files are listed again, to see whether they changed, at most this often.
pub const LOOK_EVERY: Duration = Duration::from_secs(1);

/// When the index files were last listed, and which they were when the index was read (`None`:
/// not known, so the first look reads the index again).
struct Seen {
    looked: Option<Instant>,
    files: Option<BTreeSet<Id>>,
}

/// An index that is replaced when the repository's index files change.
pub struct LiveIndex {
    index: RwLock<Arc<Index>>,
    seen: Mutex<Seen>,
}

impl LiveIndex {
    /// Reads the index of `repo`, noting its files.
    pub fn load(repo: &Repository) -> Result<LiveIndex> {
        // Listed before reading: a file written in between makes the next look read again,
        // where listing after could take it for one already read.
        let files = repo.list_index_files().ok().map(BTreeSet::from_iter);
        let index = repo.load_index()?.index;
        Ok(LiveIndex {
            index: RwLock::new(Arc::new(index)),
            seen: Mutex::new(Seen { looked: Some(Instant::now()), files }),
        })
    }

    /// An index already read; which files it came from is not known, so the first read that
    /// fails reads the index again.
    pub fn new(index: Arc<Index>) -> LiveIndex {
        LiveIndex {
            index: RwLock::new(index),
            seen: Mutex::new(Seen { looked: None, files: None }),
        }
    }

    /// The index now.
    pub fn current(&self) -> Arc<Index> {
        Arc::clone(&self.index.read().unwrap_or_else(|e| e.into_inner()))
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the index of `repo` again (new snapshots' blobs are in index files written since
    /// it was read). On failure the index stays as it was.
    pub fn reload(&self, repo: &Repository) -> Result<()> {
        let files = repo.list_index_files().ok().map(BTreeSet::from_iter);
        let index = repo.load_index()?.index;
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(index);
        *self.seen() = Seen { looked: Some(Instant::now()), files };
        Ok(())
    }

    /// Reads the index again if its files changed since it was read, listing them at most once
    /// per [`LOOK_EVERY`]. Returns whether the index was replaced.
    pub fn reload_if_changed(&self, repo: &Repository) -> bool {
        {
            let mut seen = self.seen();
            if seen.looked.is_some_and(|at| at.elapsed() < LOOK_EVERY) {
                return false;
            }
            seen.looked = Some(Instant::now());
        }
        let Ok(listed) = repo.list_index_files() else { return false };
        let listed: BTreeSet<Id> = listed.into_iter().collect();
        if self.seen().files.as_ref() == Some(&listed) {
            return false;
        }
        self.reload(repo).is_ok()
    }

    /// `read` with the index of now; if it fails, once more when the index has been replaced
    /// since (by another reader, or here because its files changed): what a prune moved is
    /// found where it went.
    pub fn retry<T>(
        &self,
        repo: &Repository,
        mut read: impl FnMut(&Index) -> Result<T>,
    ) -> Result<T> {
        let index = self.current();
        let first = read(&index);
        if first.is_ok() {
            return first;
        }
        let replaced = !Arc::ptr_eq(&index, &self.current()) || self.reload_if_changed(repo);
        if replaced {
            read(&self.current())
        } else {
            first
        }
    }
}
