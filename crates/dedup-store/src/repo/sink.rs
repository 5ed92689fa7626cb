//! The writing side of a session: blobs in, deduplicated against the index, compressed and
//! sealed on the caller's thread (so callers on several threads work in parallel), spread over
//! several open packs per kind (repo/pack_slots.rs; written to the storage as they fill where
//! the backend can take it, else in memory); full packs are stored, then indexed, and index
//! files written every 64 packs and at the end, before any snapshot can refer to them.

use std::collections::HashSet;
use std::mem;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use super::open_pack::OpenPack;
use super::pack_slots::PackSlots;
use super::Repository;
use crate::blob::{self, BlobKind};
use crate::error::{Error, Result};
use crate::format::{IndexFile, IndexedPack, StatusTree, Tree, TreeStatus};
use crate::id::Id;
use crate::index::Index;
use crate::pack::{
    pack_path, read_trailer, PackLayout, PackWriter, StreamedPack, StreamedPackWriter,
};

/// Packs indexed per index file while a session runs.
const PACKS_PER_INDEX_FILE: usize = 64;
/// … or this many blobs (packs of tiny chunks), so that no index file is large to read.
const BLOBS_PER_INDEX_FILE: usize = 65_536;

/// Buffers of stored packs kept for the next packs built in memory: a new 16 MiB buffer per pack
/// would cost its page faults every time.
const SPARE_BUFFERS: usize = 1;

/// Open packs of data blobs a session spreads its blobs over, and of tree blobs (fewer: a
/// session writes far fewer tree bytes, and their order says less).
const DATA_SLOTS: usize = 4;
const TREE_SLOTS: usize = 2;
/// Open packs of data blobs where the backend takes objects whole, each then held in memory up
/// to a pack size: restic's two.
const DATA_SLOTS_IN_MEMORY: usize = 2;

/// A pack is built in memory until it holds this much (or its share of a pack size among its
/// kind's slots, if less), then written to the storage as it fills where the backend can take
/// it: the packs still below it at a session's end are merged into one, of at most a pack size.
const STREAM_FROM: usize = 1 << 20;

/// The open packs' temporaries are touched this often while blobs come, so that a prune never
/// takes a pack filling slowly (a backup of mostly known chunks) for a dead writer's leftover:
/// it removes temporaries untouched for an hour (docs/store-format.md §11).
const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(600);

/// What a session added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkStats {
    /// New blobs.
    pub blobs_added: u64,
    /// Their plaintext bytes.
    pub raw_added: u64,
    /// Bytes added to the repository (sealed boxes, pack headers and trailers).
    pub bytes_added: u64,
    /// Packs written.
    pub packs_written: u64,
    /// Packs of an interrupted session found unindexed and adopted.
    pub packs_adopted: u64,
}

/// A pack that filled as a blob was stored, not yet written ([`BlobSink::write_full_pack`]).
pub struct FullPack(OpenPack);

/// Stores blobs for one session.
pub struct BlobSink<'r> {
    repo: &'r Repository,
    dry_run: bool,
    index: RwLock<Index>,
    claimed: Mutex<HashSet<(Id, BlobKind)>>,
    open: [PackSlots; 2],
    /// Whether the backend has taken an object as it is written (until it says it cannot).
    streams: AtomicBool,
    unindexed: Mutex<Vec<IndexedPack>>,
    spare: Mutex<Vec<Vec<u8>>>,
    blobs_added: AtomicU64,
    raw_added: AtomicU64,
    bytes_added: AtomicU64,
    packs_written: AtomicU64,
    packs_adopted: AtomicU64,
    started: Instant,
    /// Seconds after `started` when the open packs were last kept alive.
    kept_alive: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn slot(kind: BlobKind) -> usize {
    usize::from(kind == BlobKind::Tree)
}

impl<'r> BlobSink<'r> {
    /// A session over `index`; with `dry_run` nothing is written but the counts are real.
    pub fn new(repo: &'r Repository, index: Index, dry_run: bool) -> Self {
        BlobSink {
            repo,
            dry_run,
            index: RwLock::new(index),
            claimed: Mutex::new(HashSet::new()),
            // A dry run holds its packs in memory, as a backend that takes objects whole does.
            open: [
                PackSlots::new(if dry_run { DATA_SLOTS_IN_MEMORY } else { DATA_SLOTS }),
                PackSlots::new(TREE_SLOTS),
            ],
            streams: AtomicBool::new(!dry_run),
            unindexed: Mutex::new(Vec::new()),
            spare: Mutex::new(Vec::new()),
            blobs_added: AtomicU64::new(0),
            raw_added: AtomicU64::new(0),
            bytes_added: AtomicU64::new(0),
            packs_written: AtomicU64::new(0),
            packs_adopted: AtomicU64::new(0),
            started: Instant::now(),
            kept_alive: AtomicU64::new(0),
        }
    }

    /// The repository.
    pub fn repo(&self) -> &Repository {
        self.repo
    }

    /// Reads the trailers of packs that no index file lists (left by an interrupted session)
    /// and takes their blobs into the index; this session's index files will list them.
    /// Packs in `left_out` (named by a deletion plan) are not adopted.
    pub fn adopt_unindexed_packs(&self, left_out: &HashSet<Id>) -> Result<u64> {
        let listing = self.repo.backend().list("data").map_err(|e| Error::io("data", e))?;
        let mut adopted = 0;
        for object in listing {
            let Some(id) = object.name.rsplit('/').next().and_then(Id::from_hex) else { continue };
            if object.name != pack_path(&id)
                || left_out.contains(&id)
                || self.read_index().has_pack(&id)
            {
                continue;
            }
            // A pack that does not read is garbage for prune, not a reason to stop a backup.
            let Ok(parsed) =
                read_trailer(self.repo.backend(), self.repo.sealer(), &object.name, object.size)
            else {
                continue;
            };
            self.write_index().add_pack(id, parsed.kind, &parsed.entries);
            lock(&self.unindexed).push(IndexedPack {
                id,
                kind: parsed.kind,
                blobs: parsed.entries,
            });
            adopted += 1;
        }
        self.packs_adopted.fetch_add(adopted, Ordering::Relaxed);
        Ok(adopted)
    }

    fn read_index(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_index(&self) -> std::sync::RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether blob `id` of `kind` is stored (or being stored by this session).
    pub fn contains(&self, id: &Id, kind: BlobKind) -> bool {
        self.keep_open_packs_alive();
        self.read_index().contains(id, kind) || lock(&self.claimed).contains(&(*id, kind))
    }

    /// Where blob `id` of `kind` is stored, by this session's index (`None`: not stored, or
    /// still in an open pack): for a reader of what the session wrote, such as a volume.
    pub fn locate(&self, id: &Id, kind: BlobKind) -> Option<crate::index::Location> {
        self.read_index().lookup(id, kind)
    }

    /// Touches the open packs' temporaries every [`KEEP_ALIVE_EVERY`]; called for every blob
    /// looked up or stored, known or new, so that it runs as long as the backup reads.
    fn keep_open_packs_alive(&self) {
        let now = self.started.elapsed().as_secs();
        let last = self.kept_alive.load(Ordering::Relaxed);
        if now < last + KEEP_ALIVE_EVERY.as_secs()
            || self
                .kept_alive
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        for open in &self.open {
            open.for_each(|pack| {
                if let OpenPack::Streamed(pack) = pack {
                    // A failed touch only risks what it guards against: the commit then fails.
                    let _ = pack.keep_alive();
                }
            });
        }
    }

    /// The tree blob `id`, read without holding the index during the read.
    pub fn read_tree(&self, id: &Id) -> Result<Tree> {
        let location = self.read_index().lookup(id, BlobKind::Tree).ok_or_else(|| {
            Error::Missing { object: format!("tree blob {id} (not in the index)") }
        })?;
        let plain = self.repo.read_blob_at(&location, BlobKind::Tree)?;
        crate::format::Tree::decode(&plain).map_err(|e| Error::decode(format!("tree blob {id}"), e))
    }

    /// The status tree `id`, read without holding the index during the read.
    pub fn read_status_tree(&self, id: &Id) -> Result<crate::format::StatusTree> {
        let location = self.read_index().lookup(id, BlobKind::Tree).ok_or_else(|| {
            Error::Missing { object: format!("status tree {id} (not in the index)") }
        })?;
        let plain = self.repo.read_blob_at(&location, BlobKind::Tree)?;
        crate::format::StatusTree::decode(&plain)
            .map_err(|e| Error::decode(format!("status tree {id}"), e))
    }

    /// The tree `id` joined with its status tree `status` where that reads and fits (else its
    /// status stays unknown: the backup then reads the files again, which is safe).
    pub fn read_tree_with_status(&self, id: &Id, status: Option<&Id>) -> Result<Tree> {
        let mut tree = self.read_tree(id)?;
        if let Some(status) = status.filter(|_| !tree.status_known()) {
            if let Ok(status) = self.read_status_tree(status) {
                status.apply(&mut tree);
            }
        }
        Ok(tree)
    }

    /// Stores a directory's tree as the repository's format wants it: a tree of version 1, or
    /// (format version 3) one of version 2 and its status tree. Returns the tree's id and its
    /// status tree's.
    pub fn store_tree(&self, mut tree: Tree) -> Result<(Id, Option<Id>)> {
        tree.sort();
        if !self.repo.config().status_trees() {
            tree.status = TreeStatus::Inline;
            return Ok((self.store(BlobKind::Tree, &tree.encode())?, None));
        }
        tree.status = TreeStatus::Joined;
        let status = StatusTree::of(&tree);
        let id = self.store(BlobKind::Tree, &tree.encode())?;
        Ok((id, Some(self.store(BlobKind::Tree, &status.encode())?)))
    }

    /// The packs among `among` that hold, by this session's index, a blob reachable from the
    /// tree `root` or the status tree `status`.
    pub fn packs_reached(
        &self,
        root: Id,
        status: Option<Id>,
        among: &HashSet<Id>,
    ) -> Result<HashSet<Id>> {
        let mut found = HashSet::new();
        let mut seen = HashSet::new();
        let mut pending = vec![root];
        let mut note = |id: &Id, kind: BlobKind| {
            if let Some(location) = self.read_index().lookup(id, kind) {
                if among.contains(&location.pack) {
                    found.insert(location.pack);
                }
            }
        };
        while let Some(tree_id) = pending.pop() {
            if !seen.insert(tree_id) {
                continue;
            }
            note(&tree_id, BlobKind::Tree);
            for node in self.read_tree(&tree_id)?.nodes {
                match node.content {
                    crate::format::Content::Subtree(id) => pending.push(id),
                    crate::format::Content::Chunks(chunks) => {
                        chunks.iter().for_each(|c| note(c, BlobKind::Data))
                    }
                    _ => {}
                }
            }
        }
        let mut pending: Vec<Id> = status.into_iter().collect();
        while let Some(status_id) = pending.pop() {
            if !seen.insert(status_id) {
                continue;
            }
            note(&status_id, BlobKind::Tree);
            pending.extend(self.read_status_tree(&status_id)?.subtrees());
        }
        Ok(found)
    }

    /// Stores `plaintext` as a blob of `kind` unless the repository has it; returns its id.
    pub fn store(&self, kind: BlobKind, plaintext: &[u8]) -> Result<Id> {
        let id = blob::blob_id(&self.repo.keys().id, plaintext);
        self.store_with_id(id, kind, plaintext)?;
        Ok(id)
    }

    /// Stores `plaintext`, whose id is `id`, unless the repository has it; true if it was new.
    pub fn store_with_id(&self, id: Id, kind: BlobKind, plaintext: &[u8]) -> Result<bool> {
        let (new, full) = self.store_leaving_full_pack(id, kind, plaintext)?;
        if let Some(FullPack(pack)) = full {
            self.write_pack(pack)?;
        }
        Ok(new)
    }

    /// As [`BlobSink::store_with_id`], but a pack the blob filled is given back to be written
    /// by [`BlobSink::write_full_pack`] (on another thread, say) rather than written here. Its
    /// blobs stay claimed, and so stored for [`BlobSink::contains`] and not yet for
    /// [`BlobSink::locate`], until it is written and indexed: whoever takes the pack must write
    /// it (or the session's flush must wait for that) before a snapshot names its blobs.
    pub fn store_leaving_full_pack(
        &self,
        id: Id,
        kind: BlobKind,
        plaintext: &[u8],
    ) -> Result<(bool, Option<FullPack>)> {
        self.keep_open_packs_alive();
        if self.read_index().contains(&id, kind) || !lock(&self.claimed).insert((id, kind)) {
            return Ok((false, None));
        }
        // A pack holding the blob may have been indexed, and its claims released, between the
        // look at the index and the claim: look again now that the claim is ours (a writer
        // indexes a pack before it releases its claims, so this look cannot miss it).
        if self.read_index().contains(&id, kind) {
            lock(&self.claimed).remove(&(id, kind));
            return Ok((false, None));
        }
        let sealed =
            blob::seal(self.repo.sealer(), id, kind, plaintext, self.repo.config().compression);
        self.blobs_added.fetch_add(1, Ordering::Relaxed);
        self.raw_added.fetch_add(plaintext.len() as u64, Ordering::Relaxed);
        let done = self.open[slot(kind)].add(
            &sealed,
            self.repo.config().pack_size as usize,
            || self.new_pack(kind),
            |pack| self.stream_if_large(pack, kind),
        );
        let done = done.inspect_err(|_| self.forget(kind, self.open[slot(kind)].take_lost()))?;
        Ok((true, done.map(FullPack)))
    }

    /// Writes and indexes a pack [`BlobSink::store_leaving_full_pack`] gave back; on an error
    /// its blobs are forgotten, to be stored again when they come again.
    pub fn write_full_pack(&self, pack: FullPack) -> Result<()> {
        self.write_pack(pack.0)
    }

    /// An empty pack of `kind`, in memory (in a spare buffer when there is one), in the
    /// repository's layout.
    fn new_pack(&self, kind: BlobKind) -> OpenPack {
        let buf = lock(&self.spare).pop().unwrap_or_default();
        let layout = PackLayout::for_config(self.repo.config());
        OpenPack::Memory(PackWriter::with_layout(kind, self.repo.encrypted(), layout, buf))
    }

    /// The length from which a pack of `kind` is written to the storage as it fills: below it, a
    /// pack left at a session's end is merged with the others as small.
    fn stream_from(&self, kind: BlobKind) -> usize {
        STREAM_FROM.min(self.repo.config().pack_size as usize / self.open[slot(kind)].len())
    }

    /// Moves `pack` of `kind` to the storage, to be written there as it fills, once it holds
    /// [`STREAM_FROM`] bytes or its slot's share of a pack size, where the backend can take it.
    fn stream_if_large(&self, pack: &mut OpenPack, kind: BlobKind) -> Result<()> {
        if pack.len() < self.stream_from(kind) || !self.streams.load(Ordering::Relaxed) {
            return Ok(());
        }
        let OpenPack::Memory(memory) = pack else { return Ok(()) };
        let Some(object) =
            self.repo.backend().begin_object("data").map_err(|e| Error::io("data", e))?
        else {
            self.streams.store(false, Ordering::Relaxed);
            self.open[slot(BlobKind::Data)].use_at_most(DATA_SLOTS_IN_MEMORY);
            return Ok(());
        };
        let kind = memory.kind();
        let memory = mem::replace(memory, PackWriter::new(kind, self.repo.encrypted()));
        let ids: Vec<Id> = memory.blobs().map(|(entry, _)| entry.id).collect();
        let streamed = StreamedPackWriter::from_memory(memory, object).map_err(|e| {
            // The blobs went with the pack that could not be written, and the slot now holds an
            // empty one: their claims are released here, or the next store of them would find
            // them claimed and write nothing (a commit naming blobs that no pack holds).
            self.forget(kind, ids);
            Error::io("data", e)
        })?;
        *pack = OpenPack::Streamed(Box::new(streamed));
        Ok(())
    }

    /// Closes and stores `pack`, then indexes it.
    fn write_pack(&self, pack: OpenPack) -> Result<()> {
        let (kind, ids) = (pack.kind(), pack.blob_ids());
        let stored = match pack {
            OpenPack::Memory(pack) => self.store_memory_pack(pack),
            OpenPack::Streamed(pack) => self.store_streamed_pack(pack),
        };
        let stored = stored.inspect_err(|_| self.forget(kind, ids))?;
        self.packs_written.fetch_add(1, Ordering::Relaxed);
        self.write_index().add_pack(stored.id, stored.kind, &stored.blobs);
        {
            let mut claimed = lock(&self.claimed);
            for entry in &stored.blobs {
                claimed.remove(&(entry.id, stored.kind));
            }
        }
        let batch = {
            let mut unindexed = lock(&self.unindexed);
            unindexed.push(stored);
            let blobs: usize = unindexed.iter().map(|p| p.blobs.len()).sum();
            (unindexed.len() >= PACKS_PER_INDEX_FILE || blobs >= BLOBS_PER_INDEX_FILE)
                .then(|| mem::take(&mut *unindexed))
        };
        match batch {
            Some(packs) => self.write_index_file(packs),
            None => Ok(()),
        }
    }

    /// Forgets that this session stores the blobs `ids` of `kind`, whose pack could not be
    /// written: they are stored again when they come again, so that a later snapshot never
    /// names a blob that never reached the storage (what the index lists stays known).
    fn forget(&self, kind: BlobKind, ids: Vec<Id>) {
        let mut claimed = lock(&self.claimed);
        for id in ids {
            claimed.remove(&(id, kind));
        }
    }

    /// Gives up every open pack (what it wrote to the storage removed) and forgets its blobs:
    /// for a session that holds its blobs elsewhere until their pack is written (a volume), so
    /// that after a write error the space the packs took is free again and only the blobs still
    /// wanted are stored again.
    pub fn abandon_open_packs(&self) {
        for kind in [BlobKind::Data, BlobKind::Tree] {
            for pack in self.open[slot(kind)].take_all(0) {
                self.forget(kind, pack.blob_ids());
            }
        }
    }

    fn write_index_file(&self, packs: Vec<IndexedPack>) -> Result<()> {
        if packs.is_empty() || self.dry_run {
            return Ok(());
        }
        let file = IndexFile { supersedes: Vec::new(), packs };
        if let Err(err) = self.repo.write_index_file(&file) {
            // Still to be indexed: a later flush, or the session's end on an error, tries again.
            lock(&self.unindexed).extend(file.packs);
            return Err(err);
        }
        Ok(())
    }

    /// Writes an index file for the packs stored (or adopted) and not yet indexed, leaving the
    /// open packs open: what a session does before it withdraws its marker when it stops on an
    /// error, and after adopting packs.
    pub fn index_stored(&self) -> Result<()> {
        let packs = mem::take(&mut *lock(&self.unindexed));
        self.write_index_file(packs)
    }

    fn store_memory_pack(&self, pack: PackWriter) -> Result<IndexedPack> {
        let finished = pack.finish(self.repo.sealer());
        let name = pack_path(&finished.id);
        if !self.dry_run {
            self.repo.backend().put(&name, &finished.bytes).map_err(|e| Error::io(&name, e))?;
        }
        self.bytes_added.fetch_add(finished.bytes.len() as u64, Ordering::Relaxed);
        let mut spare = lock(&self.spare);
        if spare.len() < SPARE_BUFFERS {
            spare.push(finished.bytes);
        }
        Ok(IndexedPack { id: finished.id, kind: finished.kind, blobs: finished.entries })
    }

    fn store_streamed_pack(&self, pack: Box<StreamedPackWriter>) -> Result<IndexedPack> {
        let StreamedPack { id, kind, len, entries, object } =
            pack.finish(self.repo.sealer()).map_err(|e| Error::io("data", e))?;
        let name = pack_path(&id);
        object.commit(&name).map_err(|e| Error::io(&name, e))?;
        self.bytes_added.fetch_add(len, Ordering::Relaxed);
        Ok(IndexedPack { id, kind, blobs: entries })
    }

    /// Stores the open packs and indexes everything written: after this, a snapshot may refer to
    /// every blob this session stored. The sink stays usable.
    pub fn flush(&self) -> Result<()> {
        for kind in [BlobKind::Data, BlobKind::Tree] {
            self.write_open_packs(kind)?;
        }
        self.index_stored()
    }

    /// Spreads new data blobs over at most `count` open packs: a session that holds its blobs
    /// until their pack is written (a volume) fills fewer packs sooner, so that they are written
    /// as they fill rather than all at once, half full, when what it holds reaches its bound.
    pub fn use_data_slots(&self, count: usize) {
        self.open[slot(BlobKind::Data)].use_at_most(count);
    }

    /// Stores the open packs of `kind` and indexes them in memory (their index file is written
    /// with the next batch or flush): for a session that holds its blobs until their pack is
    /// written (a volume), so that what it holds stays bounded.
    pub fn write_open_packs(&self, kind: BlobKind) -> Result<()> {
        let mut packs = self.open[slot(kind)].take_all(self.stream_from(kind)).into_iter();
        while let Some(pack) = packs.next() {
            if let Err(err) = self.write_pack(pack) {
                // The packs taken and not yet written are given up with it.
                packs.for_each(|rest| self.forget(kind, rest.blob_ids()));
                return Err(err);
            }
        }
        Ok(())
    }

    /// Flushes and returns the index (with this session's blobs) and the counts.
    pub fn finish(self) -> Result<(Index, SinkStats)> {
        self.flush()?;
        let stats = self.stats();
        Ok((self.index.into_inner().unwrap_or_else(PoisonError::into_inner), stats))
    }

    /// The counts so far.
    pub fn stats(&self) -> SinkStats {
        SinkStats {
            blobs_added: self.blobs_added.load(Ordering::Relaxed),
            raw_added: self.raw_added.load(Ordering::Relaxed),
            bytes_added: self.bytes_added.load(Ordering::Relaxed),
            packs_written: self.packs_written.load(Ordering::Relaxed),
            packs_adopted: self.packs_adopted.load(Ordering::Relaxed),
        }
    }
}
