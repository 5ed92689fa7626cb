//! The backup's stages on threads of their own, joined by bounded queues: the walk (the
//! engine's walker, which also settles unchanged files with a `stat`) queues files; file workers
//! read them under the per-device I/O scheduler, chunk, hash and look up, and queue only new
//! chunks; seal workers compress, encrypt and add them to the open pack, storing each pack as
//! it fills. A full queue stalls the stage before it, so memory stays bounded: at most
//! [`FILE_QUEUE`] open files, [`SEAL_QUEUE`] chunks waiting and one chunk buffer per file worker.

use std::thread;

use dedup_scan::io::{Concurrency, IoScheduler};

use super::file::NewChunk;
use super::queue::Queue;
use super::visitor::{BackupVisitor, FileJob};
use crate::blob::BlobKind;
use crate::repo::BlobSink;

/// Files queued for the file stage (each holds an open descriptor).
pub const FILE_QUEUE: usize = 64;
/// New chunks queued for the seal stage, per seal worker.
pub const SEAL_QUEUE: usize = 2;

/// Threads per CPU-bound stage: one per core.
fn workers() -> usize {
    thread::available_parallelism().map_or(2, usize::from).clamp(1, 16)
}

/// Runs `walk` (which queues files into `jobs` through `visitor`) with the file and seal stages
/// beside it, until every queued file is chunked and every new chunk is in a pack.
pub fn run(
    sink: &BlobSink<'_>,
    visitor: &BackupVisitor<'_, '_>,
    jobs: &Queue<FileJob>,
    walk: impl FnOnce(),
) {
    let n = workers();
    let seal: Queue<NewChunk> = Queue::new(SEAL_QUEUE * n);
    let reads = IoScheduler::new(Concurrency::Adaptive { start: n.max(2), max: 2 * n.max(2) });
    thread::scope(|scope| {
        let sealers: Vec<_> = (0..n)
            .map(|_| {
                thread::Builder::new()
                    .name("dedup-seal".into())
                    .spawn_scoped(scope, || seal_worker(sink, visitor, &seal))
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
                            visitor.run_file(job, &mut buf, &seal, &reads);
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
fn seal_worker(sink: &BlobSink<'_>, visitor: &BackupVisitor<'_, '_>, seal: &Queue<NewChunk>) {
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
