//! Reading blobs back: locate in the index, read the box with one range request, open, verify.

use super::Repository;
use crate::blob::{self, BlobKind};
use crate::error::{Error, Result};
use crate::format::{StatusTree, Tree};
use crate::id::Id;
use crate::index::{Index, Location};
use crate::pack::pack_path;

/// What a failed range read of blob `id` of `kind` in pack `name` means: the pack missing, or
/// ending before the blob (truncated), or another I/O error.
pub(crate) fn range_error(name: &str, kind: BlobKind, id: &Id, err: std::io::Error) -> Error {
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            Error::Missing { object: format!("{name} (holding {} blob {id})", kind.name()) }
        }
        std::io::ErrorKind::UnexpectedEof => Error::damaged(
            format!("{} blob {id} in {name}", kind.name()),
            "the pack ends before the blob (truncated)",
        ),
        _ => Error::io(name, err),
    }
}

impl Repository {
    /// The plaintext of blob `id` of `kind`, found in the repository's index
    /// ([`Repository::index`]) and verified against its id.
    pub fn blob(&self, id: &Id, kind: BlobKind) -> Result<Vec<u8>> {
        let index = self.index()?;
        self.read_blob(&index, id, kind)
    }

    /// The tree blob `id`, found in the repository's index, decoded.
    pub fn tree(&self, id: &Id) -> Result<Tree> {
        let index = self.index()?;
        self.read_tree(&index, id)
    }

    /// The plaintext of blob `id` of `kind` in `index`, verified against its id.
    pub fn read_blob(&self, index: &Index, id: &Id, kind: BlobKind) -> Result<Vec<u8>> {
        let location = index.lookup(id, kind).ok_or_else(|| Error::Missing {
            object: format!("{} blob {id} (not in the index)", kind.name()),
        })?;
        self.read_blob_at(&location, kind)
    }

    /// The plaintext of the blob at `location`, verified against its id.
    pub fn read_blob_at(&self, location: &Location, kind: BlobKind) -> Result<Vec<u8>> {
        let id = location.entry.id;
        let name = pack_path(&location.pack);
        let entry = location.entry;
        let (offset, len) = (u64::from(entry.offset), u64::from(entry.stored_len));
        let missing = |e: std::io::Error| range_error(&name, kind, &id, e);
        let open = |sealed: &[u8]| {
            blob::open(self.sealer(), &self.keys().id, kind, &entry, sealed)
                .map_err(|e| Error::damaged(format!("{} blob {id} in {name}", kind.name()), e))
        };
        if kind != BlobKind::Tree {
            // The box is read into a buffer of its own and opened there.
            let sealed = self.backend().get_range(&name, offset, len).map_err(missing)?;
            return blob::open_owned(self.sealer(), &self.keys().id, kind, &entry, sealed)
                .map_err(|e| Error::damaged(format!("{} blob {id} in {name}", kind.name()), e));
        }
        // Trees are read again by every backup (the parent) and may come from a local cache; a
        // kept copy that does not open is dropped and the range read from the repository.
        let kept = self.backend().get_metadata_range(&name, offset, len).map_err(missing)?;
        open(&kept).or_else(|_| {
            self.backend().forget_metadata_range(&name, offset, len);
            open(&self.backend().get_range(&name, offset, len).map_err(missing)?)
        })
    }

    /// The tree blob `id`, decoded.
    pub fn read_tree(&self, index: &Index, id: &Id) -> Result<Tree> {
        let plain = self.read_blob(index, id, BlobKind::Tree)?;
        Tree::decode(&plain).map_err(|e| Error::decode(format!("tree blob {id}"), e))
    }

    /// The status tree `id` (a tree blob), decoded.
    pub fn read_status_tree(&self, index: &Index, id: &Id) -> Result<StatusTree> {
        let plain = self.read_blob(index, id, BlobKind::Tree)?;
        StatusTree::decode(&plain).map_err(|e| Error::decode(format!("status tree {id}"), e))
    }

    /// The tree `id` joined with its status tree `status` where that reads and fits; a status
    /// tree that is missing or damaged leaves the tree's status unknown
    /// ([`Tree::status_known`]), which only costs a backup reading files again.
    pub fn read_tree_with_status(
        &self,
        index: &Index,
        id: &Id,
        status: Option<&Id>,
    ) -> Result<Tree> {
        let mut tree = self.read_tree(index, id)?;
        if let Some(status) = status.filter(|_| !tree.status_known()) {
            if let Ok(status) = self.read_status_tree(index, status) {
                status.apply(&mut tree);
            }
        }
        Ok(tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_range_read_is_a_truncated_pack_and_names_the_blob() {
        let id = Id([9; 32]);
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        let said = range_error("data/09/0909", BlobKind::Tree, &id, eof).to_string();
        assert!(said.contains("data/09/0909") && said.contains(&id.to_string()), "{said}");
        assert!(said.contains("damaged") && said.contains("truncated"), "{said}");
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        let said = range_error("data/09/0909", BlobKind::Data, &id, gone).to_string();
        assert!(said.ends_with("missing") && said.contains("data blob"), "{said}");
    }
}
