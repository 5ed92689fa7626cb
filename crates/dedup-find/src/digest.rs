//! The BLAKE3 digest of one whole file, read start to end in large chunks: how a rescan settles
//! a new file whose fingerprint matches cached files that all have digests, by reading that one
//! file instead of it and a copy of each cached content.

use std::num::NonZeroU64;

use dedup_cache::Digest;
use dedup_scan::ReadBuf;
use rustix::fs::{fadvise, Advice};

use crate::candidates::Inode;
use crate::exact::FIRST_CHUNK;
use crate::reading::Reading;

/// Bytes per read: as large as the exact stage's largest chunk, so a device sees the same
/// requests either way.
const CHUNK: u64 = 4 * FIRST_CHUNK;

/// The digest of the file's `size` bytes; `None` when it cannot be read or changed while being
/// read (the reader has reported why).
pub(crate) fn digest_of(inode: &Inode, size: u64, ctx: &Reading) -> Option<Digest> {
    let file = ctx.open(inode)?;
    let _ = fadvise(&file, 0, NonZeroU64::new(size), Advice::Sequential);
    let mut hasher = blake3::Hasher::new();
    let mut buf = ReadBuf::new(usize::try_from(size.min(CHUNK)).ok()?);
    let mut offset = 0;
    while offset < size {
        let len = (size - offset).min(CHUNK) as usize;
        buf.set_len(len);
        ctx.read_at(inode, &file, buf.bytes_mut(), offset)?;
        hasher.update(buf.bytes());
        offset += len as u64;
    }
    ctx.unchanged_after_read(inode, &file).then(|| *hasher.finalize().as_bytes())
}
