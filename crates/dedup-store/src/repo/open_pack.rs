//! The pack a session is filling with blobs of one kind: built in memory and stored whole when
//! full (object storage, a dry run), or written to the storage as it fills (a local directory),
//! so that a backup holds no whole pack in memory where it need not. A session starts one at
//! the first blob of its kind, so that a session without new blobs creates nothing.

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
