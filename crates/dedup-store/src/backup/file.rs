//! The file stage of the backup pipeline: read a file under the per-device I/O scheduler, cut
//! it into chunks, hash each (keyed) and look it up; only chunks the repository lacks are copied
//! out and queued for the seal stage (compress, encrypt, pack), so a second write of stored
//! data reads and hashes but never writes. Also the same steps for one stream, inline.

use std::fs::File;
use std::io::{self, Read};

use dedup_scan::io::IoScheduler;

use super::queue::Queue;
use super::{bump, BackupProgress};
use crate::blob::{blob_id, BlobKind};
use crate::chunker::ChunkStream;
use crate::error::Error;
use crate::id::Id;
use crate::repo::BlobSink;

/// Why a stream could not be stored.
pub enum StreamError {
    /// Reading the source failed: a problem of that file.
    Read(io::Error),
    /// The repository failed: fatal.
    Store(Error),
}

/// A new chunk on its way to the seal stage.
pub struct NewChunk {
    /// Its id.
    pub id: Id,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// A file read with a permit of the I/O scheduler for each request.
pub struct Scheduled<'a> {
    /// The open file.
    pub file: &'a File,
    /// The scheduler.
    pub io: &'a IoScheduler,
    /// The file's device.
    pub dev: u64,
}

impl Read for Scheduled<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let permit = self.io.acquire(self.dev);
        let result = (&mut &*self.file).read(buf);
        permit.done(*result.as_ref().unwrap_or(&0) as u64);
        result
    }
}

/// Chunks `reader` in `buf` (handed back for the next file), a window of `window` bytes; each
/// chunk the repository lacks goes to `seal`. Returns the chunk ids and the length read.
pub fn chunk_file(
    sink: &BlobSink<'_>,
    reader: &mut dyn Read,
    buf: &mut Vec<u8>,
    window: usize,
    seal: &Queue<NewChunk>,
    progress: &BackupProgress,
) -> Result<(Vec<Id>, u64), StreamError> {
    let chunker = sink.repo().chunker();
    let mut stream = ChunkStream::with_window(chunker, reader, std::mem::take(buf), window);
    let key = &sink.repo().keys().id;
    let mut ids = Vec::new();
    let mut size = 0u64;
    let result = loop {
        let chunk = match stream.next_chunk() {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break Ok(()),
            Err(err) => break Err(StreamError::Read(err)),
        };
        let id = blob_id(key, chunk);
        if !sink.contains(&id, BlobKind::Data)
            && seal.push(NewChunk { id, data: chunk.to_vec() }).is_err()
        {
            // The seal stage stopped: a repository error is on its way.
            break Err(StreamError::Store(Error::Invalid("the backup was stopped".into())));
        }
        ids.push(id);
        size += chunk.len() as u64;
        bump(&progress.bytes_read, chunk.len() as u64);
    };
    *buf = stream.into_buffer();
    result.map(|()| (ids, size))
}

/// Chunks `reader` and stores every chunk on this thread; returns the chunk ids and the length.
pub fn store_stream(
    sink: &BlobSink<'_>,
    reader: &mut dyn Read,
    progress: &BackupProgress,
) -> Result<(Vec<Id>, u64), StreamError> {
    let mut stream = ChunkStream::new(sink.repo().chunker(), reader);
    let mut ids = Vec::new();
    let mut size = 0u64;
    while let Some(chunk) = stream.next_chunk().map_err(StreamError::Read)? {
        ids.push(sink.store(BlobKind::Data, chunk).map_err(StreamError::Store)?);
        size += chunk.len() as u64;
        bump(&progress.bytes_read, chunk.len() as u64);
    }
    Ok((ids, size))
}
