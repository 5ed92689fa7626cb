//! The volume's sealing workers: a new chunk is compressed, sealed and packed on one of these
//! threads while the FUSE thread that cut it answers the next request. Each chunk is queued for
//! an owner (the file that wrote it). Nothing is lost in the queue: a worker's error is kept for
//! its owner until that file's next `close`, which first waits for the file's own queued chunks
//! ([`SealPool::settled_for`]) and not for other files' (a small file's close would otherwise
//! wait for every large file being written beside it); a commit (`fsync`) waits for all of them,
//! and fails if a write failed while it ran. A chunk's bytes stay in the volume's memory until
//! its pack is written, so the next commit stores again what a failure lost.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use dedup_store::blob::BlobKind;
use dedup_store::repo::BlobSink;
use dedup_store::{Error, Id};

/// Chunks waiting for a worker: enough to keep the workers busy while the FUSE threads cut,
/// few enough that the queue holds little memory (a chunk is 1 MiB on average).
const QUEUE: usize = 8;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whose chunk a job is: a file's inode number, or [`VOLUME`] for the chunks a commit cuts.
pub type Owner = u64;

/// The owner of chunks stored for the volume as a whole (at a commit), whose errors the commit
/// learns by counting failures.
pub const VOLUME: Owner = 0;

/// A chunk to store.
struct Job {
    owner: Owner,
    id: Id,
    bytes: Arc<Vec<u8>>,
}

/// What the workers owe: chunks queued and not yet stored, by owner, and the first error met
/// for each owner since its last [`SealPool::settled_for`].
#[derive(Default)]
struct Owed {
    queued: usize,
    by_owner: HashMap<Owner, usize>,
    errors: HashMap<Owner, Error>,
}

/// Shared by the pool and its workers.
struct Shared {
    owed: Mutex<Owed>,
    done: Condvar,
    /// Write failures so far (counted by whoever meets one), for a commit to tell that one
    /// happened while it ran.
    failures: Arc<AtomicU64>,
}

/// Where the workers store chunks: the session's sink (a trait so that tests can hold a chunk
/// back or fail it).
pub trait ChunkSink: Send + Sync + 'static {
    /// Compresses, seals and packs chunk `id` of `bytes`.
    fn store_chunk(&self, id: Id, bytes: &[u8]) -> Result<(), Error>;
    /// After a failure: gives up every open pack (see [`BlobSink::abandon_open_packs`]).
    fn abandon_open_packs(&self);
}

impl ChunkSink for BlobSink<'static> {
    fn store_chunk(&self, id: Id, bytes: &[u8]) -> Result<(), Error> {
        self.store_with_id(id, BlobKind::Data, bytes).map(drop)
    }

    fn abandon_open_packs(&self) {
        BlobSink::abandon_open_packs(self);
    }
}

/// Workers that store chunks through a session's sink.
pub struct SealPool {
    jobs: Option<SyncSender<Job>>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl SealPool {
    /// `threads` workers storing through `sink`; `None` when no thread could be started (the
    /// caller then stores on its own thread). Each failure is counted in `failures`, and after
    /// one every open pack is given up (see [`BlobSink::abandon_open_packs`]).
    pub fn start<S: ChunkSink>(
        sink: &Arc<S>,
        threads: usize,
        failures: &Arc<AtomicU64>,
    ) -> Option<SealPool> {
        let (jobs, queue) = sync_channel::<Job>(QUEUE);
        let queue = Arc::new(Mutex::new(queue));
        let shared = Arc::new(Shared {
            owed: Mutex::new(Owed::default()),
            done: Condvar::new(),
            failures: Arc::clone(failures),
        });
        let threads: Vec<JoinHandle<()>> = (0..threads)
            .filter_map(|n| {
                let (queue, shared, sink) =
                    (Arc::clone(&queue), Arc::clone(&shared), Arc::clone(sink));
                std::thread::Builder::new()
                    .name(format!("volume-seal-{n}"))
                    .spawn(move || work(&queue, &shared, sink.as_ref()))
                    .ok()
            })
            .collect();
        (!threads.is_empty()).then(|| SealPool { jobs: Some(jobs), shared, threads })
    }

    /// Queues chunk `id` of `bytes` for `owner` (waits while the queue is full); gives the
    /// bytes back when the workers are gone.
    pub fn submit(&self, owner: Owner, id: Id, bytes: Arc<Vec<u8>>) -> Result<(), Arc<Vec<u8>>> {
        let Some(jobs) = &self.jobs else { return Err(bytes) };
        {
            let mut owed = lock(&self.shared.owed);
            owed.queued += 1;
            *owed.by_owner.entry(owner).or_default() += 1;
        }
        if let Err(unsent) = jobs.send(Job { owner, id, bytes }) {
            finish(&self.shared, owner, None);
            return Err(unsent.0.bytes);
        }
        Ok(())
    }

    /// Waits until every chunk queued for `owner` so far is stored (or failed), and takes the
    /// first error met for it since the last call, if any. Other owners' chunks still queued
    /// are not waited for.
    pub fn settled_for(&self, owner: Owner) -> Result<(), Error> {
        let mut owed = lock(&self.shared.owed);
        while owed.by_owner.contains_key(&owner) {
            owed = self.shared.done.wait(owed).unwrap_or_else(PoisonError::into_inner);
        }
        owed.errors.remove(&owner).map_or(Ok(()), Err)
    }

    /// Waits until every chunk queued so far is stored (or failed), leaving the owners' errors
    /// for their next [`SealPool::settled_for`]: a commit does not need them (the chunks a
    /// failure lost are stored again by the commit, and a failure while it runs is counted).
    pub fn wait(&self) {
        let mut owed = lock(&self.shared.owed);
        while owed.queued > 0 {
            owed = self.shared.done.wait(owed).unwrap_or_else(PoisonError::into_inner);
        }
        // The volume's own chunks are the commit's, which counted their failures.
        owed.errors.remove(&VOLUME);
    }
}

/// A worker: stores queued chunks until the queue closes.
fn work(queue: &Mutex<Receiver<Job>>, shared: &Shared, sink: &impl ChunkSink) {
    loop {
        let job = match lock(queue).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let stored = sink.store_chunk(job.id, &job.bytes);
        if stored.is_err() {
            shared.failures.fetch_add(1, Ordering::SeqCst);
            sink.abandon_open_packs();
        }
        finish(shared, job.owner, stored.err());
    }
}

/// One chunk queued for `owner` is done, with `error` if it failed.
fn finish(shared: &Shared, owner: Owner, error: Option<Error>) {
    let mut owed = lock(&shared.owed);
    owed.queued -= 1;
    if let Some(left) = owed.by_owner.get_mut(&owner) {
        *left -= 1;
        if *left == 0 {
            owed.by_owner.remove(&owner);
        }
    }
    if let Some(error) = error {
        owed.errors.entry(owner).or_insert(error);
    }
    shared.done.notify_all();
}

impl Drop for SealPool {
    fn drop(&mut self) {
        drop(self.jobs.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{channel, Sender};
    use std::time::Duration;

    use super::*;

    const HELD: Id = Id([1; 32]);
    const FAILS: Id = Id([2; 32]);

    /// Holds chunk [`HELD`] back until told, fails chunk [`FAILS`], stores the others.
    struct TestSink {
        release: Mutex<Receiver<()>>,
    }

    impl ChunkSink for TestSink {
        fn store_chunk(&self, id: Id, _bytes: &[u8]) -> Result<(), Error> {
            if id == HELD {
                let _ = lock(&self.release).recv();
            }
            if id == FAILS {
                return Err(Error::Invalid("the disk is full".into()));
            }
            Ok(())
        }

        fn abandon_open_packs(&self) {}
    }

    /// A pool of two workers over a [`TestSink`], and the sender that lets [`HELD`] through.
    fn pool() -> (SealPool, Sender<()>, Arc<AtomicU64>) {
        let (release, held) = channel();
        let sink = Arc::new(TestSink { release: Mutex::new(held) });
        let failures = Arc::new(AtomicU64::new(0));
        (SealPool::start(&sink, 2, &failures).expect("threads start"), release, failures)
    }

    /// `settled_for(owner)` on another thread, given up after a minute (the test then fails
    /// rather than hangs).
    fn settled_elsewhere(pool: &Arc<SealPool>, owner: Owner) -> Result<(), String> {
        let (done, answer) = channel();
        let pool = Arc::clone(pool);
        std::thread::spawn(move || {
            let _ = done.send(pool.settled_for(owner).map_err(|e| e.to_string()));
        });
        answer.recv_timeout(Duration::from_secs(60)).expect("the close came back")
    }

    #[test]
    fn a_close_waits_for_its_own_files_chunks_and_not_for_another_files() {
        let (pool, release, _) = pool();
        let pool = Arc::new(pool);
        pool.submit(2, HELD, Arc::new(vec![1])).unwrap();
        pool.submit(1, Id([3; 32]), Arc::new(vec![3])).unwrap();
        // File 1's close comes back while file 2's chunk is still held by a worker.
        assert_eq!(settled_elsewhere(&pool, 1), Ok(()));
        release.send(()).unwrap();
        assert_eq!(settled_elsewhere(&pool, 2), Ok(()));
    }

    #[test]
    fn a_failure_is_reported_at_its_owners_close_however_busy_the_pool_is() {
        let (pool, release, failures) = pool();
        let pool = Arc::new(pool);
        pool.submit(2, HELD, Arc::new(vec![1])).unwrap();
        pool.submit(1, FAILS, Arc::new(vec![2])).unwrap();
        let reported = settled_elsewhere(&pool, 1);
        assert!(reported.as_ref().is_err_and(|e| e.contains("the disk is full")), "{reported:?}");
        assert_eq!(settled_elsewhere(&pool, 1), Ok(()), "reported once");
        release.send(()).unwrap();
        assert_eq!(settled_elsewhere(&pool, 2), Ok(()), "not reported to another file");
        assert_eq!(failures.load(Ordering::SeqCst), 1, "counted for the commit");
    }

    #[test]
    fn a_commit_waits_for_every_files_chunks_and_leaves_their_errors_to_them() {
        let (pool, release, _) = pool();
        let pool = Arc::new(pool);
        pool.submit(2, HELD, Arc::new(vec![1])).unwrap();
        pool.submit(1, FAILS, Arc::new(vec![2])).unwrap();
        let (done, waited) = channel();
        let waiting = Arc::clone(&pool);
        std::thread::spawn(move || {
            waiting.wait();
            let _ = done.send(());
        });
        assert!(waited.recv_timeout(Duration::from_millis(200)).is_err(), "the commit waits");
        release.send(()).unwrap();
        waited.recv_timeout(Duration::from_secs(60)).expect("the commit came back");
        assert!(settled_elsewhere(&pool, 1).is_err(), "file 1's close still hears of it");
    }
}
