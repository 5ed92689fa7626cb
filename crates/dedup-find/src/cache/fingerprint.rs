//! The cache's fingerprints: which kind a run takes of a file of a given size, and taking one.
//! They are hashes the stages compute anyway (a large file's head sample, a small file's whole
//! content, read in one chunk), so a first scan gets them for free; a rescan takes them of new
//! files to see which cached files those could equal.

use dedup_cache::{Fingerprint, FingerprintKind, MAX_SAMPLE_LEN};
use dedup_scan::ReadBuf;
use xxhash_rust::xxh3::xxh3_64;

use crate::stages::candidates::Inode;
use crate::stages::reading::Reading;
use crate::tuning::Tuning;
use crate::tuning::FIRST_CHUNK;

/// The kind of fingerprint a run with `tuning` takes of files of `size`, if any: the head
/// sample's hash when they are sampled, the content's hash when they are read in one chunk.
pub(crate) fn kind_for(size: u64, tuning: Tuning) -> Option<FingerprintKind> {
    if tuning.samples(size) {
        let len = u32::try_from(tuning.sample_len()).ok().filter(|&l| l <= MAX_SAMPLE_LEN)?;
        Some(FingerprintKind::Head { len })
    } else if size <= FIRST_CHUNK {
        Some(FingerprintKind::Whole)
    } else {
        None
    }
}

/// The hash of `len` bytes at `offset`: the sample stage's key for a head or a tail sample, and
/// for the head, the file's fingerprint.
pub(crate) fn sample_hash(inode: &Inode, offset: u64, len: u64, ctx: &Reading) -> Option<u64> {
    let file = ctx.open(inode)?;
    let mut buf = ReadBuf::new(usize::try_from(len).ok()?);
    ctx.read_at(inode, &file, buf.bytes_mut(), offset)?;
    Some(xxh3_64(buf.bytes()))
}

/// Take a fingerprint of `kind` (one [`kind_for`] gives) of a file of `size` (`None` when it
/// cannot be read; the reader has reported why).
pub(crate) fn take(
    inode: &Inode,
    size: u64,
    kind: FingerprintKind,
    ctx: &Reading,
) -> Option<Fingerprint> {
    let value = match kind {
        FingerprintKind::Head { len } => sample_hash(inode, 0, u64::from(len), ctx)?,
        FingerprintKind::Whole => {
            let file = ctx.open(inode)?;
            let mut buf = ReadBuf::new(usize::try_from(size).ok()?);
            ctx.read_at(inode, &file, buf.bytes_mut(), 0)?;
            xxh3_64(buf.bytes())
        }
        FingerprintKind::Samples { .. } => unreachable!("kind_for never gives the old kind"),
    };
    Some(Fingerprint { kind, value })
}
