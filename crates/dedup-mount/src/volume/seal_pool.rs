//! The volume's sealing workers: a new chunk is compressed, sealed and packed on one of these
//! threads while the FUSE thread that cut it answers the next request, and a pack that filled on
//! a FUSE thread is written (fsync, rename, index entry) here too. Nothing is lost in the queue:
//! a chunk queued for a file counts in that file's [`FileSealing`], which its `close` waits for
//! and whose first error it reports, without waiting for other files' chunks; an error met on a
//! job of no file (a full pack's writing, a chunk a commit cut) is kept for the next `close` to
//! report. A commit (`fsync`) waits for every job ([`SealPool::wait`]), and fails if a write
//! failed while it ran. A chunk's bytes stay in the volume's memory until its pack is written
//! and indexed, so the next commit stores again what a failure lost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use dedup_store::blob::BlobKind;
use dedup_store::repo::{BlobSink, FullPack};
use dedup_store::{Error, Id};

/// Jobs waiting for a worker: enough to keep the workers busy while the FUSE threads cut, few
/// enough that the queue holds little memory (a chunk is 1 MiB on average).
const QUEUE: usize = 8;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Work for a sealing thread.
enum Job {
    /// A chunk to store, for a file (`None`: for no file in particular).
    Seal { id: Id, bytes: Arc<Vec<u8>>, file: Option<Arc<FileSealing>> },
    /// A pack that filled, to write and index.
    Finish(FullPack),
}

/// Jobs queued and not yet done, and the first error met since it was last taken.
#[derive(Debug, Default)]
struct Owed {
    queued: usize,
    error: Option<Error>,
}

impl Owed {
    /// One job is done, with `error` if it failed.
    fn done(&mut self, error: Option<Error>) {
        self.queued -= 1;
        if let Some(error) = error {
            self.error.get_or_insert(error);
        }
    }
}

/// One file's chunks on their way through the sealing threads: its `close` waits for these
/// only, and reports the first error storing one of them met.
#[derive(Debug, Default)]
pub struct FileSealing {
    owed: Mutex<Owed>,
    done: Condvar,
}

impl FileSealing {
    /// Waits until every chunk queued for the file so far is stored (or failed), and takes the
    /// first error met since the last call, if any.
    pub fn settled(&self) -> Result<(), Error> {
        let mut owed = lock(&self.owed);
        while owed.queued > 0 {
            owed = self.done.wait(owed).unwrap_or_else(PoisonError::into_inner);
        }
        owed.error.take().map_or(Ok(()), Err)
    }

    /// Whether nothing is queued for the file and no error waits to be reported: the file can
    /// let go of it.
    pub fn is_clear(&self) -> bool {
        let owed = lock(&self.owed);
        owed.queued == 0 && owed.error.is_none()
    }

    fn queued(&self) {
        lock(&self.owed).queued += 1;
    }

    fn done(&self, error: Option<Error>) {
        lock(&self.owed).done(error);
        self.done.notify_all();
    }
}

/// What the workers store into: a session's sink, or a stand-in in tests.
pub trait Storage: Send + Sync {
    /// Stores chunk `id` of `bytes` unless the repository has it.
    fn store_chunk(&self, id: Id, bytes: &[u8]) -> Result<(), Error>;
    /// Writes and indexes a pack that filled on another thread.
    fn write_full_pack(&self, pack: FullPack) -> Result<(), Error>;
    /// After a failure: gives up every open pack (see [`BlobSink::abandon_open_packs`]).
    fn abandon_open_packs(&self);
}

impl Storage for BlobSink<'static> {
    fn store_chunk(&self, id: Id, bytes: &[u8]) -> Result<(), Error> {
        self.store_with_id(id, BlobKind::Data, bytes).map(drop)
    }

    fn write_full_pack(&self, pack: FullPack) -> Result<(), Error> {
        BlobSink::write_full_pack(self, pack)
    }

    fn abandon_open_packs(&self) {
        BlobSink::abandon_open_packs(self);
    }
}

/// Shared by the pool and its workers.
struct Shared {
    /// Every job: a commit waits for all of them; the errors of jobs of no file.
    owed: Mutex<Owed>,
    done: Condvar,
    /// Write failures so far (counted by whoever meets one), for a commit to tell that one
    /// happened while it ran.
    failures: Arc<AtomicU64>,
}

/// Workers that store chunks, and write full packs, through a session's sink.
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
        sink: &Arc<dyn Storage>,
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

    /// Queues chunk `id` of `bytes` for `file` (waits while the queue is full); gives the bytes
    /// back when the workers are gone.
    pub fn submit(
        &self,
        id: Id,
        bytes: Arc<Vec<u8>>,
        file: Option<&Arc<FileSealing>>,
    ) -> Result<(), Arc<Vec<u8>>> {
        let file = file.cloned();
        match self.send(Job::Seal { id, bytes, file }) {
            Ok(()) => Ok(()),
            Err(Job::Seal { bytes, .. }) => Err(bytes),
            Err(Job::Finish(_)) => unreachable!("a seal job comes back as sent"),
        }
    }

    /// Queues `pack` to be written and indexed by a worker; gives it back when the workers are
    /// gone.
    pub fn finish(&self, pack: FullPack) -> Result<(), FullPack> {
        match self.send(Job::Finish(pack)) {
            Ok(()) => Ok(()),
            Err(Job::Finish(pack)) => Err(pack),
            Err(Job::Seal { .. }) => unreachable!("a finish job comes back as sent"),
        }
    }

    /// Counts `job` as owed (to the pool, and to its file), then queues it.
    fn send(&self, job: Job) -> Result<(), Job> {
        let Some(jobs) = &self.jobs else { return Err(job) };
        if let Job::Seal { file: Some(file), .. } = &job {
            file.queued();
        }
        lock(&self.shared.owed).queued += 1;
        jobs.send(job).map_err(|unsent| {
            let job = unsent.0;
            if let Job::Seal { file: Some(file), .. } = &job {
                file.done(None);
            }
            finish(&self.shared, None);
            job
        })
    }

    /// Takes the first error met since the last call by a job of no file, without waiting.
    pub fn take_error(&self) -> Result<(), Error> {
        lock(&self.shared.owed).error.take().map_or(Ok(()), Err)
    }

    /// Waits until every job queued so far is done, leaving any error for the next
    /// [`SealPool::take_error`] or [`FileSealing::settled`]: a commit does not need it (the
    /// chunks a failure lost are stored again by the commit, and a failure while it runs is
    /// counted).
    pub fn wait(&self) {
        let mut owed = lock(&self.shared.owed);
        while owed.queued > 0 {
            owed = self.shared.done.wait(owed).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A worker: does queued jobs until the queue closes (and is empty: a job queued is never
/// dropped undone, as a full pack's blobs stay claimed until it is written or given up).
fn work(queue: &Mutex<Receiver<Job>>, shared: &Shared, sink: &Arc<dyn Storage>) {
    loop {
        let job = match lock(queue).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let (done, file) = match job {
            Job::Seal { id, bytes, file } => (sink.store_chunk(id, &bytes), file),
            Job::Finish(pack) => (sink.write_full_pack(pack), None),
        };
        if done.is_err() {
            shared.failures.fetch_add(1, Ordering::SeqCst);
            sink.abandon_open_packs();
        }
        match file {
            // The file's close reports it; the pool's count is only for a commit's wait.
            Some(file) => {
                file.done(done.err());
                finish(shared, None);
            }
            None => finish(shared, done.err()),
        }
    }
}

/// One job of the pool is done, with `error` if it failed and no file takes the error.
fn finish(shared: &Shared, error: Option<Error>) {
    lock(&shared.owed).done(error);
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
    use std::collections::HashMap;
    use std::sync::mpsc::{channel, Sender};
    use std::time::Duration;

    use super::*;

    /// Long enough that only a close waiting for a held job lets it run out: a test that would
    /// hang fails instead.
    const HOLD_AT_MOST: Duration = Duration::from_secs(60);

    /// What the stand-in storage does with a chunk.
    enum Outcome {
        Fail,
        /// Stored once the receiver hears (or gives up waiting, which is noted).
        HoldUntil(Mutex<std::sync::mpsc::Receiver<()>>),
    }

    /// Stores every chunk except those it is told to fail or hold.
    struct StandIn {
        outcomes: HashMap<Id, Outcome>,
        stored: Mutex<Vec<Id>>,
        /// Chunks held whose wait ran out (nobody let them go).
        ran_out: Mutex<Vec<Id>>,
        /// Told when a chunk is taken up, so that a test knows it keeps a worker busy.
        taken: Mutex<Sender<Id>>,
    }

    impl Storage for StandIn {
        fn store_chunk(&self, id: Id, _bytes: &[u8]) -> Result<(), Error> {
            let _ = lock(&self.taken).send(id);
            match self.outcomes.get(&id) {
                Some(Outcome::Fail) => return Err(Error::Invalid(format!("chunk {id} failed"))),
                // Held until let through; a wait that runs out is noted.
                Some(Outcome::HoldUntil(release))
                    if lock(release).recv_timeout(HOLD_AT_MOST).is_err() =>
                {
                    lock(&self.ran_out).push(id);
                }
                _ => {}
            }
            lock(&self.stored).push(id);
            Ok(())
        }

        fn write_full_pack(&self, _pack: FullPack) -> Result<(), Error> {
            unreachable!("no pack is handed to the stand-in")
        }

        fn abandon_open_packs(&self) {}
    }

    fn chunk(n: u8) -> (Id, Arc<Vec<u8>>) {
        (Id([n; 32]), Arc::new(vec![n; 16]))
    }

    /// A pool over a stand-in, and the means to watch and steer it.
    struct Harness {
        pool: SealPool,
        stand_in: Arc<StandIn>,
        /// Lets the held chunk through.
        release: Sender<()>,
        /// Hears each chunk a worker takes up.
        taken_up: std::sync::mpsc::Receiver<Id>,
        failures: Arc<AtomicU64>,
    }

    /// A pool of two workers over a stand-in that fails `fail` and holds `hold`.
    fn pool(fail: &[Id], hold: Id) -> Harness {
        let (release, held) = channel();
        let (taken, taken_up) = channel();
        let mut outcomes: HashMap<Id, Outcome> =
            fail.iter().map(|id| (*id, Outcome::Fail)).collect();
        outcomes.insert(hold, Outcome::HoldUntil(Mutex::new(held)));
        let stand_in = Arc::new(StandIn {
            outcomes,
            stored: Mutex::new(Vec::new()),
            ran_out: Mutex::new(Vec::new()),
            taken: Mutex::new(taken),
        });
        let failures = Arc::new(AtomicU64::new(0));
        let storage: Arc<dyn Storage> = Arc::clone(&stand_in) as _;
        let pool = SealPool::start(&storage, 2, &failures).expect("threads");
        Harness { pool, stand_in, release, taken_up, failures }
    }

    #[test]
    fn a_close_waits_for_its_own_files_chunks_not_for_another_files_held_one() {
        let ((a, a_bytes), (b, b_bytes)) = (chunk(1), chunk(2));
        let Harness { pool, stand_in, release, taken_up, .. } = pool(&[], b);
        let (file_a, file_b) = (Arc::new(FileSealing::default()), Arc::new(FileSealing::default()));
        pool.submit(b, b_bytes, Some(&file_b)).unwrap();
        assert_eq!(taken_up.recv().unwrap(), b, "B's chunk keeps one worker busy");
        pool.submit(a, a_bytes, Some(&file_a)).unwrap();
        // A's close: returns with A's chunk stored while B's is still held.
        file_a.settled().unwrap();
        assert_eq!(*lock(&stand_in.stored), [a], "A's close returned before its chunk was stored");
        assert!(!file_b.is_clear(), "B's chunk is still owed");
        release.send(()).unwrap();
        file_b.settled().unwrap();
        pool.wait();
        assert!(lock(&stand_in.ran_out).is_empty(), "A's close waited for B's chunk");
        assert_eq!(*lock(&stand_in.stored), [a, b]);
    }

    #[test]
    fn a_failed_chunk_is_its_files_error_at_close_while_another_file_keeps_the_pool_busy() {
        let ((a, a_bytes), (b, b_bytes), (c, c_bytes)) = (chunk(1), chunk(2), chunk(3));
        let Harness { pool, stand_in, release, taken_up, failures } = pool(&[a, c], b);
        let (file_a, file_b) = (Arc::new(FileSealing::default()), Arc::new(FileSealing::default()));
        pool.submit(b, b_bytes, Some(&file_b)).unwrap();
        assert_eq!(taken_up.recv().unwrap(), b);
        pool.submit(a, a_bytes, Some(&file_a)).unwrap();
        let error = file_a.settled().expect_err("A's chunk failed: A's close must say so");
        assert!(error.to_string().contains(&a.to_string()), "{error}");
        file_a.settled().expect("reported once");
        assert!(file_a.is_clear());
        assert_eq!(failures.load(Ordering::SeqCst), 1, "counted for the next commit");
        // Not B's error, nor one for any other close.
        release.send(()).unwrap();
        file_b.settled().unwrap();
        pool.take_error().unwrap();
        // A failure of no file's chunk is the next close's, once.
        pool.submit(c, c_bytes, None).unwrap();
        pool.wait();
        assert!(pool.take_error().is_err(), "a failure of no file's chunk was lost");
        pool.take_error().unwrap();
        assert!(lock(&stand_in.ran_out).is_empty());
        assert_eq!(*lock(&stand_in.stored), [b]);
    }

    #[test]
    fn jobs_queued_when_the_pool_goes_are_still_done() {
        let chunks: Vec<(Id, Arc<Vec<u8>>)> = (10..30).map(chunk).collect();
        let Harness { pool, stand_in, release, .. } = pool(&[], Id([0; 32]));
        drop(release);
        let file = Arc::new(FileSealing::default());
        for (id, bytes) in &chunks {
            pool.submit(*id, Arc::clone(bytes), Some(&file)).unwrap();
        }
        drop(pool);
        assert!(file.is_clear(), "a queued chunk was dropped undone");
        assert_eq!(lock(&stand_in.stored).len(), chunks.len());
    }
}
