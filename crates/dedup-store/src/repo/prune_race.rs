//! What a writing session (a backup, a writable volume's commit) does just before it writes a
//! snapshot, so that a prune that planned while it ran takes nothing the snapshot needs (§12).

use std::collections::HashSet;

use super::BlobSink;
use crate::error::{Error, Result};
use crate::format::{IndexFile, IndexedPack};
use crate::id::Id;
use crate::pack::{pack_path, read_trailer};

impl BlobSink<'_> {
    /// A prune that planned while this session ran waits for it (§12) but has already written
    /// index files without the packs it plans to delete, some of which this session may have
    /// deduplicated against. Those the snapshot rooted at `tree` reaches are indexed again, from
    /// their trailers (and those of its status trees: a later backup needs them to skip
    /// unchanged files), before the snapshot is written, so that it restores at once; the plan,
    /// when carried out, sees the snapshot and keeps them. `planned_at_start` is what was
    /// planned when the session began (its index was loaded without those). A pack already
    /// deleted (the plan did not wait: this session was judged stale) fails the commit rather
    /// than write a snapshot with holes.
    pub fn keep_indexed_what_a_prune_planned_since(
        &self,
        planned_at_start: &HashSet<Id>,
        tree: Id,
        status_tree: Option<Id>,
    ) -> Result<()> {
        let repo = self.repo();
        let planned_now = repo.planned_deletions()?;
        let new: HashSet<Id> = planned_now.difference(planned_at_start).copied().collect();
        if new.is_empty() {
            return Ok(());
        }
        let mut packs = Vec::new();
        for pack in self.packs_reached(tree, status_tree, &new)? {
            let name = pack_path(&pack);
            let shard = &name[..name.rfind('/').expect("pack paths have a folder")];
            let listing = repo.backend().list(shard).map_err(|e| Error::io(shard, e))?;
            let Some(size) = listing.iter().find(|o| o.name == name).map(|o| o.size) else {
                return Err(Error::Missing {
                    object: format!(
                        "{name}: a prune deleted data this session relied on (it ran past the \
                         hour after which a silent session is presumed dead); write again"
                    ),
                });
            };
            let parsed = read_trailer(repo.backend(), repo.sealer(), &name, size)?;
            packs.push(IndexedPack { id: pack, kind: parsed.kind, blobs: parsed.entries });
        }
        if !packs.is_empty() {
            repo.write_index_file(&IndexFile { supersedes: Vec::new(), packs })?;
        }
        Ok(())
    }
}
