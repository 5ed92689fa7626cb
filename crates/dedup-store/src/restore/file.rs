//! Writing one regular file's content from its chunks: all-zero chunks become holes (a seek),
//! and the length is set at the end so a trailing hole is kept.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, Node};
use crate::id::Id;
use crate::index::Index;
use crate::repo::Repository;

/// The last blob read: runs of one chunk (zeros in sparse files, repeated blocks) are read once.
#[derive(Default)]
pub struct LastBlob {
    id: Option<Id>,
    data: Vec<u8>,
    zero: bool,
}

/// Writes `node`'s content to a new file at `path`; returns the bytes written (holes excluded).
pub fn write_file(
    repo: &Repository,
    index: &Index,
    node: &Node,
    path: &Path,
    cache: &mut LastBlob,
) -> Result<u64> {
    let shown = || path.display().to_string();
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(shown(), e))?;
    let Content::Chunks(chunks) = &node.content else { return Ok(0) };
    let mut offset = 0u64;
    let mut written = 0u64;
    let mut at = 0u64;
    for id in chunks {
        if cache.id != Some(*id) {
            cache.data = repo.read_blob(index, id, BlobKind::Data)?;
            cache.zero = cache.data.iter().all(|&b| b == 0);
            cache.id = Some(*id);
        }
        if !cache.zero {
            if at != offset {
                file.seek(SeekFrom::Start(offset)).map_err(|e| Error::io(shown(), e))?;
            }
            file.write_all(&cache.data).map_err(|e| Error::io(shown(), e))?;
            written += cache.data.len() as u64;
            at = offset + cache.data.len() as u64;
        }
        offset += cache.data.len() as u64;
    }
    file.set_len(offset).map_err(|e| Error::io(shown(), e))?;
    Ok(written)
}
