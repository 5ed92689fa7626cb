//! The backup's stages on threads of their own, joined by bounded queues: the walk (the
//! engine's walker, which also settles unchanged files with a `stat`) reads small files itself
//! and queues the others; file workers read those under the per-device I/O scheduler, chunk,
//! hash and look up, and queue only new chunks; seal workers compress, encrypt and add them to
//! the open pack, storing each pack as it fills. A full queue stalls the stage before it, so
//! memory stays bounded: at most [`FILE_QUEUE`] open files, [`SEAL_QUEUE`] chunks waiting, one
//! chunk buffer per file worker and one small-file buffer per walk thread.

use std::thread;

use dedup_scan::io::{Concurrency, IoScheduler};

use super::disk_order::{Choice, DiskOrder};
use super::file::NewChunk;
use super::queue::Queue;
use crate::blob::BlobKind;
use crate::error::Error;
use crate::repo::BlobSink;

/// Files queued for the file stage (each holds an open descriptor).
pub const FILE_QUEUE: usize = 64;
/// New chunks queued for the seal stage, per seal worker.
pub const SEAL_QUEUE: usize = 2;

/// Threads per CPU-bound stage: one per core.
fn workers() -> usize {
    thread::available_parallelism().map_or(2, usize::from).clamp(1, 16)
}

/// What the stages ask of the walk's side (the backup's visitor): to chunk a file it queued,
/// and to know and record the first error that stops the backup.
pub trait FileStage<Job>: Sync {
    /// Reads, chunks and hashes the file of `job`, with `buf` as its read buffer.
    fn run_file(&self, job: Job, buf: &mut Vec<u8>);
    /// Whether the backup has failed.
    fn failed(&self) -> bool;
    /// Records the error that stops the backup.
    fn fail(&self, err: Error);
}

/// The queues between the stages and the scheduler of the source's reads, shared by the walk
/// (which reads small files itself) and the file stage.
pub struct Stages<Job> {
    /// Files for the file stage.
    pub jobs: Queue<Job>,
    /// New chunks for the seal stage.
    pub seal: Queue<NewChunk>,
    /// Reads of the source, per device.
    pub reads: IoScheduler,
    /// Whether the walk asks for a directory's files in the order of the disk, per device.
    pub disk_order: DiskOrder,
}

impl<Job> Stages<Job> {
    /// Queues sized for this machine's cores.
    pub fn new() -> Self {
        let n = workers();
        Stages {
            jobs: Queue::new(FILE_QUEUE),
            seal: Queue::new(SEAL_QUEUE * n),
            reads: IoScheduler::new(Concurrency::Adaptive { start: n.max(2), max: 2 * n.max(2) }),
            disk_order: DiskOrder::new(Choice::Measured),
        }
    }

    /// The same, asking for files in the order of the disk as `choice` says.
    pub fn with_disk_order(mut self, choice: Choice) -> Self {
        self.disk_order = DiskOrder::new(choice);
        self
    }
}

/// Runs `walk` (which reads or queues files through `visitor`) with the file and seal stages
/// beside it, until every queued file is chunked and every new chunk is in a pack.
pub fn run<Job: Send>(
    sink: &BlobSink<'_>,
    visitor: &impl FileStage<Job>,
    stages: &Stages<Job>,
    walk: impl FnOnce(),
) {
    let n = workers();
    let Stages { jobs, seal, .. } = stages;
    thread::scope(|scope| {
        let sealers: Vec<_> = (0..n)
            .map(|_| {
                thread::Builder::new()
                    .name("dedup-seal".into())
                    .spawn_scoped(scope, || seal_worker(sink, visitor, seal))
                    .expect("a thread can be started")
            })
            .collect();
        let readers: Vec<_> = (0..n)
            .map(|_| {
                thread::Builder::new()
                    .name("dedup-chunk".into())
                    .spawn_scoped(scope, || {
                        let mut buf = Vec::new();
                        while let Some(job) = jobs.pop() {
                            visitor.run_file(job, &mut buf);
                        }
                    })
                    .expect("a thread can be started")
            })
            .collect();
        walk();
        jobs.close();
        for reader in readers {
            let _ = reader.join();
        }
        seal.close();
        for sealer in sealers {
            let _ = sealer.join();
        }
    });
}

/// Seals new chunks into packs until the queue closes; the first repository error stops the
/// backup (and closes the queue, so the file stage stops too).
fn seal_worker<Job>(sink: &BlobSink<'_>, visitor: &impl FileStage<Job>, seal: &Queue<NewChunk>) {
    while let Some(chunk) = seal.pop() {
        if visitor.failed() {
            continue;
        }
        if let Err(err) = sink.store_with_id(chunk.id, BlobKind::Data, &chunk.data) {
            visitor.fail(err);
            seal.close();
        }
    }
}
