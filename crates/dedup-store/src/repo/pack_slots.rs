//! A session's open packs of one kind (docs/store-format.md §7): blobs go to one of several open
//! packs chosen by their id, a keyed hash the storage cannot compute, so that the contents of a
//! pack do not follow the order of files (restic 0.18 spreads blobs over two); a pack that
//! reaches the pack size stays open while small blobs fill the room its padding would take; and
//! at the end the packs still in memory, the small ones, are merged into one, so that a session
//! adding one small file writes one pack whose size shows only its bucket.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::open_pack::OpenPack;
use crate::blob::SealedBlob;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::pack::PackWriter;

/// A full pack keeps taking blobs into its padding while one of this many sealed bytes would
/// still fit there.
const FILL_WHILE_ROOM_FOR: usize = 1024;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The open packs of one kind.
pub(super) struct PackSlots {
    slots: Vec<Mutex<Option<OpenPack>>>,
    /// The slots new blobs go to: the first this many.
    in_use: AtomicUsize,
    /// A full pack whose padding small blobs may still fill.
    filling: Mutex<Option<OpenPack>>,
    /// The blobs of packs given up after a write error, for the session to forget that it
    /// stores them (they are stored again when they come again).
    lost: Mutex<Vec<Id>>,
}

impl PackSlots {
    /// `count` slots, none open.
    pub(super) fn new(count: usize) -> Self {
        PackSlots {
            slots: (0..count.max(1)).map(|_| Mutex::new(None)).collect(),
            in_use: AtomicUsize::new(count.max(1)),
            filling: Mutex::new(None),
            lost: Mutex::new(Vec::new()),
        }
    }

    /// Gives up `pack` and the blob `blob` that was being added to it: their ids are lost.
    fn give_up(&self, pack: Option<OpenPack>, blob: &SealedBlob) {
        let mut lost = lock(&self.lost);
        lost.extend(pack.iter().flat_map(OpenPack::blob_ids));
        lost.push(blob.id);
    }

    /// The blobs of the packs given up since the last call.
    pub(super) fn take_lost(&self) -> Vec<Id> {
        std::mem::take(&mut *lock(&self.lost))
    }

    /// New blobs go to the first `count` slots only (packs held whole in memory cost a pack
    /// size each); the others fill no further and are taken at the end.
    pub(super) fn use_at_most(&self, count: usize) {
        self.in_use.fetch_min(count.max(1), Ordering::Relaxed);
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
                    self.give_up(filling.take(), blob);
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
                self.give_up(slot.take(), blob);
                return Err(Error::io("data", err));
            }
            if let Err(err) = grow(pack) {
                self.give_up(slot.take(), blob);
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

    /// How many slots new blobs go to.
    pub(super) fn len(&self) -> usize {
        self.in_use.load(Ordering::Relaxed)
    }

    /// The slot of `blob`: its id's first byte, uniform and unknown to the storage.
    fn slot_of(&self, blob: &SealedBlob) -> usize {
        usize::from(blob.id.0[0]) % self.len()
    }

    /// Calls `f` on every open pack.
    pub(super) fn for_each(&self, mut f: impl FnMut(&OpenPack)) {
        for slot in self.slots.iter().chain([&self.filling]) {
            if let Some(pack) = &*lock(slot) {
                f(pack);
            }
        }
    }

    /// Takes every open pack, those in memory below `small` bytes merged into one.
    pub(super) fn take_all(&self, small: usize) -> Vec<OpenPack> {
        let mut taken = Vec::new();
        let mut merged: Option<PackWriter> = None;
        for slot in self.slots.iter().chain([&self.filling]) {
            match lock(slot).take() {
                Some(OpenPack::Memory(pack)) if pack.len() < small => match &mut merged {
                    Some(into) => {
                        for (entry, sealed) in pack.blobs() {
                            into.add_stored(entry, sealed);
                        }
                    }
                    None => merged = Some(pack),
                },
                Some(pack) => taken.push(pack),
                None => {}
            }
        }
        taken.extend(merged.map(OpenPack::Memory));
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::{seal, BlobKind};
    use crate::crypto::Sealer;
    use crate::format::CompressionMode;
    use crate::id::Id;
    use crate::pack::{PackLayout, StreamedPackWriter};

    fn sealer() -> Sealer {
        Sealer::new([4; 32], true)
    }

    /// A blob of `len` bytes whose id begins with `first`.
    fn blob(first: u8, n: u8, len: usize) -> SealedBlob {
        let mut id = [n; 32];
        id[0] = first;
        seal(&sealer(), Id(id), BlobKind::Data, &vec![n; len], CompressionMode::Off)
    }

    fn memory() -> OpenPack {
        OpenPack::Memory(PackWriter::with_layout(
            BlobKind::Data,
            true,
            PackLayout::Padded,
            Vec::new(),
        ))
    }

    fn ids(pack: &OpenPack) -> Vec<Id> {
        match pack {
            OpenPack::Memory(pack) => pack.blobs().map(|(entry, _)| entry.id).collect(),
            OpenPack::Streamed(_) => panic!("a streamed pack"),
        }
    }

    #[test]
    fn blobs_are_spread_by_id_and_the_small_packs_merged_at_the_end() {
        let slots = PackSlots::new(4);
        let blobs: Vec<SealedBlob> = (0..40u8).map(|i| blob(i, i, 100)).collect();
        for b in &blobs {
            assert!(slots.add(b, 1 << 20, memory, |_| Ok(())).unwrap().is_none());
        }
        let mut open = 0;
        slots.for_each(|_| open += 1);
        assert_eq!(open, 4, "one open pack per slot");
        let taken = slots.take_all(1 << 20);
        assert_eq!(taken.len(), 1, "the packs in memory are merged into one");
        let held = ids(&taken[0]);
        let added: Vec<Id> = blobs.iter().map(|b| b.id).collect();
        let mut sorted = held.clone();
        sorted.sort();
        assert_eq!(sorted, added, "every blob once");
        assert_ne!(held, added, "the pack's order is not the order the blobs came in");
        // Slot by slot: the ids of each slot, in the order they came.
        let by_slot: Vec<Id> =
            (0..4).flat_map(|s| added.iter().filter(move |id| id.0[0] % 4 == s).copied()).collect();
        assert_eq!(held, by_slot);
        assert!(slots.take_all(1 << 20).is_empty());
    }

    #[test]
    fn a_full_pack_takes_small_blobs_into_its_padding_until_the_next_is_full() {
        let slots = PackSlots::new(1);
        let pack_size = 200_000;
        // Full after the third blob of 70 kB: its padding then has room for small blobs.
        for n in 0..3 {
            assert!(slots
                .add(&blob(0, n, 70_000), pack_size, memory, |_| Ok(()))
                .unwrap()
                .is_none());
        }
        let closed_len = |slots: &PackSlots| {
            let mut len = 0;
            slots.for_each(|p| {
                if let OpenPack::Memory(p) = p {
                    len = p.closed_len()
                }
            });
            len
        };
        let full_len = closed_len(&slots);
        assert!(full_len > 210_000, "the full pack waits in the filling slot");
        // A small blob goes into the padding: the pack does not grow.
        assert!(slots.add(&blob(0, 10, 500), pack_size, memory, |_| Ok(())).unwrap().is_none());
        assert_eq!(closed_len(&slots), full_len);
        // The next full pack replaces it, and the first is done.
        let mut done = None;
        for n in 20..23 {
            if let Some(pack) =
                slots.add(&blob(0, n, 70_000), pack_size, memory, |_| Ok(())).unwrap()
            {
                done = Some(pack);
            }
        }
        let done = done.expect("the first full pack is done");
        assert_eq!(ids(&done).len(), 4, "three large blobs and the small one");
    }

    #[test]
    fn packs_in_memory_that_are_not_small_are_not_merged() {
        let slots = PackSlots::new(2);
        slots.add(&blob(0, 1, 5_000), 1 << 20, memory, |_| Ok(())).unwrap();
        slots.add(&blob(1, 2, 100), 1 << 20, memory, |_| Ok(())).unwrap();
        slots.add(&blob(3, 3, 100), 1 << 20, memory, |_| Ok(())).unwrap();
        // Below 1,000 bytes only the second slot's pack (two blobs of 140 bytes and a header).
        let taken = slots.take_all(1_000);
        let held: Vec<usize> = taken.iter().map(|p| ids(p).len()).collect();
        assert_eq!(held, [1, 2]);
    }

    #[test]
    fn fewer_slots_take_new_blobs_once_packs_are_held_in_memory() {
        let slots = PackSlots::new(4);
        slots.add(&blob(3, 1, 100), 1 << 20, memory, |_| Ok(())).unwrap();
        slots.use_at_most(2);
        slots.use_at_most(3);
        assert_eq!(slots.len(), 2, "only ever fewer");
        for i in 0..8u8 {
            slots.add(&blob(i, i + 10, 100), 1 << 20, memory, |_| Ok(())).unwrap();
        }
        let mut held = Vec::new();
        slots.for_each(|p| held.push(ids(p).iter().map(|id| id.0[0]).collect::<Vec<u8>>()));
        // Slots 0 and 1 by parity; slot 3 keeps the blob it had.
        assert_eq!(held, [vec![0, 2, 4, 6], vec![1, 3, 5, 7], vec![3]]);
    }

    #[test]
    fn packs_written_to_the_storage_are_not_merged() {
        let dir = tempfile::tempdir().unwrap();
        let backend = crate::backend::LocalBackend::new(dir.path());
        let slots = PackSlots::new(2);
        let stream = |pack: &mut OpenPack| -> Result<()> {
            if let OpenPack::Memory(memory) = pack {
                let object =
                    crate::backend::Backend::begin_object(&backend, "data").unwrap().unwrap();
                let taken = std::mem::replace(memory, PackWriter::new(BlobKind::Data, true));
                *pack = OpenPack::Streamed(Box::new(
                    StreamedPackWriter::from_memory(taken, object).unwrap(),
                ));
            }
            Ok(())
        };
        // Slot 0 streams; slot 1 (ids 1 and 3) stays in memory.
        slots.add(&blob(0, 1, 100), 1 << 20, memory, stream).unwrap();
        slots.add(&blob(1, 2, 100), 1 << 20, memory, |_| Ok(())).unwrap();
        slots.add(&blob(3, 3, 100), 1 << 20, memory, |_| Ok(())).unwrap();
        let taken = slots.take_all(1 << 20);
        let streamed = taken.iter().filter(|p| matches!(p, OpenPack::Streamed(_))).count();
        assert_eq!((taken.len(), streamed), (2, 1));
    }
}
