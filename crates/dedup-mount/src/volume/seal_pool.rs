//! The volume's sealing workers: a new chunk is compressed, sealed and packed on one of these
//! threads while the FUSE thread that cut it answers the next request. Nothing is lost in the
//! queue: a worker's error is kept until the next `close` asks, which first waits for every chunk
//! queued before it ([`SealPool::settled`]); a commit (`fsync`) waits too, and fails if a write
//! failed while it ran. A chunk's bytes stay in the volume's memory until its pack is written, so
//! the next commit stores again what a failure lost.

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

/// A chunk to store.
struct Job {
    id: Id,
    bytes: Arc<Vec<u8>>,
}

/// What the workers owe: chunks queued and not yet stored, and the first error met.
#[derive(Default)]
struct Owed {
    queued: usize,
    error: Option<Error>,
}

/// Shared by the pool and its workers.
struct Shared {
    owed: Mutex<Owed>,
    done: Condvar,
    /// Write failures so far (counted by whoever meets one), for a commit to tell that one
    /// happened while it ran.
    failures: Arc<AtomicU64>,
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
    pub fn start(
        sink: &Arc<BlobSink<'static>>,
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
                    .spawn(move || work(&queue, &shared, &sink))
                    .ok()
            })
            .collect();
        (!threads.is_empty()).then(|| SealPool { jobs: Some(jobs), shared, threads })
    }

    /// Queues chunk `id` of `bytes` (waits while the queue is full); gives the bytes back when
    /// the workers are gone.
    pub fn submit(&self, id: Id, bytes: Arc<Vec<u8>>) -> Result<(), Arc<Vec<u8>>> {
        let Some(jobs) = &self.jobs else { return Err(bytes) };
        lock(&self.shared.owed).queued += 1;
        if let Err(unsent) = jobs.send(Job { id, bytes }) {
            self.finished(None);
            return Err(unsent.0.bytes);
        }
        Ok(())
    }

    fn finished(&self, error: Option<Error>) {
        finish(&self.shared, error);
    }

    /// Waits until every chunk queued so far is stored (or failed), and takes the first error
    /// met since the last call, if any.
    pub fn settled(&self) -> Result<(), Error> {
        self.idle().error.take().map_or(Ok(()), Err)
    }

    /// Waits until every chunk queued so far is stored (or failed), leaving any error for the
    /// next [`SealPool::settled`]: a commit does not need it (the chunks a failure lost are
    /// stored again by the commit, and a failure while it runs is counted).
    pub fn wait(&self) {
        drop(self.idle());
    }

    fn idle(&self) -> MutexGuard<'_, Owed> {
        let mut owed = lock(&self.shared.owed);
        while owed.queued > 0 {
            owed = self.shared.done.wait(owed).unwrap_or_else(PoisonError::into_inner);
        }
        owed
    }
}

/// A worker: stores queued chunks until the queue closes.
fn work(queue: &Mutex<Receiver<Job>>, shared: &Shared, sink: &BlobSink<'static>) {
    loop {
        let job = match lock(queue).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let stored = sink.store_with_id(job.id, BlobKind::Data, &job.bytes);
        if stored.is_err() {
            shared.failures.fetch_add(1, Ordering::SeqCst);
            sink.abandon_open_packs();
        }
        finish(shared, stored.err());
    }
}

/// One queued chunk is done, with `error` if it failed.
fn finish(shared: &Shared, error: Option<Error>) {
    let mut owed = lock(&shared.owed);
    owed.queued -= 1;
    if let Some(error) = error {
        owed.error.get_or_insert(error);
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
