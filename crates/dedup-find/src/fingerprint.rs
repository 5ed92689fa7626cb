//! The cache's fingerprints: which kind a run takes of a file of a given size, and taking one.
//! They are hashes the stages compute anyway (a large file's samples, a small file's whole
//! content, read in one chunk), so a first scan gets them for free; a rescan takes them of new
//! files to see which cached files those could equal.

use dedup_cache::{Fingerprint, FingerprintKind, MAX_SAMPLE_LEN};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use crate::candidates::Inode;
use crate::exact::FIRST_CHUNK;
use crate::reading::Reading;
use crate::sample::Tuning;

/// The kind of fingerprint a run with `tuning` takes of files of `size`, if any: the samples'
/// hash when they are sampled, the content's hash when they are read in one chunk.
pub(crate) fn kind_for(size: u64, tuning: Tuning) -> Option<FingerprintKind> {
    if tuning.samples(size) {
        let len = u32::try_from(tuning.sample_len()).ok().filter(|&l| l <= MAX_SAMPLE_LEN)?;
        Some(FingerprintKind::Samples { len })
    } else if size <= FIRST_CHUNK {
        Some(FingerprintKind::Whole)
    } else {
        None
    }
}

/// The samples' hash: the first and the last `len` bytes. Also the sample stage's key.
pub(crate) fn samples_hash(inode: &Inode, size: u64, len: u64, ctx: &Reading) -> Option<u128> {
    let file = ctx.open(inode)?;
    let mut buf = vec![0u8; 2 * len as usize];
    let (head, tail) = buf.split_at_mut(len as usize);
    ctx.read_at(inode, &file, head, 0)?;
    ctx.read_at(inode, &file, tail, size - len)?;
    Some(xxh3_128(&buf))
}

/// Take a fingerprint of `kind` of a file of `size` (`None` when it cannot be read; the reader
/// has reported why).
pub(crate) fn take(
    inode: &Inode,
    size: u64,
    kind: FingerprintKind,
    ctx: &Reading,
) -> Option<Fingerprint> {
    let value = match kind {
        FingerprintKind::Samples { len } => samples_hash(inode, size, u64::from(len), ctx)? as u64,
        FingerprintKind::Whole => {
            let file = ctx.open(inode)?;
            let mut buf = vec![0u8; usize::try_from(size).ok()?];
            ctx.read_at(inode, &file, &mut buf, 0)?;
            xxh3_64(&buf)
        }
    };
    Some(Fingerprint { kind, value })
}
