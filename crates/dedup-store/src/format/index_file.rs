//! Index files' plaintext: the index files they supersede, then packs with their blob entries.

use super::entries::{BlobEntry, ENTRY_LEN};
use super::wire::{Reader, Writer};
use super::BlobKind;
use super::DecodeError;
use crate::id::Id;

/// One pack's blobs in an index file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedPack {
    /// The pack's id.
    pub id: Id,
    /// The kind of its blobs.
    pub kind: BlobKind,
    /// Its blobs, in pack order.
    pub blobs: Vec<BlobEntry>,
}

/// A decoded index file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexFile {
    /// Index files this one replaces.
    pub supersedes: Vec<Id>,
    /// The packs it describes.
    pub packs: Vec<IndexedPack>,
}

impl IndexFile {
    /// The plaintext.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(1);
        out.len(self.supersedes.len());
        for id in &self.supersedes {
            out.id(id);
        }
        out.len(self.packs.len());
        for pack in &self.packs {
            out.id(&pack.id);
            out.u8(pack.kind.code());
            out.len(pack.blobs.len());
            for blob in &pack.blobs {
                blob.encode(&mut out);
            }
        }
        out.buf
    }

    /// Decodes the plaintext.
    pub fn decode(bytes: &[u8]) -> Result<IndexFile, DecodeError> {
        let mut packs = Vec::new();
        let supersedes = IndexFile::decode_each(bytes, |pack| packs.push(pack))?;
        Ok(IndexFile { supersedes, packs })
    }

    /// Decodes the plaintext one pack at a time, handing each to `each` as it is decoded, so
    /// that a reader building its own table never holds the whole file decoded (for a large
    /// index file, as much again as its plaintext); returns the index files it supersedes. On
    /// an error, `each` has seen the packs before it: a reader that must take a file whole or
    /// not at all decodes it once with an `each` that keeps nothing first.
    pub fn decode_each(
        bytes: &[u8],
        mut each: impl FnMut(IndexedPack),
    ) -> Result<Vec<Id>, DecodeError> {
        let mut input = Reader::new(bytes);
        input.version(1)?;
        let count = input.count(32, "supersedes")?;
        let supersedes = (0..count).map(|_| input.id()).collect::<Result<_, _>>()?;
        let count = input.count(37, "packs")?;
        for _ in 0..count {
            let id = input.id()?;
            let kind = BlobKind::from_code(input.u8()?)?;
            let blobs = input.count(ENTRY_LEN, "blobs")?;
            let blobs =
                (0..blobs).map(|_| BlobEntry::decode(&mut input)).collect::<Result<_, _>>()?;
            each(IndexedPack { id, kind, blobs });
        }
        input.finish()?;
        Ok(supersedes)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::format::entries::tests::entry_strategy;

    fn index_strategy() -> impl Strategy<Value = IndexFile> {
        let pack =
            (any::<[u8; 32]>(), any::<bool>(), proptest::collection::vec(entry_strategy(), 0..5))
                .prop_map(|(id, tree, blobs)| IndexedPack {
                    id: Id(id),
                    kind: if tree { BlobKind::Tree } else { BlobKind::Data },
                    blobs,
                });
        (
            proptest::collection::vec(any::<[u8; 32]>().prop_map(Id), 0..3),
            proptest::collection::vec(pack, 0..4),
        )
            .prop_map(|(supersedes, packs)| IndexFile { supersedes, packs })
    }

    proptest! {
        #[test]
        fn index_round_trips(index in index_strategy()) {
            prop_assert_eq!(IndexFile::decode(&index.encode()), Ok(index));
        }

        #[test]
        fn decoding_pack_by_pack_hands_over_what_decoding_whole_gives(index in index_strategy()) {
            let mut packs = Vec::new();
            let supersedes = IndexFile::decode_each(&index.encode(), |pack| packs.push(pack));
            prop_assert_eq!(supersedes, Ok(index.supersedes));
            prop_assert_eq!(packs, index.packs);
        }

        #[test]
        fn mutated_index_never_panics(index in index_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&index.encode(), at, byte, cut, IndexFile::decode);
        }
    }
}
