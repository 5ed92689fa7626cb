//! A session's open packs of one kind (docs/store-format.md §7): blobs go to one of several open
//! packs chosen by their id, a keyed hash the storage cannot compute, so that the contents of a
//! pack do not follow the order of files (restic 0.18 spreads blobs over two); a pack that
//! reaches the pack size stays open while small blobs fill the room its padding would take; and
//! at the end the packs still in memory, the small ones, are merged into one, so that a session
//! adding one small file writes one pack whose size shows only its bucket.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::open_pack::OpenPack;
use crate::blob::SealedBlob;
use crate::error::{Error, Result};

/// A full pack keeps taking blobs into its padding while one of this many sealed bytes would
/// still fit there.
const FILL_WHILE_ROOM_FOR: usize = 1024;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The open packs of one kind.
pub(super) struct PackSlots {
    slots: Vec<Mutex<Option<OpenPack>>>,
    /// A full pack whose padding small blobs may still fill.
    filling: Mutex<Option<OpenPack>>,
}

impl PackSlots {
    /// `count` slots, none open.
    pub(super) fn new(count: usize) -> Self {
        PackSlots {
            slots: (0..count.max(1)).map(|_| Mutex::new(None)).collect(),
            filling: Mutex::new(None),
        }
    }

    /// Adds `blob` to the filling pack if it fits its padding, else to the slot its id picks
    /// (opened with `open`, and passed to `grow` after the blob is in, which may move it to the
    /// storage); returns the pack that is done, to be stored.
    pub(super) fn add(
        &self,
        blob: &SealedBlob,
        pack_size: usize,
        open: impl FnOnce() -> OpenPack,
        grow: impl FnOnce(&mut OpenPack) -> Result<()>,
    ) -> Result<Option<OpenPack>> {
        let len = blob.sealed.len();
        {
            let mut filling = lock(&self.filling);
            if let Some(pack) = filling.as_mut().filter(|pack| pack.fits_in_padding(len)) {
                if let Err(err) = pack.add(blob) {
                    // The pack is broken: given up, its temporary removed.
                    *filling = None;
                    return Err(Error::io("data", err));
                }
                if pack.fits_in_padding(FILL_WHILE_ROOM_FOR) {
                    return Ok(None);
                }
                return Ok(filling.take());
            }
        }
        let full = {
            let mut slot = lock(&self.slots[self.slot_of(blob)]);
            let pack = match &mut *slot {
                Some(pack) => pack,
                None => slot.insert(open()),
            };
            if let Err(err) = pack.add(blob) {
                *slot = None;
                return Err(Error::io("data", err));
            }
            if let Err(err) = grow(pack) {
                *slot = None;
                return Err(err);
            }
            if pack.len() < pack_size {
                return Ok(None);
            }
            slot.take().expect("the slot's pack")
        };
        if full.fits_in_padding(FILL_WHILE_ROOM_FOR) {
            // It fills while the next pack of its slot does; the one filling before is done.
            return Ok(lock(&self.filling).replace(full));
        }
        Ok(Some(full))
    }

    /// How many slots there are.
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slot of `blob`: its id's first byte, uniform and unknown to the storage.
    fn slot_of(&self, blob: &SealedBlob) -> usize {
        usize::from(blob.id.0[0]) % self.slots.len()
    }

    /// Calls `f` on every open pack.
    pub(super) fn for_each(&self, mut f: impl FnMut(&OpenPack)) {
        for slot in self.slots.iter().chain([&self.filling]) {
            if let Some(pack) = &*lock(slot) {
                f(pack);
            }
        }
    }

    /// Takes every open pack, the ones still in memory merged into one.
    pub(super) fn take_all(&self) -> Vec<OpenPack> {
        let mut taken = Vec::new();
        let mut merged: Option<OpenPack> = None;
        for slot in self.slots.iter().chain([&self.filling]) {
            match (lock(slot).take(), &mut merged) {
                (None, _) => {}
                (Some(OpenPack::Memory(pack)), Some(OpenPack::Memory(into))) => {
                    for (entry, sealed) in pack.blobs() {
                        into.add_stored(entry, sealed);
                    }
                }
                (Some(pack @ OpenPack::Memory(_)), None) => merged = Some(pack),
                (Some(pack), _) => taken.push(pack),
            }
        }
        taken.extend(merged);
        taken
    }
}
