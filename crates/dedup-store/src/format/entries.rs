//! The 45-byte blob entry shared by pack trailers and index files: which blob, how it is
//! compressed, and where its sealed box lies in the pack.

use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

/// Encoded length of one entry.
pub const ENTRY_LEN: usize = 32 + 1 + 4 + 4 + 4;

/// How a blob's plaintext was compressed before sealing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Stored as is.
    None,
    /// One zstd frame.
    Zstd,
}

impl Compression {
    pub(crate) fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Zstd => 1,
        }
    }

    pub(crate) fn from_code(code: u8) -> Result<Self, DecodeError> {
        match code {
            0 => Ok(Compression::None),
            1 => Ok(Compression::Zstd),
            other => Err(DecodeError::invalid(format!("unknown compression {other}"))),
        }
    }
}

/// Where one blob lies in its pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlobEntry {
    /// The blob's id.
    pub id: Id,
    /// Its compression.
    pub compression: Compression,
    /// Offset of its sealed box from the start of the pack.
    pub offset: u32,
    /// Length of the sealed box.
    pub stored_len: u32,
    /// Length of the plaintext.
    pub raw_len: u32,
}

impl BlobEntry {
    pub(crate) fn encode(&self, out: &mut Writer) {
        out.id(&self.id);
        out.u8(self.compression.code());
        out.u32(self.offset);
        out.u32(self.stored_len);
        out.u32(self.raw_len);
    }

    pub(crate) fn decode(input: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let id = input.id()?;
        let compression = Compression::from_code(input.u8()?)?;
        let offset = input.u32()?;
        let stored_len = input.u32()?;
        let raw_len = input.u32()?;
        if (stored_len as usize) < crate::crypto::SEAL_OVERHEAD {
            return Err(DecodeError::invalid(format!(
                "blob {}: stored length too small",
                id.short(12)
            )));
        }
        if offset.checked_add(stored_len).is_none() {
            return Err(DecodeError::invalid(format!(
                "blob {}: offset beyond 4 GiB",
                id.short(12)
            )));
        }
        Ok(BlobEntry { id, compression, offset, stored_len, raw_len })
    }

    /// Encodes a pack trailer's plaintext: version, count, entries.
    pub fn encode_trailer(entries: &[BlobEntry]) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(1);
        out.len(entries.len());
        for entry in entries {
            entry.encode(&mut out);
        }
        out.buf
    }

    /// Decodes a pack trailer's plaintext, checking that the boxes lie in order inside the
    /// `body_len` bytes between the header and the trailer and do not overlap.
    pub fn decode_trailer(
        bytes: &[u8],
        body_start: u32,
        body_end: u32,
    ) -> Result<Vec<BlobEntry>, DecodeError> {
        let mut input = Reader::new(bytes);
        input.version(1)?;
        let count = input.count(ENTRY_LEN, "pack trailer")?;
        let mut entries = Vec::with_capacity(count);
        let mut next = body_start;
        for _ in 0..count {
            let entry = BlobEntry::decode(&mut input)?;
            if entry.offset != next {
                return Err(DecodeError::invalid(format!(
                    "blob {} at offset {}, expected {next}",
                    entry.id.short(12),
                    entry.offset
                )));
            }
            next = entry.offset + entry.stored_len;
            if next > body_end {
                return Err(DecodeError::invalid(format!(
                    "blob {} runs past the blobs",
                    entry.id.short(12)
                )));
            }
            entries.push(entry);
        }
        if next != body_end {
            return Err(DecodeError::invalid("the trailer does not account for every byte"));
        }
        input.finish()?;
        Ok(entries)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    pub(crate) fn entry_strategy() -> impl Strategy<Value = BlobEntry> {
        (any::<[u8; 32]>(), any::<bool>(), 0u32..1 << 30, 40u32..1 << 24, any::<u32>()).prop_map(
            |(id, zstd, offset, stored_len, raw_len)| BlobEntry {
                id: Id(id),
                compression: if zstd { Compression::Zstd } else { Compression::None },
                offset,
                stored_len,
                raw_len,
            },
        )
    }

    fn contiguous(lengths: &[u32]) -> Vec<BlobEntry> {
        let mut offset = 8;
        lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let entry = BlobEntry {
                    id: Id([i as u8; 32]),
                    compression: Compression::Zstd,
                    offset,
                    stored_len: len,
                    raw_len: len * 2,
                };
                offset += len;
                entry
            })
            .collect()
    }

    proptest! {
        #[test]
        fn trailer_round_trips(lengths in proptest::collection::vec(40u32..5000, 0..20)) {
            let entries = contiguous(&lengths);
            let end = 8 + lengths.iter().sum::<u32>();
            let bytes = BlobEntry::encode_trailer(&entries);
            prop_assert_eq!(BlobEntry::decode_trailer(&bytes, 8, end), Ok(entries));
        }

        #[test]
        fn mutated_trailer_never_panics(lengths in proptest::collection::vec(40u32..5000, 1..8),
                                        at in any::<usize>(), byte in any::<u8>(), cut in any::<usize>()) {
            let entries = contiguous(&lengths);
            let end = 8 + lengths.iter().sum::<u32>();
            let mut bytes = BlobEntry::encode_trailer(&entries);
            let at = at % bytes.len();
            bytes[at] ^= byte.max(1);
            let _ = BlobEntry::decode_trailer(&bytes, 8, end);
            bytes.truncate(cut % (bytes.len() + 1));
            let _ = BlobEntry::decode_trailer(&bytes, 8, end);
        }
    }

    #[test]
    fn trailer_with_a_gap_is_rejected() {
        let mut entries = contiguous(&[100, 100]);
        entries[1].offset += 1;
        let bytes = BlobEntry::encode_trailer(&entries);
        assert!(BlobEntry::decode_trailer(&bytes, 8, 209).is_err());
    }
}
