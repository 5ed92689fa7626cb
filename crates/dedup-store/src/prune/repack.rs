//! Repacking: the reachable blobs of the packs to repack copied into new packs, each verified on
//! the way — by its box's tag alone in an encrypted repository (`blob::verify_stored`: the tag
//! binds id, kind, compression and length, and the box is copied unchanged), opened and its id
//! checked in an unencrypted one — straight from the bytes read. Only the pack's trailer and the
//! byte ranges of the blobs copied are read, not the whole pack: the blobs that stay are about
//! half of a pack repacked, and each one's box proves its bytes, so hashing the whole pack
//! against its name would prove nothing more about them. Where a range costs a request
//! (object storage), neighbouring blobs share one, gaps included; where it costs next to nothing
//! (a local file, `Backend::open_ranges`), each box is read alone, straight onto the end of its
//! new pack, and checked there: no gap bytes, no buffer to zero or copy out of. Packs are
//! shared out among a few workers, each with packs of its own being filled, so that reading,
//! verifying and writing overlap; a blob held by two packs to repack is copied once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;

use super::plan::{Fate, Plan};
use crate::blob::{self, BlobKind};
use crate::error::{Error, Result};
use crate::format::{BlobEntry, IndexedPack};
use crate::id::Id;
use crate::pack::{pack_path, read_trailer, PackLayout, PackWriter};
use crate::repo::{range_error, Repository};

/// Workers at most: enough to keep the cores busy verifying while others wait on storage.
const MOST_WORKERS: usize = 4;
/// Blobs to copy that lie at most this far apart are read with one range request, the bytes
/// between them read and dropped: a request costs about as much as reading this much more.
const JOIN_GAP: u64 = 256 << 10;
/// A range request is not extended beyond this length (a single blob may be longer), so that its
/// buffer stays below the allocator's threshold for mappings of their own and is reused.
const MOST_PER_REQUEST: u64 = 2 << 20;

/// Copies the reachable blobs of the packs to repack into new packs; returns the new packs'
/// index entries. The first error stops every worker and is returned.
pub fn repack(repo: &Repository, plan: &Plan) -> Result<Vec<IndexedPack>> {
    let packs = plan.packs_of(Fate::Repack);
    let cores = thread::available_parallelism().map_or(2, usize::from);
    let workers = cores.clamp(1, MOST_WORKERS).min(packs.len());
    let shared = Shared {
        repo,
        plan,
        next: Mutex::new(packs.into_iter()),
        copied: Mutex::new(HashSet::new()),
        stop: AtomicBool::new(false),
    };
    if workers <= 1 {
        return shared.work();
    }
    let results: Vec<Result<Vec<IndexedPack>>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                thread::Builder::new()
                    .name("dedup-repack".into())
                    .spawn_scoped(scope, || shared.work())
                    .expect("a thread can be started")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut written = Vec::new();
    for result in results {
        written.extend(result?);
    }
    Ok(written)
}

struct Shared<'a> {
    repo: &'a Repository,
    plan: &'a Plan,
    next: Mutex<std::vec::IntoIter<Id>>,
    copied: Mutex<HashSet<(Id, BlobKind)>>,
    stop: AtomicBool,
}

impl Shared<'_> {
    /// One worker: takes packs until none is left, filling packs of its own.
    fn work(&self) -> Result<Vec<IndexedPack>> {
        let result = self.copy_packs();
        if result.is_err() {
            self.stop.store(true, Ordering::Relaxed);
        }
        result
    }

    fn copy_packs(&self) -> Result<Vec<IndexedPack>> {
        let mut writers = [self.new_writer(BlobKind::Data), self.new_writer(BlobKind::Tree)];
        let mut written = Vec::new();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(written);
            }
            let next = self.next.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some(id) = next else { break };
            self.copy_pack(id, &mut writers, &mut written)?;
        }
        for writer in writers {
            if !writer.is_empty() {
                written.push(store_pack(self.repo, writer)?.0);
            }
        }
        Ok(written)
    }

    /// An empty pack of `kind` whose buffer holds a full pack without growing.
    fn new_writer(&self, kind: BlobKind) -> PackWriter {
        let room = self.repo.config().pack_size as usize + MOST_PER_REQUEST as usize;
        let layout = PackLayout::for_config(self.repo.config());
        PackWriter::with_layout(kind, self.repo.encrypted(), layout, Vec::with_capacity(room))
    }

    /// Copies the blobs of pack `id` that are used there and not yet copied.
    fn copy_pack(
        &self,
        id: Id,
        writers: &mut [PackWriter; 2],
        written: &mut Vec<IndexedPack>,
    ) -> Result<()> {
        let repo = self.repo;
        let name = pack_path(&id);
        let size = *self.plan.repack_sizes.get(&id).expect("a pack to repack has a size");
        let parsed = read_trailer(repo.backend(), repo.sealer(), &name, size)?;
        let kind = parsed.kind;
        let slot = usize::from(kind == BlobKind::Tree);
        let wanted: Vec<BlobEntry> = parsed
            .entries
            .into_iter()
            .filter(|entry| self.plan.used_here(&entry.id, kind, &id) && self.claim(entry.id, kind))
            .collect();
        if let Some(mut file) =
            repo.backend().open_ranges(&name).map_err(|e| Error::io(&name, e))?
        {
            // Storage without a cost per request: each box read straight into its new pack.
            for entry in &wanted {
                let (offset, len) = (u64::from(entry.offset), u64::from(entry.stored_len));
                let sealed = writers[slot]
                    .add_stored_read(entry, |buf| file.read_range_into(offset, len, buf))
                    .map_err(|e| range_error(&name, kind, &entry.id, e))?;
                verify(repo, kind, entry, sealed, &name)?;
                self.store_if_full(&mut writers[slot], written)?;
            }
            return Ok(());
        }
        for run in requests(&wanted) {
            let start = u64::from(run[0].offset);
            let last = run[run.len() - 1];
            let end = u64::from(last.offset) + u64::from(last.stored_len);
            let bytes = repo
                .backend()
                .get_range(&name, start, end - start)
                .map_err(|e| range_error(&name, kind, &run[0].id, e))?;
            for entry in run {
                let at = (u64::from(entry.offset) - start) as usize;
                let sealed = &bytes[at..at + entry.stored_len as usize];
                verify(repo, kind, entry, sealed, &name)?;
                writers[slot].add_stored(entry, sealed);
                self.store_if_full(&mut writers[slot], written)?;
            }
        }
        Ok(())
    }

    /// Stores `writer`'s pack once it is full, and starts the next in its buffer.
    fn store_if_full(&self, writer: &mut PackWriter, written: &mut Vec<IndexedPack>) -> Result<()> {
        let repo = self.repo;
        if writer.len() < repo.config().pack_size as usize {
            return Ok(());
        }
        let kind = writer.kind();
        let full = std::mem::replace(writer, PackWriter::new(kind, repo.encrypted()));
        let (indexed, buffer) = store_pack(repo, full)?;
        written.push(indexed);
        // The stored pack's buffer, already faulted in, takes the next pack.
        let layout = PackLayout::for_config(repo.config());
        *writer = PackWriter::with_layout(kind, repo.encrypted(), layout, buffer);
        Ok(())
    }

    /// True when this worker is the first to copy the blob.
    fn claim(&self, id: Id, kind: BlobKind) -> bool {
        self.copied.lock().unwrap_or_else(PoisonError::into_inner).insert((id, kind))
    }
}

/// Checks the box of the blob `entry` of pack `name` before it is copied.
fn verify(
    repo: &Repository,
    kind: BlobKind,
    entry: &BlobEntry,
    sealed: &[u8],
    name: &str,
) -> Result<()> {
    blob::verify_stored(repo.sealer(), &repo.keys().id, kind, entry, sealed)
        .map_err(|e| Error::damaged(format!("{} blob {} in {name}", kind.name(), entry.id), e))
}

/// The blobs `wanted` (in pack order) grouped into range requests: neighbours at most JOIN_GAP
/// apart, up to MOST_PER_REQUEST bytes a request.
fn requests(wanted: &[BlobEntry]) -> Vec<&[BlobEntry]> {
    let mut runs = Vec::new();
    let mut first = 0;
    for i in 1..=wanted.len() {
        let joins = wanted.get(i).is_some_and(|next| {
            let start = u64::from(wanted[first].offset);
            let prev = &wanted[i - 1];
            let gap =
                u64::from(next.offset) - (u64::from(prev.offset) + u64::from(prev.stored_len));
            let end = u64::from(next.offset) + u64::from(next.stored_len);
            gap <= JOIN_GAP && end - start <= MOST_PER_REQUEST
        });
        if !joins {
            runs.push(&wanted[first..i]);
            first = i;
        }
    }
    runs
}

/// Closes and stores a new pack; returns its index entry and its buffer, for the next pack.
pub fn store_pack(repo: &Repository, writer: PackWriter) -> Result<(IndexedPack, Vec<u8>)> {
    let finished = writer.finish(repo.sealer());
    let name = pack_path(&finished.id);
    repo.backend().put(&name, &finished.bytes).map_err(|e| Error::io(&name, e))?;
    let indexed = IndexedPack { id: finished.id, kind: finished.kind, blobs: finished.entries };
    Ok((indexed, finished.bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Compression;

    fn entry(offset: u32, stored_len: u32) -> BlobEntry {
        BlobEntry {
            id: Id([offset as u8; 32]),
            compression: Compression::None,
            offset,
            stored_len,
            raw_len: stored_len,
        }
    }

    #[test]
    fn neighbours_share_a_request_within_the_gap_and_the_length() {
        let gap = JOIN_GAP as u32;
        let most = MOST_PER_REQUEST as u32;
        let wanted = [
            entry(8, 100),
            entry(108, 100),            // adjacent: joined
            entry(208 + gap, 100),      // exactly JOIN_GAP after: joined
            entry(309 + 2 * gap, 100),  // one byte more: a new request
            entry(409 + 2 * gap, most), // would make the request too long: alone
        ];
        let runs: Vec<usize> = requests(&wanted).iter().map(|run| run.len()).collect();
        assert_eq!(runs, [3, 1, 1]);
        assert!(requests(&[]).is_empty());
    }
}
