//! A pack a session is filling with blobs of one kind: built in memory, and written to the
//! storage as it fills once it is large (a local directory), so that a backup holds no whole
//! pack in memory where it need not, while the small packs left at a session's end can still be
//! merged into one (docs/store-format.md §7). A session starts one at the first blob of its kind
//! in a slot, so that a session without new blobs creates nothing.

use std::io;

use crate::blob::SealedBlob;
use crate::pack::{PackWriter, StreamedPackWriter};

/// A session's open pack of one kind.
pub(super) enum OpenPack {
    /// Built in memory.
    Memory(PackWriter),
    /// Written to the storage as it fills.
    Streamed(Box<StreamedPackWriter>),
}

impl OpenPack {
    /// Bytes so far.
    pub(super) fn len(&self) -> usize {
        match self {
            OpenPack::Memory(pack) => pack.len(),
            OpenPack::Streamed(pack) => pack.len(),
        }
    }

    /// Whether a blob of `sealed_len` bytes would take room that the padding takes now: the pack
    /// closed with it is as long as without it (never, in a pack that is not padded).
    pub(super) fn fits_in_padding(&self, sealed_len: usize) -> bool {
        match self {
            OpenPack::Memory(pack) => pack.closed_len_with(sealed_len) == pack.closed_len(),
            OpenPack::Streamed(pack) => pack.closed_len_with(sealed_len) == pack.closed_len(),
        }
    }

    /// The kind of its blobs.
    pub(super) fn kind(&self) -> crate::blob::BlobKind {
        match self {
            OpenPack::Memory(pack) => pack.kind(),
            OpenPack::Streamed(pack) => pack.kind(),
        }
    }

    /// The ids of the blobs it holds.
    pub(super) fn blob_ids(&self) -> Vec<crate::id::Id> {
        match self {
            OpenPack::Memory(pack) => pack.blobs().map(|(entry, _)| entry.id).collect(),
            OpenPack::Streamed(pack) => pack.blob_ids().collect(),
        }
    }

    /// Appends a blob; after an error the pack is unusable.
    pub(super) fn add(&mut self, blob: &SealedBlob) -> io::Result<()> {
        match self {
            OpenPack::Memory(pack) => {
                pack.add(blob);
                Ok(())
            }
            OpenPack::Streamed(pack) => pack.add(blob),
        }
    }
}
