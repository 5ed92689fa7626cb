//! The in-memory index: where each blob is, in 36 bytes per blob (docs/store-format.md §8). A
//! table sorted by the first 20 bytes of the id, searched by bisection; blobs added during a run
//! wait in a hash map that is merged into the table whenever it reaches an eighth of it.

use std::collections::HashMap;

use hashbrown::HashTable;

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
    /// The number of each pack in `packs`, found by the pack's id: four bytes a pack, where a
    /// map from id to number would hold the 32-byte id a second time.
    pack_numbers: HashTable<u32>,
    sorted: Vec<Entry>,
    pending: HashMap<([u8; PREFIX], BlobKind), Entry>,
    /// Where each range of prefixes starts in `sorted`: entry `b` is the first position whose
    /// top `directory_bits` bits are `b` or more (one more entry closes the table). With about
    /// four blobs per range, a lookup reads one directory word and a cache line or two of the
    /// table, where a bisection of a table larger than the cache misses once per halving.
    directory: Vec<u32>,
    directory_bits: u32,
    /// Entries left out because the blob was indexed already (a copy in another pack, or one
    /// listed twice): while none were, each pack's blobs are exactly its entries in the table.
    copies_dropped: u64,
}

/// Pack ids are content hashes, spread evenly: their first eight bytes hash them well.
fn pack_hash(id: &Id) -> u64 {
    u64::from_le_bytes(id.0[..8].try_into().expect("8 bytes"))
}

/// The order of prefixes (bytewise) as integers: a comparison of three words where comparing the
/// arrays calls `memcmp`, which the load's sort and every lookup's bisection pay per step.
fn order(prefix: &[u8; PREFIX]) -> (u64, u64, u32) {
    let (high, rest) = prefix.split_at(8);
    let (middle, low) = rest.split_at(8);
    (
        u64::from_be_bytes(high.try_into().expect("8 bytes")),
        u64::from_be_bytes(middle.try_into().expect("8 bytes")),
        u32::from_be_bytes(low.try_into().expect("4 bytes")),
    )
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
        if self.pack_number(&id).is_some() {
            return;
        }
        let number = self.push_pack(id, kind);
        for blob in blobs {
            let entry = Entry {
                prefix: prefix(&blob.id),
                pack: number | if blob.compression == Compression::Zstd { COMPRESSED } else { 0 },
                offset: blob.offset,
                stored_len: blob.stored_len,
                raw_len: blob.raw_len,
            };
            let known = self.find_sorted(&entry.prefix, kind).is_some()
                || self.pending.contains_key(&(entry.prefix, kind));
            if known {
                self.copies_dropped += 1;
            } else {
                self.pending.insert((entry.prefix, kind), entry);
            }
        }
        if self.pending.len() >= MIN_MERGE.max(self.sorted.len() / 8) {
            self.merge();
        }
    }

    /// Records the blobs of pack `id` while loading the index: appended to the table unsorted,
    /// to be sorted once by [`Index::finish_loading`] (merging batch by batch sorted the whole
    /// table dozens of times). Lookups wait for `finish_loading`.
    /// Returns the pack's number.
    pub fn load_pack(&mut self, id: Id, kind: BlobKind, blobs: &[BlobEntry]) -> u32 {
        if let Some(number) = self.pack_number(&id) {
            return number;
        }
        let number = self.push_pack(id, kind);
        grow_by_an_eighth(&mut self.sorted, blobs.len());
        self.sorted.extend(blobs.iter().map(|blob| Entry {
            prefix: prefix(&blob.id),
            pack: number | if blob.compression == Compression::Zstd { COMPRESSED } else { 0 },
            offset: blob.offset,
            stored_len: blob.stored_len,
            raw_len: blob.raw_len,
        }));
        number
    }

    /// Before [`Index::finish_loading`]: forgets every loaded pack whose number is not in
    /// `live` (those only superseded index files listed), and its blobs.
    pub fn keep_only_packs(&mut self, live: &std::collections::HashSet<u32>) {
        if live.len() == self.packs.len() {
            return;
        }
        self.sorted.retain(|e| live.contains(&(e.pack & !COMPRESSED)));
        self.pack_numbers.retain(|number| live.contains(number));
    }

    /// Makes room for `blobs` more before loading, so that the table is allocated once: grown
    /// step by step, each step may copy it, holding two tables at once.
    pub fn reserve(&mut self, blobs: usize) {
        self.sorted.reserve_exact(blobs);
    }

    /// Sorts what [`Index::load_pack`] gathered; of a blob stored in several packs, the pack
    /// loaded first is kept, as [`Index::add_pack`] does.
    pub fn finish_loading(&mut self) {
        // Pack numbers grow in loading order, so among equal prefixes the first loaded sorts
        // first; entries with one prefix are next to each other and rarely more than one.
        self.sorted.sort_unstable_by(|a, b| {
            order(&a.prefix)
                .cmp(&order(&b.prefix))
                .then((a.pack & !COMPRESSED).cmp(&(b.pack & !COMPRESSED)))
        });
        let packs = &self.packs;
        let kind_of = |e: &Entry| packs[(e.pack & !COMPRESSED) as usize].1;
        let mut kept = 0;
        for i in 0..self.sorted.len() {
            let entry = self.sorted[i];
            let run = self.sorted[..kept].iter().rev().take_while(|e| e.prefix == entry.prefix);
            if run.clone().any(|e| kind_of(e) == kind_of(&entry)) {
                self.copies_dropped += 1;
                continue;
            }
            self.sorted[kept] = entry;
            kept += 1;
        }
        self.sorted.truncate(kept);
        // The table grew by an eighth at a time and lost the copies: give back what it will
        // not use (for a large table the allocator returns the tail's pages without copying).
        self.sorted.shrink_to_fit();
        self.packs.shrink_to_fit();
        self.build_directory();
    }

    /// Moves the pending blobs into the sorted table.
    fn merge(&mut self) {
        self.sorted.reserve_exact(self.pending.len());
        self.sorted.extend(self.pending.drain().map(|(_, entry)| entry));
        self.sorted.sort_unstable_by(|a, b| {
            order(&a.prefix).cmp(&order(&b.prefix)).then(a.pack.cmp(&b.pack))
        });
        self.pending.shrink_to(MIN_MERGE);
        self.build_directory();
    }

    /// The top `bits` bits of a prefix.
    fn top_bits(prefix: &[u8; PREFIX], bits: u32) -> usize {
        let top = u64::from_be_bytes(prefix[..8].try_into().expect("8 bytes"));
        if bits == 0 {
            0
        } else {
            (top >> (64 - bits)) as usize
        }
    }

    fn build_directory(&mut self) {
        let n = self.sorted.len();
        // About four entries per range: a byte per blob.
        let bits = if n < 64 { 0 } else { (n / 4).ilog2().min(32) };
        let ranges = 1usize << bits;
        let mut directory = Vec::with_capacity(ranges + 1);
        let mut at = 0;
        for b in 0..ranges {
            while at < n && Index::top_bits(&self.sorted[at].prefix, bits) < b {
                at += 1;
            }
            directory.push(at as u32);
        }
        directory.push(n as u32);
        self.directory = directory;
        self.directory_bits = bits;
    }

    fn kind_of(&self, entry: &Entry) -> BlobKind {
        self.packs[(entry.pack & !COMPRESSED) as usize].1
    }

    /// The first position of the table whose prefix is not below `key`, searched within the
    /// range of prefixes the directory gives for it.
    fn lower_bound(&self, key: &[u8; PREFIX]) -> usize {
        let wanted = order(key);
        if self.directory.len() < 2 {
            return self.sorted.partition_point(|e| order(&e.prefix) < wanted);
        }
        let b = Index::top_bits(key, self.directory_bits);
        let (lo, hi) = (self.directory[b] as usize, self.directory[b + 1] as usize);
        lo + self.sorted[lo..hi].partition_point(|e| order(&e.prefix) < wanted)
    }

    fn find_sorted(&self, prefix: &[u8; PREFIX], kind: BlobKind) -> Option<&Entry> {
        let start = self.lower_bound(prefix);
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
        let start = self.lower_bound(&key);
        self.sorted[start..]
            .iter()
            .take_while(|e| e.prefix == key)
            .position(|e| self.kind_of(e) == kind)
            .map(|offset| start + offset)
    }

    /// Whether the index resolves blob `id` of `kind` (settled) to pack `pack`, and its position.
    pub fn position_in_pack(&self, id: &Id, kind: BlobKind, pack: &Id) -> Option<(usize, bool)> {
        let at = self.position(id, kind)?;
        let number = self.sorted[at].pack & !COMPRESSED;
        Some((at, self.pack_number(pack) == Some(number)))
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
        self.pack_number(id).is_some()
    }

    /// The indexed packs.
    pub fn packs(&self) -> impl Iterator<Item = &(Id, BlobKind)> {
        // Packs forgotten by `keep_only_packs` keep their numbers, not their place here.
        self.packs.iter().filter(|(id, _)| self.has_pack(id))
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

    /// Every blob of a settled index in table order — its position, the number of the pack it
    /// is in and its stored length — for a pass over all blobs without a lookup.
    pub fn table(&self) -> impl Iterator<Item = (usize, u32, u32)> + '_ {
        debug_assert!(self.pending.is_empty(), "table() needs a settled index");
        self.sorted.iter().enumerate().map(|(at, e)| (at, e.pack & !COMPRESSED, e.stored_len))
    }

    /// Pack numbers [`Index::table`] gives lie below this.
    pub fn pack_numbers_end(&self) -> usize {
        self.packs.len()
    }

    /// The number [`Index::table`] gives pack `id`, if it is indexed.
    pub fn pack_number(&self, id: &Id) -> Option<u32> {
        self.pack_numbers.find(pack_hash(id), |&n| self.packs[n as usize].0 == *id).copied()
    }

    /// Numbers pack `id`, not indexed yet.
    fn push_pack(&mut self, id: Id, kind: BlobKind) -> u32 {
        let number = u32::try_from(self.packs.len()).expect("fewer than 2^31 packs");
        assert!(number < COMPRESSED, "fewer than 2^31 packs");
        grow_by_an_eighth(&mut self.packs, 64);
        self.packs.push((id, kind));
        let packs = &self.packs;
        let rehash = |&n: &u32| pack_hash(&packs[n as usize].0);
        self.pack_numbers.insert_unique(pack_hash(&id), number, rehash);
        number
    }

    /// Entries left out as copies of a blob indexed already (in another pack, or twice in one).
    /// When 0, the blobs of each pack are exactly its entries in [`Index::table`].
    pub fn copies_dropped(&self) -> u64 {
        self.copies_dropped
    }

    /// For each indexed pack, where its last indexed blob ends: a pack shorter than that is
    /// truncated, which a listing of sizes shows without reading it. (A lower bound of its
    /// size: the trailer follows, and a blob also stored elsewhere may be indexed there.)
    pub fn pack_ends(&self) -> HashMap<Id, u64> {
        let mut ends: Vec<u64> = vec![0; self.packs.len()];
        for entry in self.sorted.iter().chain(self.pending.values()) {
            let end = u64::from(entry.offset) + u64::from(entry.stored_len);
            let slot = &mut ends[(entry.pack & !COMPRESSED) as usize];
            *slot = (*slot).max(end);
        }
        self.packs()
            .map(|(id, _)| (*id, ends[self.pack_number(id).expect("indexed") as usize]))
            .collect()
    }

    /// Bytes of memory the blob table holds (capacity, not length), for reports.
    pub fn memory_bytes(&self) -> usize {
        self.sorted.capacity() * std::mem::size_of::<Entry>()
            + self.pending.capacity()
                * (std::mem::size_of::<(([u8; PREFIX], BlobKind), Entry)>() + 1)
            + self.packs.capacity() * std::mem::size_of::<(Id, BlobKind)>()
            + self.directory.capacity() * std::mem::size_of::<u32>()
            + self.pack_numbers.capacity() * (std::mem::size_of::<u32>() + 1)
    }
}

/// Makes room for `more` elements, growing `vec` by at least an eighth of its length instead of
/// doubling it: the table and the pack list hold millions of entries, and a doubled capacity
/// would leave up to half of them unused (the index stays near 36 bytes per blob this way).
fn grow_by_an_eighth<T>(vec: &mut Vec<T>, more: usize) {
    if vec.capacity() - vec.len() < more {
        vec.reserve_exact(more.max(vec.len() / 8));
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
    fn copies_of_indexed_blobs_are_counted_and_the_table_lists_the_rest() {
        let mut loaded = Index::new();
        loaded.load_pack(Id([1; 32]), BlobKind::Data, &[entry(1), entry(2)]);
        loaded.load_pack(Id([2; 32]), BlobKind::Data, &[entry(3)]);
        loaded.finish_loading();
        assert_eq!(loaded.copies_dropped(), 0);
        let mut by_pack = vec![0u64; loaded.pack_numbers_end()];
        for (at, pack, len) in loaded.table() {
            assert_eq!(loaded.position(&entry(len - 40).id, BlobKind::Data), Some(at));
            by_pack[pack as usize] += 1;
        }
        assert_eq!(by_pack[loaded.pack_number(&Id([1; 32])).unwrap() as usize], 2);
        assert_eq!(by_pack[loaded.pack_number(&Id([2; 32])).unwrap() as usize], 1);

        let mut copies = Index::new();
        copies.load_pack(Id([1; 32]), BlobKind::Data, &[entry(1), entry(2)]);
        copies.load_pack(Id([2; 32]), BlobKind::Data, &[entry(2)]);
        copies.load_pack(Id([3; 32]), BlobKind::Tree, &[entry(2)]);
        copies.finish_loading();
        // The tree blob with the data blob's id is another blob, not a copy.
        assert_eq!((copies.copies_dropped(), copies.len()), (1, 3));
        copies.add_pack(Id([4; 32]), BlobKind::Data, &[entry(1), entry(5), entry(5)]);
        assert_eq!((copies.copies_dropped(), copies.len()), (3, 4));
    }

    #[test]
    fn a_pack_ends_where_its_last_blob_does() {
        let mut index = Index::new();
        index.add_pack(Id([1; 32]), BlobKind::Data, &[entry(10), entry(500), entry(20)]);
        index.add_pack(Id([2; 32]), BlobKind::Tree, &[entry(7)]);
        index.settle();
        index.add_pack(Id([3; 32]), BlobKind::Data, &[entry(9)]);
        let ends = index.pack_ends();
        assert_eq!(ends.len(), 3);
        assert_eq!(ends[&Id([1; 32])], 500 + 40 + 500);
        assert_eq!(ends[&Id([2; 32])], 7 + 40 + 7);
        assert_eq!(ends[&Id([3; 32])], 9 + 40 + 9);
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
    fn prefixes_that_differ_past_the_first_word_sort_and_are_found_bytewise() {
        // Ids alike in their first 8 or 16 bytes, differing in a byte of the second or third
        // word, on either side of 0x80: a word read in the wrong byte order, or a word left out
        // of the comparison, would misplace them.
        let mut ids = Vec::new();
        for at in [8, 12, 15, 16, 19] {
            for byte in [0x00, 0x01, 0x7f, 0x80, 0xfe] {
                for low in [0x00, 0xff] {
                    let mut id = [0x5a; 32];
                    id[at] = byte;
                    id[PREFIX - 1 - usize::from(at == PREFIX - 1)] ^= low;
                    ids.push(id);
                }
            }
        }
        ids.sort_unstable();
        ids.dedup_by(|a, b| a[..PREFIX] == b[..PREFIX]);
        let blobs: Vec<BlobEntry> = ids
            .iter()
            .rev()
            .enumerate()
            .map(|(n, id)| BlobEntry { id: Id(*id), ..entry(n as u32) })
            .collect();
        for pair in ids.windows(2) {
            let (a, b) = (prefix(&Id(pair[0])), prefix(&Id(pair[1])));
            assert_eq!(order(&a).cmp(&order(&b)), a.cmp(&b));
        }
        let mut loaded = Index::new();
        loaded.load_pack(Id([1; 32]), BlobKind::Data, &blobs);
        loaded.finish_loading();
        let mut added = Index::new();
        added.add_pack(Id([1; 32]), BlobKind::Data, &blobs);
        added.merge();
        for index in [&loaded, &added] {
            let table: Vec<_> = index.sorted.iter().map(|e| e.prefix).collect();
            assert!(table.windows(2).all(|w| w[0] < w[1]), "the table is not in byte order");
            for blob in &blobs {
                let found = index.lookup(&blob.id, BlobKind::Data).expect("indexed");
                assert_eq!(found.entry.offset, blob.offset);
            }
        }
    }

    #[test]
    fn the_guessing_search_finds_what_bisection_finds() {
        let mut index = Index::new();
        let blobs: Vec<_> = (0..20_000).map(|n| entry(n * 3)).collect();
        index.load_pack(Id([1; 32]), BlobKind::Data, &blobs);
        index.finish_loading();
        for n in 0..60_000 {
            let key = prefix(&entry(n).id);
            let want = index.sorted.partition_point(|e| e.prefix < key);
            assert_eq!(index.lower_bound(&key), want, "{n}");
        }
        for key in [[0u8; PREFIX], [0xff; PREFIX]] {
            assert_eq!(index.lower_bound(&key), index.sorted.partition_point(|e| e.prefix < key));
        }
    }

    #[test]
    fn loading_in_bulk_finds_what_adding_one_by_one_finds() {
        let mut one_by_one = Index::new();
        let mut bulk = Index::new();
        for pack in 0..20u32 {
            // Overlapping packs: blobs stored twice, and tree blobs with data blobs' ids.
            let blobs: Vec<_> = (pack * 500..pack * 500 + 800).map(entry).collect();
            let kind = if pack % 5 == 4 { BlobKind::Tree } else { BlobKind::Data };
            one_by_one.add_pack(Id([pack as u8; 32]), kind, &blobs);
            bulk.load_pack(Id([pack as u8; 32]), kind, &blobs);
        }
        bulk.finish_loading();
        one_by_one.settle();
        assert_eq!(bulk.len(), one_by_one.len());
        for n in 0..11_000 {
            for kind in [BlobKind::Data, BlobKind::Tree] {
                assert_eq!(bulk.lookup(&entry(n).id, kind), one_by_one.lookup(&entry(n).id, kind));
            }
        }
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
