//! The in-memory index: where each blob is, in 36 bytes per blob (docs/store-format.md §8). A
//! table sorted by the first 20 bytes of the id, searched by bisection; blobs added during a run
//! wait in a hash map that is merged into the table whenever it reaches an eighth of it.

use std::collections::HashMap;

use crate::blob::BlobKind;
use crate::format::{BlobEntry, Compression};
use crate::id::Id;

/// Bytes of the id kept in memory.
const PREFIX: usize = 20;
/// Top bit of `Entry::pack`: the blob is zstd-compressed.
const COMPRESSED: u32 = 1 << 31;
/// The pending map is merged once it holds this many entries, or an eighth of the table.
const MIN_MERGE: usize = 4096;

/// One blob's location: 36 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    prefix: [u8; PREFIX],
    /// Pack number (index into `packs`); top bit: compressed.
    pack: u32,
    offset: u32,
    stored_len: u32,
    raw_len: u32,
}

/// A blob's location, as a lookup returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// The pack.
    pub pack: Id,
    /// Where in it, with the id asked for.
    pub entry: BlobEntry,
}

/// The index of a repository.
#[derive(Default)]
pub struct Index {
    packs: Vec<(Id, BlobKind)>,
    pack_numbers: HashMap<Id, u32>,
    sorted: Vec<Entry>,
    pending: HashMap<([u8; PREFIX], BlobKind), Entry>,
}

fn prefix(id: &Id) -> [u8; PREFIX] {
    let mut out = [0u8; PREFIX];
    out.copy_from_slice(&id.0[..PREFIX]);
    out
}

impl Index {
    /// An empty index.
    pub fn new() -> Self {
        Index::default()
    }

    /// Records the blobs of pack `id`. A pack added twice is recorded once.
    pub fn add_pack(&mut self, id: Id, kind: BlobKind, blobs: &[BlobEntry]) {
        if self.pack_numbers.contains_key(&id) {
            return;
        }
        let number = u32::try_from(self.packs.len()).expect("fewer than 2^31 packs");
        assert!(number < COMPRESSED, "fewer than 2^31 packs");
        self.packs.push((id, kind));
        self.pack_numbers.insert(id, number);
        for blob in blobs {
            let entry = Entry {
                prefix: prefix(&blob.id),
                pack: number | if blob.compression == Compression::Zstd { COMPRESSED } else { 0 },
                offset: blob.offset,
                stored_len: blob.stored_len,
                raw_len: blob.raw_len,
            };
            if self.find_sorted(&entry.prefix, kind).is_none() {
                self.pending.entry((entry.prefix, kind)).or_insert(entry);
            }
        }
        if self.pending.len() >= MIN_MERGE.max(self.sorted.len() / 8) {
            self.merge();
        }
    }

    /// Moves the pending blobs into the sorted table.
    fn merge(&mut self) {
        self.sorted.reserve_exact(self.pending.len());
        self.sorted.extend(self.pending.drain().map(|(_, entry)| entry));
        self.sorted.sort_unstable_by(|a, b| a.prefix.cmp(&b.prefix).then(a.pack.cmp(&b.pack)));
        self.pending.shrink_to(MIN_MERGE);
    }

    fn kind_of(&self, entry: &Entry) -> BlobKind {
        self.packs[(entry.pack & !COMPRESSED) as usize].1
    }

    fn find_sorted(&self, prefix: &[u8; PREFIX], kind: BlobKind) -> Option<&Entry> {
        let start = self.sorted.partition_point(|e| e.prefix < *prefix);
        self.sorted[start..]
            .iter()
            .take_while(|e| e.prefix == *prefix)
            .find(|e| self.kind_of(e) == kind)
    }

    /// Moves every pending blob into the sorted table, so that each has a [`Index::position`].
    pub fn settle(&mut self) {
        if !self.pending.is_empty() {
            self.merge();
        }
    }

    /// The position of blob `id` of `kind` in the table, below [`Index::len`], for marks kept
    /// in a bit per blob; `None` when it is not indexed. Only for a settled index.
    pub fn position(&self, id: &Id, kind: BlobKind) -> Option<usize> {
        debug_assert!(self.pending.is_empty(), "position() needs a settled index");
        let key = prefix(id);
        let start = self.sorted.partition_point(|e| e.prefix < key);
        self.sorted[start..]
            .iter()
            .take_while(|e| e.prefix == key)
            .position(|e| self.kind_of(e) == kind)
            .map(|offset| start + offset)
    }

    /// Where blob `id` of `kind` is stored.
    pub fn lookup(&self, id: &Id, kind: BlobKind) -> Option<Location> {
        let key = prefix(id);
        let entry = self.pending.get(&(key, kind)).or_else(|| self.find_sorted(&key, kind))?;
        let (pack, _) = self.packs[(entry.pack & !COMPRESSED) as usize];
        Some(Location {
            pack,
            entry: BlobEntry {
                id: *id,
                compression: if entry.pack & COMPRESSED != 0 {
                    Compression::Zstd
                } else {
                    Compression::None
                },
                offset: entry.offset,
                stored_len: entry.stored_len,
                raw_len: entry.raw_len,
            },
        })
    }

    /// Whether blob `id` of `kind` is stored.
    pub fn contains(&self, id: &Id, kind: BlobKind) -> bool {
        let key = prefix(id);
        self.pending.contains_key(&(key, kind)) || self.find_sorted(&key, kind).is_some()
    }

    /// Whether pack `id` is indexed.
    pub fn has_pack(&self, id: &Id) -> bool {
        self.pack_numbers.contains_key(id)
    }

    /// The indexed packs.
    pub fn packs(&self) -> impl Iterator<Item = &(Id, BlobKind)> {
        self.packs.iter()
    }

    /// Number of distinct blobs.
    pub fn len(&self) -> usize {
        self.sorted.len() + self.pending.len()
    }

    /// Whether no blob is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Per kind: (blobs, stored bytes, raw bytes).
    pub fn totals(&self) -> [(u64, u64, u64); 2] {
        let mut out = [(0, 0, 0); 2];
        for entry in self.sorted.iter().chain(self.pending.values()) {
            let slot = &mut out[usize::from(self.kind_of(entry) == BlobKind::Tree)];
            slot.0 += 1;
            slot.1 += u64::from(entry.stored_len);
            slot.2 += u64::from(entry.raw_len);
        }
        out
    }

    /// Bytes of memory the blob table holds (capacity, not length), for reports.
    pub fn memory_bytes(&self) -> usize {
        self.sorted.capacity() * std::mem::size_of::<Entry>()
            + self.pending.capacity()
                * (std::mem::size_of::<(([u8; PREFIX], BlobKind), Entry)>() + 1)
            + self.packs.capacity() * std::mem::size_of::<(Id, BlobKind)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u32) -> BlobEntry {
        let mut id = [0u8; 32];
        id[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
        id[4..8].copy_from_slice(&n.to_le_bytes());
        BlobEntry {
            id: Id(id),
            compression: if n.is_multiple_of(2) { Compression::Zstd } else { Compression::None },
            offset: n,
            stored_len: 40 + n,
            raw_len: n,
        }
    }

    #[test]
    fn an_entry_takes_36_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 36);
    }

    #[test]
    fn every_added_blob_is_found_where_it_was_put() {
        let mut index = Index::new();
        for pack in 0..50u32 {
            let blobs: Vec<_> = (pack * 1000..pack * 1000 + 1000).map(entry).collect();
            index.add_pack(Id([pack as u8; 32]), BlobKind::Data, &blobs);
        }
        assert_eq!(index.len(), 50_000);
        for n in (0..50_000).step_by(7) {
            let want = entry(n);
            let found = index.lookup(&want.id, BlobKind::Data).expect("indexed");
            assert_eq!(found.entry, want);
            assert_eq!(found.pack, Id([(n / 1000) as u8; 32]));
            assert!(!index.contains(&want.id, BlobKind::Tree));
        }
        assert!(index.lookup(&Id([0xff; 32]), BlobKind::Data).is_none());
        // The table stays under 40 bytes per blob once merged.
        index.merge();
        assert!(
            index.memory_bytes() <= 40 * index.len() + (512 << 10),
            "{} bytes",
            index.memory_bytes()
        );
    }

    #[test]
    fn positions_are_distinct_and_below_the_length() {
        let mut index = Index::new();
        index.add_pack(Id([1; 32]), BlobKind::Data, &(0..300).map(entry).collect::<Vec<_>>());
        index.add_pack(Id([2; 32]), BlobKind::Tree, &(0..10).map(entry).collect::<Vec<_>>());
        index.settle();
        let mut seen = std::collections::HashSet::new();
        for n in 0..300 {
            let at = index.position(&entry(n).id, BlobKind::Data).unwrap();
            assert!(at < index.len() && seen.insert(at));
        }
        for n in 0..10 {
            assert!(seen.insert(index.position(&entry(n).id, BlobKind::Tree).unwrap()));
        }
        assert_eq!(index.position(&entry(10).id, BlobKind::Tree), None);
        assert_eq!(seen.len(), index.len());
    }

    #[test]
    fn a_blob_in_two_packs_is_counted_once_and_kinds_are_apart() {
        let mut index = Index::new();
        index.add_pack(Id([1; 32]), BlobKind::Data, &[entry(5)]);
        index.add_pack(Id([2; 32]), BlobKind::Data, &[entry(5)]);
        index.add_pack(Id([3; 32]), BlobKind::Tree, &[entry(5)]);
        assert_eq!(index.len(), 2);
        assert_eq!(index.lookup(&entry(5).id, BlobKind::Data).unwrap().pack, Id([1; 32]));
        assert_eq!(index.lookup(&entry(5).id, BlobKind::Tree).unwrap().pack, Id([3; 32]));
    }
}
