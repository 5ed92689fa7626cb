//! Repacking: the reachable blobs of the packs to repack copied into new packs, each verified
//! (opened and its id checked) on the way. Packs are shared out among a few workers, each with
//! packs of its own being filled, so that reading, verifying and writing overlap; a blob held by
//! two packs to repack is copied once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;

use super::plan::{Fate, Plan};
use crate::blob::{self, BlobKind, SealedBlob};
use crate::error::{Error, Result};
use crate::format::IndexedPack;
use crate::id::Id;
use crate::pack::{pack_path, parse_pack, PackWriter};
use crate::repo::Repository;

/// Workers at most: enough to keep the cores busy verifying while others wait on storage.
const MOST_WORKERS: usize = 4;

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
        let encrypted = self.repo.encrypted();
        let mut writers = [
            PackWriter::new(BlobKind::Data, encrypted),
            PackWriter::new(BlobKind::Tree, encrypted),
        ];
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
                written.push(store_pack(self.repo, writer)?);
            }
        }
        Ok(written)
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
        let bytes = repo.read_named(&name, &id)?;
        let parsed = parse_pack(repo.sealer(), &bytes).map_err(|e| Error::damaged(&name, e))?;
        let slot = usize::from(parsed.kind == BlobKind::Tree);
        let pack_size = repo.config().pack_size as usize;
        for entry in parsed.entries {
            if !self.plan.used_here(&entry.id, parsed.kind, &id)
                || !self.claim(entry.id, parsed.kind)
            {
                continue;
            }
            let sealed =
                bytes[entry.offset as usize..(entry.offset + entry.stored_len) as usize].to_vec();
            blob::open(repo.sealer(), &repo.keys().id, parsed.kind, &entry, &sealed).map_err(
                |e| {
                    Error::damaged(format!("{} blob {} in {name}", parsed.kind.name(), entry.id), e)
                },
            )?;
            writers[slot].add(&SealedBlob {
                id: entry.id,
                kind: parsed.kind,
                compression: entry.compression,
                raw_len: entry.raw_len,
                sealed,
            });
            if writers[slot].len() >= pack_size {
                let fresh = PackWriter::new(parsed.kind, repo.encrypted());
                let full = std::mem::replace(&mut writers[slot], fresh);
                written.push(store_pack(repo, full)?);
            }
        }
        Ok(())
    }

    /// True when this worker is the first to copy the blob.
    fn claim(&self, id: Id, kind: BlobKind) -> bool {
        self.copied.lock().unwrap_or_else(PoisonError::into_inner).insert((id, kind))
    }
}

/// Closes and stores a new pack; returns its index entry.
pub fn store_pack(repo: &Repository, writer: PackWriter) -> Result<IndexedPack> {
    let finished = writer.finish(repo.sealer());
    let name = pack_path(&finished.id);
    repo.backend().put(&name, &finished.bytes).map_err(|e| Error::io(&name, e))?;
    Ok(IndexedPack { id: finished.id, kind: finished.kind, blobs: finished.entries })
}
