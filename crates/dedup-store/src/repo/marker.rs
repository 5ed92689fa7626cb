//! Writer markers (docs/store-format.md §12): a writing session announces itself before its
//! first write, keeps the announcement fresh from a timer thread of its own while it works, and
//! withdraws it when its snapshot is written or when it fails, so a prune can tell whether
//! deleting at once is safe, and a backup whether a killed session may have left packs unindexed
//! (a backup that fails and cannot even index what it stored leaves its marker for that reason).

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{now_ns, open_sealed, seal_file, Repository};
use crate::backend::Backend;
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{Magic, WriterInfo};
use crate::id::Id;

/// How often a live session rewrites its marker (§12); a marker older than six of these is
/// stale, so a session survives a few failed refreshes.
pub const REFRESH_EVERY: Duration = Duration::from_secs(600);

/// The folder of the markers.
const WRITERS: &str = "writers";

/// A session's marker in `writers/`, refreshed until it is removed or dropped.
pub struct WriterMarker {
    current: Arc<Mutex<String>>,
    backend: Arc<dyn Backend>,
    stop: Option<mpsc::Sender<()>>,
    refresher: Option<JoinHandle<()>>,
}

/// What the refresher needs to write a marker.
struct Writer {
    backend: Arc<dyn Backend>,
    sealer: Sealer,
    host: String,
    started: i64,
}

impl Writer {
    /// Writes a new marker, refreshed now; returns its name.
    fn write(&self) -> Result<String> {
        let info = WriterInfo {
            host: self.host.clone(),
            pid: std::process::id(),
            started: self.started,
            refreshed: now_ns(),
        };
        let bytes = seal_file(&self.sealer, Magic::Writer, &info.encode());
        let name = format!("{WRITERS}/{}", Id::random());
        self.backend.put(&name, &bytes).map_err(|e| Error::io(&name, e))?;
        Ok(name)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl WriterMarker {
    /// Writes a marker for this process on `host`, refreshed every [`REFRESH_EVERY`].
    pub fn create(repo: &Repository, host: &str) -> Result<WriterMarker> {
        WriterMarker::create_refreshing(repo, host, REFRESH_EVERY)
    }

    /// Writes a marker for this process on `host`, refreshed every `period`.
    pub fn create_refreshing(
        repo: &Repository,
        host: &str,
        period: Duration,
    ) -> Result<WriterMarker> {
        let writer = Writer {
            backend: repo.backend_arc(),
            sealer: repo.sealer().clone(),
            host: host.to_string(),
            started: now_ns(),
        };
        let current = Arc::new(Mutex::new(writer.write()?));
        let (stop, stopped) = mpsc::channel::<()>();
        let shared = Arc::clone(&current);
        // A thread of its own, so that no read or upload however slow delays a refresh.
        let refresher = std::thread::Builder::new()
            .name("writer-marker".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
                    // The new marker first, then the old one goes: the session is never unmarked.
                    // A failed write keeps the old marker and is retried at the next tick.
                    let Ok(new) = writer.write() else { continue };
                    let old = std::mem::replace(&mut *lock(&shared), new);
                    let _ = writer.backend.delete(&old);
                }
            })
            .map_err(|e| Error::io("writer marker refresh thread", e))?;
        Ok(WriterMarker {
            current,
            backend: repo.backend_arc(),
            stop: Some(stop),
            refresher: Some(refresher),
        })
    }

    /// The marker's current object name.
    pub fn name(&self) -> String {
        lock(&self.current).clone()
    }

    fn stop_refreshing(&mut self) {
        drop(self.stop.take());
        if let Some(refresher) = self.refresher.take() {
            let _ = refresher.join();
        }
    }

    /// Withdraws the marker (after the session's snapshot is written). Storage that refuses
    /// deletion (append-only credentials, §12) keeps it: it is then what a killed session
    /// leaves, stale once this process ends, and never a reason to fail the session.
    pub fn remove(mut self) -> Result<()> {
        self.stop_refreshing();
        let name = std::mem::take(&mut *lock(&self.current));
        match self.backend.delete(&name) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Ok(()),
            deleted => deleted.map_err(|e| Error::io(&name, e)),
        }
    }

    /// Stops refreshing and leaves the marker in place, to go stale (§12): for a session that
    /// stops on an error with packs stored that it could not index, so that the next backup
    /// looks for them.
    pub fn leave(mut self) {
        self.stop_refreshing();
        lock(&self.current).clear();
    }
}

impl Drop for WriterMarker {
    /// A session that stops on an error withdraws its marker too; only a killed one leaves it
    /// (stale by its pid, §12).
    fn drop(&mut self) {
        self.stop_refreshing();
        let name = std::mem::take(&mut *lock(&self.current));
        if !name.is_empty() {
            let _ = self.backend.delete(&name);
        }
    }
}

impl Repository {
    /// The writer markers present: each object name with its decoded content or the error.
    pub fn writer_markers(&self) -> Result<Vec<(String, Result<WriterInfo>)>> {
        let listing = self.backend().list(WRITERS).map_err(|e| Error::io(WRITERS, e))?;
        Ok(listing
            .into_iter()
            .map(|object| {
                let info = self
                    .backend()
                    .get(&object.name)
                    .map_err(|e| Error::io(&object.name, e))
                    .and_then(|bytes| {
                        let plain = open_sealed(self.sealer(), &bytes, Magic::Writer)
                            .map_err(|e| Error::decode(&object.name, e))?;
                        WriterInfo::decode(&plain).map_err(|e| Error::decode(&object.name, e))
                    });
                (object.name, info)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LocalBackend;
    use crate::repo::InitOptions;

    fn repo(dir: &std::path::Path) -> Repository {
        Repository::init(Arc::new(LocalBackend::new(dir.join("repo"))), InitOptions::default())
            .unwrap()
    }

    #[test]
    fn a_marker_is_rewritten_while_the_session_runs_and_withdrawn_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo(dir.path());
        let marker =
            WriterMarker::create_refreshing(&repo, "here", Duration::from_millis(20)).unwrap();
        let first = marker.name();
        let [(_, info)] = repo.writer_markers().unwrap().try_into().ok().unwrap();
        let info = info.unwrap();
        assert_eq!((info.host.as_str(), info.pid), ("here", std::process::id()));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while marker.name() == first && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_ne!(marker.name(), first, "the marker was never refreshed");
        let markers = repo.writer_markers().unwrap();
        assert!(markers.len() <= 2, "old markers pile up: {}", markers.len());
        let refreshed = markers.into_iter().find(|(name, _)| *name == marker.name()).unwrap();
        let refreshed = refreshed.1.unwrap();
        assert_eq!(refreshed.started, info.started);
        assert!(refreshed.refreshed > info.refreshed);
        marker.remove().unwrap();
        assert!(repo.writer_markers().unwrap().is_empty());
    }

    #[test]
    fn a_session_that_stops_on_an_error_withdraws_its_marker() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo(dir.path());
        let marker = WriterMarker::create(&repo, "here").unwrap();
        assert_eq!(repo.writer_markers().unwrap().len(), 1);
        drop(marker);
        assert!(repo.writer_markers().unwrap().is_empty());
    }
}
