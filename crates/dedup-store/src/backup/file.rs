//! Reading one file (or a stream) into chunks and storing each: the read, chunk, id, lookup,
//! compress, seal and pack steps for one file, on the calling thread.

use std::io::{self, Read};

use super::{bump, BackupProgress};
use crate::blob::BlobKind;
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

/// Chunks `reader` and stores every chunk; returns the chunk ids and the length read.
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
