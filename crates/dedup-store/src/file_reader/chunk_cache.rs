//! A cache of opened data chunks (read, decrypted, decompressed, verified) shared by every file a
//! reader opens, bounded in bytes, forgetting the chunk least recently used.
//!
//! A chunk is fetched once however many readers want it at the same moment: the first one reads
//! it, the others wait on its slot. A failed fetch is not kept: the next read tries again (a
//! network error may pass), and a reader that waited on it fetches for itself, so that each
//! caller reports an error of its own. The kernel's page cache or the caller keeps what was read
//! for long; this cache bridges reads smaller than a chunk and holds what read-ahead fetched.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::blob::BlobKind;
use crate::error::Result;
use crate::id::Id;
use crate::index::Location;
use crate::repo::Repository;

/// A chunk being fetched or fetched; `None` after a failed fetch.
type Slot = OnceLock<Option<Arc<Vec<u8>>>>;

#[derive(Default)]
struct Slots {
    /// Each chunk's slot and when it was last asked for.
    map: HashMap<Id, (Arc<Slot>, u64)>,
    clock: u64,
}

/// The opened chunks of one repository.
pub struct ChunkCache {
    repo: Arc<Repository>,
    slots: Mutex<Slots>,
    capacity: usize,
}

impl ChunkCache {
    /// A cache of at most `capacity` bytes of chunks of `repo`.
    pub fn new(repo: Arc<Repository>, capacity: usize) -> ChunkCache {
        ChunkCache { repo, slots: Mutex::new(Slots::default()), capacity }
    }

    /// The repository the chunks come from.
    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the chunk is cached or being fetched.
    pub fn holds(&self, id: &Id) -> bool {
        self.lock().map.contains_key(id)
    }

    /// The plaintext of the data chunk at `location`, from the cache or read now.
    pub fn get(&self, location: &Location) -> Result<Arc<Vec<u8>>> {
        let id = location.entry.id;
        let slot = {
            let mut slots = self.lock();
            slots.clock += 1;
            let now = slots.clock;
            let (slot, used) = slots.map.entry(id).or_insert_with(|| (Arc::default(), now));
            *used = now;
            Arc::clone(slot)
        };
        let mut failure = None;
        let mut fetched = false;
        let got = slot
            .get_or_init(|| {
                fetched = true;
                match self.repo.read_blob_at(location, BlobKind::Data) {
                    Ok(bytes) => Some(Arc::new(bytes)),
                    Err(err) => {
                        failure = Some(err);
                        None
                    }
                }
            })
            .clone();
        if fetched {
            let mut slots = self.lock();
            let ours = slots.map.get(&id).is_some_and(|(kept, _)| Arc::ptr_eq(kept, &slot));
            if got.is_none() && ours {
                slots.map.remove(&id);
            }
            self.evict(&mut slots);
        }
        match (got, failure) {
            (Some(bytes), _) => Ok(bytes),
            (None, Some(err)) => Err(err),
            // Another reader's fetch failed: this one's error is its own.
            (None, None) => self.repo.read_blob_at(location, BlobKind::Data).map(Arc::new),
        }
    }

    /// Forgets the least recently used chunks until the cache is within its capacity; chunks
    /// still being fetched stay.
    fn evict(&self, slots: &mut Slots) {
        let mut filled: Vec<(u64, Id, usize)> = slots
            .map
            .iter()
            .filter_map(|(id, (slot, used))| match slot.get() {
                Some(Some(bytes)) => Some((*used, *id, bytes.len())),
                _ => None,
            })
            .collect();
        let mut total: usize = filled.iter().map(|f| f.2).sum();
        if total <= self.capacity {
            return;
        }
        filled.sort_unstable_by_key(|f| f.0);
        for (_, id, len) in filled {
            if total <= self.capacity {
                break;
            }
            slots.map.remove(&id);
            total -= len;
        }
    }
}
