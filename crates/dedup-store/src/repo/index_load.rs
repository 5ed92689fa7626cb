//! Loading the index: every index file, verified and decoded, less those another supersedes.

use std::collections::HashSet;

use super::Repository;
use crate::error::{Error, Result};
use crate::format::{IndexFile, Magic};
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

    /// Writes an index file; returns its id.
    pub fn write_index_file(&self, file: &IndexFile) -> Result<Id> {
        self.write_sealed("index", Magic::Index, &file.encode())
    }

    /// Loads the whole index. Damaged index files are reported in `problems`, not fatal.
    pub fn load_index(&self) -> Result<LoadedIndex> {
        self.load_index_without(&HashSet::new())
    }

    /// Loads the index less the packs in `left_out` (those a deletion plan names, which a writer
    /// must treat as gone, §12).
    pub fn load_index_without(&self, left_out: &HashSet<Id>) -> Result<LoadedIndex> {
        let mut files = Vec::new();
        let mut problems = Vec::new();
        for id in self.list_index_files()? {
            match self.read_index_file(&id) {
                Ok(file) => files.push((id, file)),
                Err(err) => problems.push(err),
            }
        }
        let superseded: HashSet<Id> =
            files.iter().flat_map(|(_, f)| f.supersedes.iter().copied()).collect();
        let mut index = Index::new();
        let mut used = Vec::new();
        let mut ignored = Vec::new();
        for (id, file) in files {
            if superseded.contains(&id) {
                ignored.push(id);
                continue;
            }
            for pack in file.packs.iter().filter(|p| !left_out.contains(&p.id)) {
                index.add_pack(pack.id, pack.kind, &pack.blobs);
            }
            used.push(id);
        }
        Ok(LoadedIndex { index, files: used, superseded: ignored, problems })
    }
}
