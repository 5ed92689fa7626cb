//! A pack written to the storage as it fills, for a backend that can take an object's bytes
//! before its name ([`ObjectWriter`]): the same bytes as [`super::PackWriter`] builds in memory,
//! hashed on the way, so that only the trailer is ever held and the pack's name (its hash) is
//! known the moment its tail is written.

use std::io;

use super::tail::{append_tail, closed_len, Closing, PackLayout};
use super::writer::{entry_at, PackWriter};
use crate::backend::ObjectWriter;
use crate::blob::{BlobKind, SealedBlob};
use crate::crypto::Sealer;
use crate::format::{BlobEntry, HEADER_LEN};
use crate::id::Id;

/// A pack being written.
pub struct StreamedPackWriter {
    kind: BlobKind,
    header: [u8; HEADER_LEN],
    layout: PackLayout,
    /// Whether it is padded when closed (version 2 in an encrypted repository).
    pad: bool,
    object: Box<dyn ObjectWriter>,
    hasher: blake3::Hasher,
    len: usize,
    entries: Vec<BlobEntry>,
}

/// A pack whose last byte is written, to be named.
pub struct StreamedPack {
    /// Its id (BLAKE3 of its bytes).
    pub id: Id,
    /// Its blob kind.
    pub kind: BlobKind,
    /// Its length in bytes.
    pub len: u64,
    /// Its blobs.
    pub entries: Vec<BlobEntry>,
    /// The storage's writer holding it, to be committed under the pack's path (by its id).
    pub object: Box<dyn ObjectWriter>,
}

impl StreamedPackWriter {
    /// An empty pack of `kind` in `object`, its header written.
    pub fn new(kind: BlobKind, encrypted: bool, object: Box<dyn ObjectWriter>) -> io::Result<Self> {
        Self::with_layout(kind, encrypted, PackLayout::Plain, object)
    }

    /// An empty pack of `kind` in `layout` (the repository's) in `object`, its header written.
    pub fn with_layout(
        kind: BlobKind,
        encrypted: bool,
        layout: PackLayout,
        object: Box<dyn ObjectWriter>,
    ) -> io::Result<Self> {
        let memory = PackWriter::with_layout(kind, encrypted, layout, Vec::new());
        Self::from_memory(memory, object)
    }

    /// The pack `memory` goes on in `object`: what it holds so far is written there, and every
    /// later blob as it comes.
    pub fn from_memory(memory: PackWriter, object: Box<dyn ObjectWriter>) -> io::Result<Self> {
        let (kind, layout, pad) = (memory.kind(), memory.layout(), memory.pads());
        let (bytes, entries) = memory.into_parts();
        let header: [u8; HEADER_LEN] = bytes[..HEADER_LEN].try_into().expect("a header");
        let mut writer = StreamedPackWriter {
            kind,
            header,
            layout,
            pad,
            object,
            hasher: blake3::Hasher::new(),
            len: 0,
            entries,
        };
        writer.put(&bytes)?;
        Ok(writer)
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.object.write(bytes)?;
        self.hasher.update(bytes);
        self.len += bytes.len();
        Ok(())
    }

    /// The blob kind it holds.
    pub fn kind(&self) -> BlobKind {
        self.kind
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Its length once closed (trailer, padding and tail added).
    pub fn closed_len(&self) -> u64 {
        closed_len(self.layout, self.pad, self.len, self.entries.len())
    }

    /// Its length once closed with one more blob of `sealed_len` bytes (see
    /// [`PackWriter::closed_len_with`]).
    pub fn closed_len_with(&self, sealed_len: usize) -> u64 {
        closed_len(self.layout, self.pad, self.len + sealed_len, self.entries.len() + 1)
    }

    /// Whether it holds no blob.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The ids of the blobs it holds.
    pub fn blob_ids(&self) -> impl Iterator<Item = Id> + '_ {
        self.entries.iter().map(|entry| entry.id)
    }

    /// Marks the pack's unfinished object as a live writer's (see [`ObjectWriter::keep_alive`]).
    pub fn keep_alive(&self) -> io::Result<()> {
        self.object.keep_alive()
    }

    /// Appends a blob of this pack's kind; after an error the pack is unusable (drop it, which
    /// removes what was written).
    pub fn add(&mut self, blob: &SealedBlob) -> io::Result<()> {
        debug_assert_eq!(blob.kind, self.kind);
        let entry = entry_at(blob, self.len);
        self.put(&blob.sealed)?;
        self.entries.push(entry);
        Ok(())
    }

    /// Writes the tail (sealed trailer, padding and lengths or the trailer's length, the tail
    /// magic): the pack is complete and its id known, but not yet stored under it.
    pub fn finish(mut self, sealer: &Sealer) -> io::Result<StreamedPack> {
        let mut tail = Vec::new();
        let closing = Closing {
            header: &self.header,
            layout: self.layout,
            pad: self.pad,
            body_len: self.len,
        };
        append_tail(closing, &self.entries, sealer, &mut tail);
        self.put(&tail)?;
        Ok(StreamedPack {
            id: Id(*self.hasher.finalize().as_bytes()),
            kind: self.kind,
            len: self.len as u64,
            entries: self.entries,
            object: self.object,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, LocalBackend, PutOutcome};
    use crate::blob::seal;
    use crate::format::CompressionMode;
    use crate::pack::{pack_path, parse_pack, PackWriter};

    fn blobs() -> Vec<SealedBlob> {
        let sealer = Sealer::new([9; 32], false);
        (0..20u32)
            .map(|i| {
                let text = format!("blob {i} ").repeat(1 + (i as usize * 997) % 5000);
                let id = crate::blob::blob_id(&[2; 32], text.as_bytes());
                seal(&sealer, id, BlobKind::Data, text.as_bytes(), CompressionMode::Auto)
            })
            .collect()
    }

    #[test]
    fn a_streamed_pack_is_byte_for_byte_the_pack_built_in_memory() {
        // Unencrypted, the boxes have no random nonce: the same blobs make the same bytes.
        let sealer = Sealer::new([9; 32], false);
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut memory = PackWriter::new(BlobKind::Data, false);
        let object = backend.begin_object("data").unwrap().expect("a local backend streams");
        let mut streamed = StreamedPackWriter::new(BlobKind::Data, false, object).unwrap();
        for blob in blobs() {
            memory.add(&blob);
            streamed.add(&blob).unwrap();
            assert_eq!(memory.len(), streamed.len());
        }
        let memory = memory.finish(&sealer);
        let streamed = streamed.finish(&sealer).unwrap();
        assert_eq!(streamed.id, memory.id);
        assert_eq!(streamed.len, memory.bytes.len() as u64);
        assert_eq!(streamed.entries, memory.entries);
        let name = pack_path(&streamed.id);
        assert_eq!(streamed.object.commit(&name).unwrap(), PutOutcome::Created);
        let stored = backend.get(&name).unwrap();
        assert!(stored == memory.bytes, "the stored pack differs from the one built in memory");
        assert_eq!(Id::of_file(&stored), memory.id);
        assert_eq!(parse_pack(&sealer, &stored).unwrap().entries, memory.entries);
    }

    #[test]
    fn a_pack_begun_in_memory_and_streamed_on_is_the_pack_built_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        for encrypted in [false, true] {
            let sealer = Sealer::new([9; 32], encrypted);
            let layout = PackLayout::Padded;
            let mut memory = PackWriter::with_layout(BlobKind::Data, encrypted, layout, Vec::new());
            let mut begun = PackWriter::with_layout(BlobKind::Data, encrypted, layout, Vec::new());
            let blobs = blobs();
            for blob in &blobs[..5] {
                memory.add(blob);
                begun.add(blob);
            }
            let object = backend.begin_object("data").unwrap().unwrap();
            let mut streamed = StreamedPackWriter::from_memory(begun, object).unwrap();
            for blob in &blobs[5..] {
                assert_eq!(
                    streamed.closed_len_with(blob.sealed.len()),
                    memory.closed_len_with(blob.sealed.len())
                );
                memory.add(blob);
                streamed.add(blob).unwrap();
                assert_eq!(streamed.closed_len(), memory.closed_len());
            }
            let want_len = memory.closed_len();
            let memory = memory.finish(&sealer);
            let streamed = streamed.finish(&sealer).unwrap();
            assert_eq!((streamed.len, memory.bytes.len() as u64), (want_len, want_len));
            assert_eq!(streamed.entries, memory.entries);
            let name = pack_path(&streamed.id);
            streamed.object.commit(&name).unwrap();
            let stored = backend.get(&name).unwrap();
            assert_eq!(parse_pack(&sealer, &stored).unwrap().entries, memory.entries);
            if !encrypted {
                // No random nonce and no padding: the same bytes.
                assert!(stored == memory.bytes, "the stored pack differs from the one in memory");
            }
        }
    }

    #[test]
    fn a_pack_abandoned_before_its_commit_leaves_only_a_temporary_name() {
        let sealer = Sealer::new([9; 32], true);
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let object = backend.begin_object("data").unwrap().unwrap();
        let mut pack = StreamedPackWriter::new(BlobKind::Data, true, object).unwrap();
        for blob in blobs() {
            pack.add(&blob).unwrap();
        }
        // Killed between the tail and the rename: no destructor runs.
        std::mem::forget(pack.finish(&sealer).unwrap());
        let names: Vec<String> = std::fs::read_dir(dir.path().join("data"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with(".tmp-"), "{names:?}");
        assert!(backend.list("data").unwrap().is_empty(), "readers see no pack");
    }
}
