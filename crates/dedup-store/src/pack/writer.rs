//! Gathers sealed blobs of one kind into a pack and closes it with its trailer (and, in a pack
//! of version 2, its padding).

use super::tail::{append_tail, closed_len, Closing, PackLayout};
use crate::blob::{BlobKind, SealedBlob};
use crate::crypto::Sealer;
use crate::format::{BlobEntry, Header, Magic, HEADER_LEN};
use crate::id::Id;

/// The pack's buffer grows by at least this much at a time: doubling would leave a 16 MiB pack
/// holding 32 MiB once its last blob crosses the size.
const GROW: usize = 4 << 20;

/// A pack being filled.
pub struct PackWriter {
    kind: BlobKind,
    header: [u8; HEADER_LEN],
    layout: PackLayout,
    /// Whether it is padded when closed (version 2 in an encrypted repository).
    pad: bool,
    buf: Vec<u8>,
    entries: Vec<BlobEntry>,
}

/// A closed pack, ready to store.
pub struct FinishedPack {
    /// Its id (BLAKE3 of `bytes`).
    pub id: Id,
    /// Its blob kind.
    pub kind: BlobKind,
    /// The complete file.
    pub bytes: Vec<u8>,
    /// Its blobs.
    pub entries: Vec<BlobEntry>,
}

impl PackWriter {
    /// An empty pack of `kind`.
    pub fn new(kind: BlobKind, encrypted: bool) -> Self {
        Self::with_buffer(kind, encrypted, Vec::new())
    }

    /// An empty pack of `kind` written into `buf` (a finished pack's, whose room is kept).
    pub fn with_buffer(kind: BlobKind, encrypted: bool, buf: Vec<u8>) -> Self {
        Self::with_layout(kind, encrypted, PackLayout::Plain, buf)
    }

    /// An empty pack of `kind` in `layout` (the repository's: [`PackLayout::Padded`] in format
    /// version 4) written into `buf`.
    pub fn with_layout(
        kind: BlobKind,
        encrypted: bool,
        layout: PackLayout,
        mut buf: Vec<u8>,
    ) -> Self {
        let header = pack_header(kind, encrypted, layout);
        buf.clear();
        buf.extend_from_slice(&header);
        let pad = layout == PackLayout::Padded && encrypted;
        PackWriter { kind, header, layout, pad, buf, entries: Vec::new() }
    }

    /// The blob kind it holds.
    pub fn kind(&self) -> BlobKind {
        self.kind
    }

    /// Its layout.
    pub fn layout(&self) -> PackLayout {
        self.layout
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Its length once closed (trailer, padding and tail added).
    pub fn closed_len(&self) -> u64 {
        closed_len(self.layout, self.pad, self.buf.len(), self.entries.len())
    }

    /// Its length once closed with one more blob of `sealed_len` bytes: where that equals
    /// [`PackWriter::closed_len`], the blob takes room the padding would have taken.
    pub fn closed_len_with(&self, sealed_len: usize) -> u64 {
        closed_len(self.layout, self.pad, self.buf.len() + sealed_len, self.entries.len() + 1)
    }

    /// Its blobs and their sealed boxes, in order.
    pub fn blobs(&self) -> impl Iterator<Item = (&BlobEntry, &[u8])> {
        self.entries.iter().map(|entry| {
            let start = entry.offset as usize;
            (entry, &self.buf[start..start + entry.stored_len as usize])
        })
    }

    /// Whether it is padded when closed.
    pub(super) fn pads(&self) -> bool {
        self.pad
    }

    /// Its bytes so far (header and blob boxes) and its blobs, to go on elsewhere.
    pub(super) fn into_parts(self) -> (Vec<u8>, Vec<BlobEntry>) {
        (self.buf, self.entries)
    }

    /// Whether it holds no blob.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends a blob of this pack's kind.
    pub fn add(&mut self, blob: &SealedBlob) {
        debug_assert_eq!(blob.kind, self.kind);
        self.entries.push(entry_at(blob, self.buf.len()));
        self.append(&blob.sealed);
    }

    /// Appends the sealed box of a blob of this pack's kind stored elsewhere as `entry` (prune
    /// copies boxes as they are, from the bytes it read, without a copy of its own).
    pub fn add_stored(&mut self, entry: &BlobEntry, sealed: &[u8]) {
        debug_assert_eq!(entry.stored_len as usize, sealed.len());
        let offset = u32::try_from(self.buf.len()).expect("packs are closed long before 4 GiB");
        self.entries.push(BlobEntry { offset, ..*entry });
        self.append(sealed);
    }

    /// Appends the sealed box of a blob stored elsewhere as `entry`, its bytes put at the end of
    /// the pack by `read` (from storage straight into the pack); returns them, to be checked. A
    /// caller whose check fails drops the pack. `read` must append exactly `entry.stored_len`
    /// bytes or nothing and an error.
    pub fn add_stored_read<E>(
        &mut self,
        entry: &BlobEntry,
        read: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<&[u8], E> {
        let start = self.buf.len();
        let offset = u32::try_from(start).expect("packs are closed long before 4 GiB");
        let len = entry.stored_len as usize;
        if self.buf.capacity() - start < len {
            self.buf.reserve_exact(len.max(GROW));
        }
        if let Err(err) = read(&mut self.buf) {
            self.buf.truncate(start);
            return Err(err);
        }
        assert_eq!(self.buf.len() - start, len, "a stored box is read whole");
        self.entries.push(BlobEntry { offset, ..*entry });
        Ok(&self.buf[start..])
    }

    fn append(&mut self, sealed: &[u8]) {
        if self.buf.capacity() - self.buf.len() < sealed.len() {
            self.buf.reserve_exact(sealed.len().max(GROW));
        }
        self.buf.extend_from_slice(sealed);
    }

    /// Closes the pack: sealed trailer, padding and lengths (version 2) or the trailer's length
    /// (version 1), the tail magic.
    pub fn finish(mut self, sealer: &Sealer) -> FinishedPack {
        let closing = Closing {
            header: &self.header,
            layout: self.layout,
            pad: self.pad,
            body_len: self.buf.len(),
        };
        append_tail(closing, &self.entries, sealer, &mut self.buf);
        FinishedPack {
            id: Id::of_file(&self.buf),
            kind: self.kind,
            bytes: self.buf,
            entries: self.entries,
        }
    }
}

/// The index entry of `blob` placed at byte `offset` of its pack.
pub(super) fn entry_at(blob: &SealedBlob, offset: usize) -> BlobEntry {
    BlobEntry {
        id: blob.id,
        compression: blob.compression,
        offset: u32::try_from(offset).expect("packs are closed long before 4 GiB"),
        stored_len: u32::try_from(blob.sealed.len()).expect("blobs are below 4 GiB"),
        raw_len: blob.raw_len,
    }
}

/// The header of a pack of `kind` in `layout`.
pub(super) fn pack_header(kind: BlobKind, encrypted: bool, layout: PackLayout) -> [u8; HEADER_LEN] {
    Header { magic: Magic::Pack, encrypted, sub_kind: kind.code() }.encode_version(layout.version())
}
