//! The lock that keeps a volume (a live tree that `dedup store mount --writable` serves) to one
//! writable mount at a time (docs/store-format.md §14). Each mount writes a claim,
//! `volumes/<V>/<random>` (V: the volume's keyed name hash; the claim holds a writer marker's
//! plaintext, §12), lists the claims of the volume, and holds the lock when its own is the
//! oldest live one (by start time, then name); otherwise it withdraws its claim and is refused,
//! naming the holder. Every contender reads the same claims, so two that start at once agree
//! on the winner without any conditional write. A claim of a dead process of this host, or one
//! not refreshed for [`STALE_AFTER`], is stale: deleted and never a holder, so a mount killed
//! with `kill -9` does not lock its volume out.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::backend::Backend;
use crate::blob::blob_id;
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{Magic, WriterInfo};
use crate::host::{process_runs, this_host};
use crate::id::Id;
use crate::repo::{now_ns, Repository, REFRESH_EVERY, STALE_AFTER};

/// The folder of the volumes' claims.
const VOLUMES: &str = "volumes";

/// A held volume lock, refreshed until it is dropped.
pub struct VolumeLock {
    current: Arc<Mutex<String>>,
    backend: Arc<dyn Backend>,
    stop: Option<mpsc::Sender<()>>,
    refresher: Option<JoinHandle<()>>,
}

/// A claim read back: its name and what it says.
struct Claim {
    name: String,
    info: WriterInfo,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The folder of volume `name`'s claims: named by a keyed hash, so that a reader without the
/// key does not learn the volume's name.
fn folder(repo: &Repository, name: &str) -> String {
    let mut keyed = b"volume:".to_vec();
    keyed.extend_from_slice(name.as_bytes());
    // A blob id is a keyed hash of its bytes; no blob of that id is ever stored.
    format!("{VOLUMES}/{}", blob_id(&repo.keys().id, &keyed))
}

/// Whether a claim still holds: not of a dead process here, and refreshed within
/// [`STALE_AFTER`] (by the storage's clock where it gives one).
fn claim_is_live(info: &WriterInfo, modified: Option<SystemTime>) -> bool {
    if info.host == this_host() && !process_runs(info.pid) {
        return false;
    }
    let age = match modified {
        Some(modified) => SystemTime::now().duration_since(modified).unwrap_or_default(),
        None => Duration::from_nanos(
            u64::try_from(now_ns().saturating_sub(info.refreshed)).unwrap_or(0),
        ),
    };
    age < STALE_AFTER
}

/// Writes a claim in `folder` for this process; returns its name.
fn write_claim(
    backend: &dyn Backend,
    sealer: &Sealer,
    folder: &str,
    host: &str,
    started: i64,
) -> Result<String> {
    let info = WriterInfo {
        host: host.to_string(),
        pid: std::process::id(),
        started,
        refreshed: now_ns(),
    };
    let bytes = crate::repo::seal_file(sealer, Magic::Writer, &info.encode());
    let name = format!("{folder}/{}", Id::random());
    backend.put(&name, &bytes).map_err(|e| Error::io(&name, e))?;
    Ok(name)
}

impl VolumeLock {
    /// Takes the lock of volume `name` for this process, or says who holds it.
    pub fn acquire(repo: &Repository, name: &str) -> Result<VolumeLock> {
        VolumeLock::acquire_refreshing(repo, name, REFRESH_EVERY)
    }

    /// [`VolumeLock::acquire`], the claim refreshed every `period`.
    pub fn acquire_refreshing(
        repo: &Repository,
        name: &str,
        period: Duration,
    ) -> Result<VolumeLock> {
        let folder = folder(repo, name);
        let host = this_host();
        let started = now_ns();
        let backend = repo.backend_arc();
        let sealer = repo.sealer().clone();
        let own = write_claim(backend.as_ref(), &sealer, &folder, &host, started)?;
        let holder = match live_claims(repo, &folder, &own) {
            Ok(claims) => claims.into_iter().next(),
            Err(err) => {
                let _ = backend.delete(&own);
                return Err(err);
            }
        };
        if let Some(holder) = holder.filter(|claim| claim.name != own) {
            let _ = backend.delete(&own);
            let since = holder.info.started / 1_000_000_000;
            return Err(Error::Invalid(format!(
                "volume {name:?} is already mounted writable by process {} on host {} (since \
                 {since} s after the epoch): one writable mount of a volume at a time",
                holder.info.pid, holder.info.host
            )));
        }
        let current = Arc::new(Mutex::new(own));
        let (stop, stopped) = mpsc::channel::<()>();
        let shared = Arc::clone(&current);
        let refresh_backend = Arc::clone(&backend);
        let refresher = std::thread::Builder::new()
            .name("volume-lock".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
                    // The new claim first, with the same start: it keeps its place in the order.
                    let written =
                        write_claim(refresh_backend.as_ref(), &sealer, &folder, &host, started);
                    let Ok(new) = written else { continue };
                    let old = std::mem::replace(&mut *lock(&shared), new);
                    let _ = refresh_backend.delete(&old);
                }
            })
            .map_err(|e| Error::io("volume lock refresh thread", e))?;
        Ok(VolumeLock { current, backend, stop: Some(stop), refresher: Some(refresher) })
    }

    /// The claim's current object name.
    pub fn name(&self) -> String {
        lock(&self.current).clone()
    }
}

/// The live claims in `folder`, oldest first (by start time, then name); stale ones are
/// deleted on the way. `own` is never stale (this process runs) and is always included.
fn live_claims(repo: &Repository, folder: &str, own: &str) -> Result<Vec<Claim>> {
    let listing = repo.backend().list(folder).map_err(|e| Error::io(folder, e))?;
    let mut live = Vec::new();
    for object in listing {
        let info = repo.backend().get(&object.name).ok().and_then(|bytes| {
            let plain = crate::repo::open_sealed(repo.sealer(), &bytes, Magic::Writer).ok()?;
            WriterInfo::decode(&plain).ok()
        });
        match info {
            Some(info) if object.name == own || claim_is_live(&info, object.modified) => {
                live.push(Claim { name: object.name, info })
            }
            // Gone since the listing (withdrawn), or unreadable: an unreadable claim cannot
            // name a holder, and a contender that wrote it reads its own back.
            None => {}
            Some(_) => {
                let _ = repo.backend().delete(&object.name);
            }
        }
    }
    live.sort_by(|a, b| a.info.started.cmp(&b.info.started).then(a.name.cmp(&b.name)));
    Ok(live)
}

impl Drop for VolumeLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(refresher) = self.refresher.take() {
            let _ = refresher.join();
        }
        let name = std::mem::take(&mut *lock(&self.current));
        if !name.is_empty() {
            let _ = self.backend.delete(&name);
        }
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
    fn a_second_lock_of_a_volume_is_refused_by_name_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo(dir.path());
        let first = VolumeLock::acquire(&repo, "vm").unwrap();
        let refused = VolumeLock::acquire(&repo, "vm").err().unwrap().to_string();
        assert!(refused.contains("\"vm\" is already mounted writable"), "{refused}");
        // Another volume is another lock.
        let other = VolumeLock::acquire(&repo, "db").unwrap();
        drop(first);
        let again = VolumeLock::acquire(&repo, "vm").unwrap();
        drop((again, other));
        assert!(repo.backend().list(VOLUMES).unwrap().is_empty());
    }

    #[test]
    fn a_claim_of_a_dead_process_is_stale_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo(dir.path());
        let folder = folder(&repo, "vm");
        // pid 0 never runs a session: a claim left by a killed mount.
        let info = WriterInfo { host: this_host(), pid: 0, started: 1, refreshed: 1 };
        let bytes = crate::repo::seal_file(repo.sealer(), Magic::Writer, &info.encode());
        let dead = format!("{folder}/{}", Id::random());
        repo.backend().put(&dead, &bytes).unwrap();
        let held = VolumeLock::acquire(&repo, "vm").unwrap();
        let names: Vec<String> =
            repo.backend().list(VOLUMES).unwrap().into_iter().map(|o| o.name).collect();
        assert_eq!(names, [held.name()]);
    }
}
