//! Loading the index: every index file, verified and decoded, less those another supersedes.

use std::collections::HashSet;
use std::sync::Arc;

use super::Repository;
use crate::error::{Error, Result};
use crate::format::{IndexFile, IndexedPack, Magic, ENTRY_LEN};
use crate::id::Id;
use crate::index::Index;

/// The index and what loading it met.
pub struct LoadedIndex {
    /// Blobs by id.
    pub index: Index,
    /// The index files it was built from.
    pub files: Vec<Id>,
    /// Index files present that another present one supersedes (left by an interrupted prune).
    pub superseded: Vec<Id>,
    /// Index files that could not be read (their packs may still be found by their trailers).
    pub problems: Vec<Error>,
    /// Listings of a pack in the files in force beyond its first (which alone the index
    /// keeps): another listing may name a blob the first one lacks.
    pub packs_listed_again: u64,
}

impl Repository {
    /// Ids of the index files present.
    pub fn list_index_files(&self) -> Result<Vec<Id>> {
        let listing = self.backend().list("index").map_err(|e| Error::io("index", e))?;
        Ok(listing
            .iter()
            .filter_map(|o| o.name.strip_prefix("index/").and_then(Id::from_hex))
            .collect())
    }

    /// Reads one index file.
    pub fn read_index_file(&self, id: &Id) -> Result<IndexFile> {
        let plain = self.read_sealed("index", Magic::Index, id)?;
        IndexFile::decode(&plain).map_err(|e| Error::decode(format!("index/{id}"), e))
    }

    /// Reads one index file and checks that it decodes whole, returning its plaintext for
    /// [`IndexFile::decode_each`]: a reader that then takes it pack by pack (never holding it
    /// decoded whole, as much again as its plaintext) meets no error half-way, and a file that
    /// does not decode is refused before any of it is used, as one that does not open.
    pub(crate) fn read_index_checked(&self, id: &Id) -> Result<Vec<u8>> {
        let plain = self.read_sealed("index", Magic::Index, id)?;
        IndexFile::decode_each(&plain, drop)
            .map_err(|e| Error::decode(format!("index/{id}"), e))?;
        Ok(plain)
    }

    /// Writes an index file; returns its id.
    pub fn write_index_file(&self, file: &IndexFile) -> Result<Id> {
        let written = self.write_sealed("index", Magic::Index, &file.encode());
        self.forget_index();
        written
    }

    /// The whole index, read the first time it is asked for and kept until an index file is
    /// written through this repository value: what every reading command looks blobs up in. Damaged index files are
    /// left out, as [`Repository::load_index`] leaves them (`check` reports them).
    pub fn index(&self) -> Result<Arc<Index>> {
        if let Some(index) = self.index.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
            return Ok(Arc::clone(index));
        }
        let loaded = Arc::new(self.load_index()?.index);
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&loaded));
        Ok(loaded)
    }

    /// Drops the index [`Repository::index`] kept, so that the next use reads it again: done
    /// whenever an index file is written through this repository (a writer's blobs become
    /// readable, a prune's moves are followed).
    pub fn forget_index(&self) {
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Loads the whole index afresh. Damaged index files are reported in `problems`, not fatal.
    pub fn load_index(&self) -> Result<LoadedIndex> {
        self.load_index_without(&HashSet::new())
    }

    /// Loads the index less the packs in `left_out` (those a deletion plan names, which a writer
    /// must treat as gone, §12).
    pub fn load_index_without(&self, left_out: &HashSet<Id>) -> Result<LoadedIndex> {
        self.load_index_with(left_out, &HashSet::new())
    }

    /// Loads the whole index, resolving a blob stored in several packs to one outside `last`
    /// where there is one (prune: a copy in a pack an earlier plan deletes is never the one
    /// counted as used).
    pub fn load_index_preferring_others(&self, last: &HashSet<Id>) -> Result<LoadedIndex> {
        self.load_index_with(&HashSet::new(), last)
    }

    fn load_index_with(&self, left_out: &HashSet<Id>, last: &HashSet<Id>) -> Result<LoadedIndex> {
        let mut problems = Vec::new();
        let listing = self.backend().list("index").map_err(|e| Error::io("index", e))?;
        // Each blob takes at least ENTRY_LEN bytes of an index file: an upper bound of the
        // blobs to come, close enough (headers and pack ids are small) to allocate once.
        let at_most: u64 = listing.iter().map(|o| o.size).sum::<u64>() / ENTRY_LEN as u64;
        let mut index = Index::new();
        index.reserve(usize::try_from(at_most).unwrap_or(0));
        // Each file goes into the index as it is read, so that no more than one is held
        // decoded; which files are superseded is known only at the end, when the packs that
        // only superseded files list are dropped again.
        let mut loaded: Vec<(Id, Vec<u32>)> = Vec::new();
        let mut superseded: HashSet<Id> = HashSet::new();
        let ids =
            listing.iter().filter_map(|o| o.name.strip_prefix("index/").and_then(Id::from_hex));
        // Packs of `last`, loaded after all others: of a blob's copies the index keeps the one
        // of the pack loaded first. Few (those of waiting deletion plans), so held until then.
        let mut deferred: Vec<(usize, IndexedPack)> = Vec::new();
        for id in ids {
            // Decoded pack by pack into the table, never whole.
            let plain = match self.read_index_checked(&id) {
                Ok(plain) => plain,
                Err(err) => {
                    problems.push(err);
                    continue;
                }
            };
            let mut packs = Vec::new();
            let supersedes = IndexFile::decode_each(&plain, |pack| {
                if left_out.contains(&pack.id) {
                    return;
                }
                if last.contains(&pack.id) {
                    deferred.push((loaded.len(), pack));
                } else {
                    packs.push(index.load_pack(pack.id, pack.kind, &pack.blobs));
                }
            })
            .map_err(|e| Error::decode(format!("index/{id}"), e))?;
            superseded.extend(supersedes);
            loaded.push((id, packs));
        }
        for (file, pack) in deferred {
            let number = index.load_pack(pack.id, pack.kind, &pack.blobs);
            loaded[file].1.push(number);
        }
        let mut used = Vec::new();
        let mut ignored = Vec::new();
        let mut live = HashSet::new();
        let mut listings = 0u64;
        for (id, packs) in loaded {
            if superseded.contains(&id) {
                ignored.push(id);
            } else {
                listings += packs.len() as u64;
                live.extend(packs);
                used.push(id);
            }
        }
        let packs_listed_again = listings - live.len() as u64;
        index.keep_only_packs(&live);
        index.finish_loading();
        Ok(LoadedIndex { index, files: used, superseded: ignored, problems, packs_listed_again })
    }
}
