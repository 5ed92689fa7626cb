//! How a pack ends (docs/store-format.md §7), in its two versions: version 1 closes with the
//! sealed trailer and its length in clear, so a pack's size gives the sum of its blobs and, from
//! the trailer's length, their count; version 2 (format version 4) adds a padding box that takes
//! the pack to a size of a few buckets, and seals the two lengths, so that the storage sees only
//! the bucket.

use super::{TAIL_MAGIC, TRAILER_AD};
use crate::crypto::{Sealer, SEAL_OVERHEAD};
use crate::format::{BlobEntry, Config, ENTRY_LEN, HEADER_LEN};

/// Associated data appended to the header for the padding box of a version-2 pack.
pub(crate) const PADDING_AD: &[u8] = b"padding";
/// Associated data appended to the header for the lengths box of a version-2 pack.
pub(crate) const LENGTHS_AD: &[u8] = b"pack tail";
/// The lengths box of a version-2 pack: trailer and padding lengths, `u32` each, sealed.
pub(crate) const LENGTHS_BOX_LEN: usize = 8 + SEAL_OVERHEAD;

/// The smallest padded pack: every pack whose blobs, trailer and tail take less is this long.
pub const MIN_PADDED_PACK: u64 = 64 << 10;

/// How a pack ends: its version, the header's version byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackLayout {
    /// Version 1 (format versions 1 to 3): trailer box, its length, the tail magic.
    Plain,
    /// Version 2 (format version 4): trailer box, padding box, sealed lengths, the tail magic;
    /// padded to [`padded_len`] in an encrypted repository.
    Padded,
}

impl PackLayout {
    /// The layout a repository writes: version 2 from format version 4 on.
    pub fn for_config(config: &Config) -> PackLayout {
        if config.padded_packs() {
            PackLayout::Padded
        } else {
            PackLayout::Plain
        }
    }

    /// The header's version byte.
    pub fn version(self) -> u8 {
        match self {
            PackLayout::Plain => 1,
            PackLayout::Padded => 2,
        }
    }

    /// The layout of a pack whose header has `version`.
    pub fn of_version(version: u8) -> Option<PackLayout> {
        match version {
            1 => Some(PackLayout::Plain),
            2 => Some(PackLayout::Padded),
            _ => None,
        }
    }

    /// Bytes after the trailer box besides the padding: the trailer length (or the lengths
    /// box) and the tail magic.
    pub fn tail_len(self) -> usize {
        match self {
            PackLayout::Plain => 4 + TAIL_MAGIC.len(),
            PackLayout::Padded => LENGTHS_BOX_LEN + TAIL_MAGIC.len(),
        }
    }
}

/// The bucket of a pack of `len` bytes: [`MIN_PADDED_PACK`] up to that, else `len` rounded up
/// to a multiple of `2^(floor(log2 len) - 5)`, 32 sizes per doubling (Padmé, which leaks
/// O(log log len) bits of a length, at the sizes a pack can have: within 3.2 % above it).
pub fn bucket(len: u64) -> u64 {
    if len <= MIN_PADDED_PACK {
        return MIN_PADDED_PACK;
    }
    let step = 1u64 << (len.ilog2() - 5);
    len.div_ceil(step) * step
}

/// The padded length of a pack whose blobs, trailer box and tail take `len` bytes: its bucket,
/// or the next bucket when fewer bytes than a padding box's overhead would be missing (the
/// padding is a sealed box, at least 40 bytes, or nothing).
pub fn padded_len(len: u64) -> u64 {
    let padded = bucket(len);
    if padded == len || padded - len >= SEAL_OVERHEAD as u64 {
        padded
    } else {
        bucket(padded + 1)
    }
}

/// The length of a pack of `body_len` bytes (header and blob boxes) holding `count` blobs, closed
/// in `layout` without padding.
pub(crate) fn unpadded_len(layout: PackLayout, body_len: usize, count: usize) -> u64 {
    let trailer_box = 1 + 4 + count * ENTRY_LEN + SEAL_OVERHEAD;
    (body_len + trailer_box + layout.tail_len()) as u64
}

/// The length of a pack of `body_len` bytes holding `count` blobs once closed in `layout`, padded
/// when `pad`.
pub(crate) fn closed_len(layout: PackLayout, pad: bool, body_len: usize, count: usize) -> u64 {
    let unpadded = unpadded_len(layout, body_len, count);
    if pad {
        padded_len(unpadded)
    } else {
        unpadded
    }
}

/// How a pack is closed.
pub(super) struct Closing<'a> {
    pub header: &'a [u8; HEADER_LEN],
    pub layout: PackLayout,
    /// Whether to pad (version 2 in an encrypted repository).
    pub pad: bool,
    /// Bytes before the tail: the header and the blob boxes.
    pub body_len: usize,
}

/// Appends what closes a pack of `entries` to `out`: the sealed trailer, then in version 1 its
/// length, in version 2 the padding box (when padding) and the sealed lengths; then the tail
/// magic.
pub(super) fn append_tail(
    closing: Closing<'_>,
    entries: &[BlobEntry],
    sealer: &Sealer,
    out: &mut Vec<u8>,
) {
    let Closing { header, layout, pad, body_len } = closing;
    let unpadded = unpadded_len(layout, body_len, entries.len());
    let tail_start = out.len();
    let trailer = BlobEntry::encode_trailer(entries);
    let mut ad = header.to_vec();
    ad.extend_from_slice(TRAILER_AD);
    let start = out.len();
    sealer.seal_into(&ad, &trailer, out);
    let trailer_len = u32::try_from(out.len() - start).expect("trailers are small");
    match layout {
        PackLayout::Plain => out.extend_from_slice(&trailer_len.to_le_bytes()),
        PackLayout::Padded => {
            let padding = if pad { padded_len(unpadded) - unpadded } else { 0 };
            let padding = usize::try_from(padding).expect("padding is below 4 GiB");
            if padding > 0 {
                let mut ad = header.to_vec();
                ad.extend_from_slice(PADDING_AD);
                sealer.seal_into(&ad, &vec![0u8; padding - SEAL_OVERHEAD], out);
            }
            let mut lengths = trailer_len.to_le_bytes().to_vec();
            lengths.extend_from_slice(&u32::try_from(padding).expect("small").to_le_bytes());
            let mut ad = header.to_vec();
            ad.extend_from_slice(LENGTHS_AD);
            sealer.seal_into(&ad, &lengths, out);
        }
    }
    out.extend_from_slice(TAIL_MAGIC);
    let closed = (body_len + out.len() - tail_start) as u64;
    debug_assert_eq!(closed, if pad { padded_len(unpadded) } else { unpadded });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_the_floor_then_32_sizes_per_doubling() {
        assert_eq!(bucket(1), MIN_PADDED_PACK);
        assert_eq!(bucket(MIN_PADDED_PACK), MIN_PADDED_PACK);
        assert_eq!(bucket(MIN_PADDED_PACK + 1), MIN_PADDED_PACK + 2048);
        assert_eq!(bucket(16 << 20), 16 << 20);
        assert_eq!(bucket((16 << 20) + 1), (16 << 20) + (512 << 10));
        assert_eq!(bucket((32 << 20) - 1), 32 << 20);
        for len in [70_000u64, 1 << 20, 3_000_001, 17 << 20, 1 << 30, (4 << 30) - 1] {
            let padded = bucket(len);
            assert!(padded >= len && (padded - len) * 31 < len, "{len} -> {padded}");
            assert_eq!(bucket(padded), padded, "a bucket is its own bucket");
        }
        // 32 buckets between 1 MiB and 2 MiB.
        let sizes: std::collections::BTreeSet<u64> =
            ((1 << 20) + 1..=2 << 20).step_by(1000).map(bucket).collect();
        assert_eq!(sizes.len(), 32);
    }

    #[test]
    fn padding_is_nothing_or_at_least_a_box() {
        for len in [MIN_PADDED_PACK - 40, MIN_PADDED_PACK - 39, MIN_PADDED_PACK - 1, 1 << 20] {
            let padded = padded_len(len);
            assert!(padded == len || padded - len >= 40, "{len} -> {padded}");
            assert_eq!(bucket(padded), padded);
        }
        assert_eq!(padded_len(MIN_PADDED_PACK - 39), MIN_PADDED_PACK + 2048);
        assert_eq!(padded_len(MIN_PADDED_PACK - 40), MIN_PADDED_PACK);
    }
}
