//! Reads a pack's trailer: from the whole pack in memory, or from a backend with range reads.

use super::{TAIL_LEN, TAIL_MAGIC, TRAILER_AD};
use crate::backend::Backend;
use crate::blob::BlobKind;
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{BlobEntry, DecodeError, Header, Magic, HEADER_LEN};

/// A pack's kind and blobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPack {
    /// The blob kind.
    pub kind: BlobKind,
    /// The blobs, in order.
    pub entries: Vec<BlobEntry>,
}

fn parse_tail(tail: &[u8], size: u64) -> Result<u64, DecodeError> {
    if tail.len() != TAIL_LEN || &tail[4..] != TAIL_MAGIC {
        return Err(DecodeError::Magic { expected: "pack (tail)" });
    }
    let trailer_len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    if trailer_len + (HEADER_LEN + TAIL_LEN) as u64 > size || size > u64::from(u32::MAX) {
        return Err(DecodeError::Invalid(format!(
            "trailer length {trailer_len} does not fit the pack"
        )));
    }
    Ok(trailer_len)
}

fn parse_trailer(
    sealer: &Sealer,
    header: &[u8],
    trailer: &[u8],
    body_end: u64,
) -> Result<ParsedPack, DecodeError> {
    let parsed = Header::decode(header, Magic::Pack)?;
    if parsed.encrypted != sealer.encrypted() {
        return Err(DecodeError::Invalid("encryption flag differs from the repository's".into()));
    }
    let kind = BlobKind::from_code(parsed.sub_kind)?;
    let mut ad = header[..HEADER_LEN].to_vec();
    ad.extend_from_slice(TRAILER_AD);
    let plain =
        sealer.open(&ad, trailer).map_err(|e| DecodeError::Invalid(format!("trailer: {e}")))?;
    let entries = BlobEntry::decode_trailer(&plain, HEADER_LEN as u32, body_end as u32)?;
    Ok(ParsedPack { kind, entries })
}

/// The trailer of a whole pack held in memory.
pub fn parse_pack(sealer: &Sealer, pack: &[u8]) -> Result<ParsedPack, DecodeError> {
    let size = pack.len() as u64;
    if pack.len() < HEADER_LEN + TAIL_LEN {
        return Err(DecodeError::Truncated);
    }
    let trailer_len = parse_tail(&pack[pack.len() - TAIL_LEN..], size)?;
    let body_end = size - TAIL_LEN as u64 - trailer_len;
    parse_trailer(
        sealer,
        &pack[..HEADER_LEN],
        &pack[body_end as usize..pack.len() - TAIL_LEN],
        body_end,
    )
}

/// The trailer of the pack `name` of `size` bytes, read with three range requests.
pub fn read_trailer(
    backend: &dyn Backend,
    sealer: &Sealer,
    name: &str,
    size: u64,
) -> Result<ParsedPack> {
    if size < (HEADER_LEN + TAIL_LEN) as u64 {
        return Err(Error::damaged(name, DecodeError::Truncated));
    }
    let io = |e| Error::io(name, e);
    let header = backend.get_range(name, 0, HEADER_LEN as u64).map_err(io)?;
    let tail = backend.get_range(name, size - TAIL_LEN as u64, TAIL_LEN as u64).map_err(io)?;
    let trailer_len = parse_tail(&tail, size).map_err(|e| Error::damaged(name, e))?;
    let body_end = size - TAIL_LEN as u64 - trailer_len;
    let trailer = backend.get_range(name, body_end, trailer_len).map_err(io)?;
    parse_trailer(sealer, &header, &trailer, body_end).map_err(|e| Error::damaged(name, e))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::blob::{blob_id, seal};
    use crate::format::CompressionMode;
    use crate::pack::PackWriter;

    fn pack_of(sealer: &Sealer, blobs: &[Vec<u8>]) -> crate::pack::FinishedPack {
        let mut writer = PackWriter::new(BlobKind::Data, sealer.encrypted());
        for blob in blobs {
            writer.add(&seal(
                sealer,
                blob_id(&[1; 32], blob),
                BlobKind::Data,
                blob,
                CompressionMode::Auto,
            ));
        }
        writer.finish(sealer)
    }

    proptest! {
        #[test]
        fn pack_trailer_lists_every_blob(blobs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..6), encrypted in any::<bool>()) {
            let sealer = Sealer::new([2; 32], encrypted);
            let pack = pack_of(&sealer, &blobs);
            let parsed = parse_pack(&sealer, &pack.bytes).unwrap();
            prop_assert_eq!(parsed.kind, BlobKind::Data);
            prop_assert_eq!(&parsed.entries, &pack.entries);
            for (entry, blob) in parsed.entries.iter().zip(&blobs) {
                let sealed = &pack.bytes[entry.offset as usize..(entry.offset + entry.stored_len) as usize];
                prop_assert_eq!(&crate::blob::open(&sealer, &[1; 32], BlobKind::Data, entry, sealed).unwrap(), blob);
            }
        }

        #[test]
        fn damaged_pack_never_panics(at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            let sealer = Sealer::new([2; 32], true);
            let mut bytes = pack_of(&sealer, &[b"abc".to_vec(), vec![7; 500]]).bytes;
            let at = at % bytes.len();
            bytes[at] ^= byte;
            let _ = parse_pack(&sealer, &bytes);
            bytes.truncate(cut % (bytes.len() + 1));
            let _ = parse_pack(&sealer, &bytes);
        }
    }

    #[test]
    fn range_reads_give_the_same_trailer() {
        let dir = tempfile::tempdir().unwrap();
        let backend = crate::backend::LocalBackend::new(dir.path());
        let sealer = Sealer::new([2; 32], true);
        let pack = pack_of(&sealer, &[b"one".to_vec(), b"two".to_vec()]);
        backend.put("data/p", &pack.bytes).unwrap();
        let parsed = read_trailer(&backend, &sealer, "data/p", pack.bytes.len() as u64).unwrap();
        assert_eq!(parsed.entries, pack.entries);
    }
}
