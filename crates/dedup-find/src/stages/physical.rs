//! Reading candidates in the order of the disk, on devices where getting to the data costs more
//! than reading it: a spinning disk spends 8-12 ms on a seek and half a turn before a small
//! read, and well under one reading it.
//!
//! The stages choose what to read by class (heads of files of one size, members of one class
//! compared with each other), and classes are ordered by size, so their reads land all over the
//! disk. Here the reads a stage is about to make are sorted by where their first byte lies
//! (`FIEMAP`, `dedup_scan::layout`; files of a file system that cannot tell go after, by inode
//! number), and one thread asks the kernel for them in that order (`dedup_scan::read::ahead`)
//! while the stage's readers read them from the page cache as their work needs, each first
//! waiting until its own was asked for. The heads and tails of the sample stage are read this
//! way, and the exact stage's classes of files read in one chunk become sweeps: every member of
//! a batch of classes read ahead in the order of the disk, each class compared as soon as its
//! last member was asked for. What is compared, and how, does not change: the exact stage still
//! compares every byte of every member, and a page evicted before its reader comes is simply
//! read again.
//!
//! Where it is on: devices that say they rotate (`queue/rotational`) and whose first reads were
//! measured slow (`crate::stages::whole_read`): a virtual disk may say it rotates on solid-state
//! storage, where one thread asking in order would only hold back reads the device serves many
//! at once, and a cloud disk may be slow per request but has no head to move.
//! `DEDUP_PHYSICAL_ORDER=1` or `0` (`crate::PhysicalOrder`) forces it on or off everywhere.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use dedup_scan::layout::{self, Address};
use dedup_scan::read::ahead::{reading_ahead, ReadAhead};
use dedup_scan::read::together::Wanted;

use crate::stages::candidates::{Class, Inode};
use crate::stages::keyed::{keyed, sort_keyed};
use crate::stages::reading::Reading;
use crate::tuning::{PhysicalOrder, Tuning};

/// The devices whose candidates are read in the order of the disk.
pub(crate) struct Order {
    choice: PhysicalOrder,
    measured: Vec<u64>,
}

impl Order {
    /// As `tuning` says: on the devices the sample stage chose it for (`chosen_devices`), or
    /// everywhere, or nowhere.
    pub fn new(tuning: Tuning, chosen_devices: impl IntoIterator<Item = u64>) -> Order {
        let measured = chosen_devices.into_iter().collect();
        Order { choice: tuning.physical_order, measured }
    }

    /// Whether files on `dev` are read in the order of the disk.
    pub fn on(&self, dev: u64) -> bool {
        match self.choice {
            PhysicalOrder::Always => true,
            PhysicalOrder::Never => false,
            PhysicalOrder::Measured => self.measured.contains(&dev),
        }
    }

    /// Whether files on some device are.
    pub fn any(&self) -> bool {
        match self.choice {
            PhysicalOrder::Always => true,
            PhysicalOrder::Never => false,
            PhysicalOrder::Measured => !self.measured.is_empty(),
        }
    }
}

/// Whether a device whose reads the sample stage measured `slow` reads in the order of the disk
/// under `choice`, given whether it says it rotates.
pub(crate) fn chosen(choice: PhysicalOrder, slow: bool, rotates: Option<bool>) -> bool {
    match choice {
        PhysicalOrder::Always => true,
        PhysicalOrder::Never => false,
        PhysicalOrder::Measured => slow && rotates == Some(true),
    }
}

/// Where a read starts, as a key that sorts the reads of a device in the order of the disk:
/// files whose address is known first, by address, then the others by inode number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place {
    dev: u64,
    unknown: bool,
    at: u64,
}

impl Place {
    /// The place of a read of the file `ino` on `dev` starting at device byte `address`.
    pub fn new(dev: u64, ino: u64, address: Address) -> Place {
        match address {
            Address::At(at) => Place { dev, unknown: false, at },
            Address::Unknown | Address::Unsupported => Place { dev, unknown: true, at: ino },
        }
    }
}

/// The places of reads (each an inode and the offset its read starts at), found on a few
/// threads; a file system that cannot tell where files lie is asked once. Files are opened in
/// inode order: where the kernel has let go of their inodes and directories since the walk,
/// it then reads those back in the order they lie too, not in the order of the classes.
pub(crate) fn places(ctx: &Reading, reads: &[(Inode, u64)]) -> Vec<Place> {
    let blind: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut by_inode: Vec<(usize, Inode, u64)> =
        reads.iter().enumerate().map(|(n, &(inode, offset))| (n, inode, offset)).collect();
    by_inode.sort_unstable_by_key(|&(_, inode, _)| inode.meta(ctx.tree).id);
    let found = ctx.each(by_inode, threads, &|(n, inode, offset)| {
        let meta = inode.meta(ctx.tree);
        let (dev, ino) = (meta.id.dev, meta.id.ino);
        let is_blind = || blind.lock().unwrap_or_else(PoisonError::into_inner).contains(&dev);
        if is_blind() {
            return (n, Place::new(dev, ino, Address::Unsupported));
        }
        let address = ctx
            .open_quietly(&inode)
            .map_or(Address::Unknown, |file| layout::address_of(&file, offset));
        if address == Address::Unsupported && !is_blind() {
            blind.lock().unwrap_or_else(PoisonError::into_inner).push(dev);
        }
        (n, Place::new(dev, ino, address))
    });
    let mut places = vec![Place::new(0, 0, Address::Unknown); reads.len()];
    for (n, place) in found {
        places[n] = place;
    }
    places
}

/// How much each read-ahead hint may ask for, per device (`layout::read_ahead_piece`).
struct Pieces(HashMap<u64, u64>);

impl Pieces {
    fn of(devices: impl Iterator<Item = u64>) -> Pieces {
        let mut pieces = HashMap::new();
        for dev in devices {
            pieces.entry(dev).or_insert_with(|| layout::read_ahead_piece(dev));
        }
        Pieces(pieces)
    }

    fn get(&self, dev: u64) -> u64 {
        self.0.get(&dev).copied().unwrap_or(128 << 10)
    }
}

/// The read-ahead's request for `len` bytes of `inode` from `offset` (none if it cannot be
/// opened: its real read reports why).
fn ask(ctx: &Reading, pieces: &Pieces, inode: &Inode, offset: u64, len: u64) -> Option<Wanted> {
    let file = ctx.open_quietly(inode)?;
    Some(Wanted { file, offset, len, piece: pieces.get(ctx.dev(inode)) })
}

/// [`keyed`], with the members on devices that read in the order of the disk read in that order:
/// `part(set, inode)` is the offset and length each member's read takes, `key` reads it.
pub(crate) fn keyed_in_order(
    ctx: &Reading,
    order: &Order,
    sets: Vec<Vec<Inode>>,
    part: &(dyn Fn(usize, &Inode) -> (u64, u64) + Sync),
    key: &(dyn Fn(usize, &Inode) -> Option<u64> + Sync),
) -> Vec<Vec<(u64, Inode)>> {
    if !sets.iter().flatten().any(|inode| order.on(ctx.dev(inode))) {
        return keyed(ctx, sets, key);
    }
    let set_count = sets.len();
    let members =
        sets.into_iter().enumerate().flat_map(|(s, set)| set.into_iter().map(move |i| (s, i)));
    // Each member with the index of its set.
    type Members = Vec<(usize, Inode)>;
    let (mut ordered, others): (Members, Members) =
        members.partition(|(_, inode)| order.on(ctx.dev(inode)));
    let reads: Vec<(Inode, u64)> = ordered.iter().map(|&(s, i)| (i, part(s, &i).0)).collect();
    let found = places(ctx, &reads);
    let mut placed: Vec<(Place, (usize, Inode))> = found.into_iter().zip(ordered).collect();
    placed.sort_by_key(|(place, _)| *place);
    ordered = placed.into_iter().map(|(_, member)| member).collect();
    let pieces = Pieces::of(ordered.iter().map(|(_, inode)| ctx.dev(inode)));
    let request = |n: usize| {
        let (set, inode) = ordered[n];
        let (offset, len) = part(set, &inode);
        ask(ctx, &pieces, &inode, offset, len)
    };
    let work: Vec<(Option<usize>, usize, Inode)> = (ordered.iter().enumerate())
        .map(|(n, &(set, inode))| (Some(n), set, inode))
        .chain(others.into_iter().map(|(set, inode)| (None, set, inode)))
        .collect();
    let read = |ahead: &ReadAhead| {
        ctx.each(work, ctx.reader.io.threads(), &|(n, set, inode)| {
            if let Some(n) = n {
                ahead.wait_for(n);
            }
            (set, key(set, &inode), inode)
        })
    };
    let results = reading_ahead(ordered.len(), &request, read);
    let mut out: Vec<Vec<(u64, Inode)>> = vec![Vec::new(); set_count];
    for (set, key, inode) in results {
        if let Some(key) = key {
            out[set].push((key, inode));
        }
    }
    for set in &mut out {
        sort_keyed(set);
    }
    out
}

/// One sweep of the exact stage: classes of files read in one chunk, whose members together fit
/// in the memory given to a sweep, with their members in the order of the disk.
pub(crate) struct Sweep {
    /// Every member of the classes, in the order of the disk.
    members: Vec<Inode>,
    /// The classes, each with the position in `members` of its last member there, in that
    /// order: a class can be compared once its last member was asked for.
    classes: Vec<(Class, usize)>,
}

/// The classes cut into sweeps of at most `budget` bytes of members each (at least one class a
/// sweep), taken in the order of their first member on the disk, so that when a tree's
/// candidates do not fit in memory at once each sweep still reads one stretch of the disk.
pub(crate) fn sweeps(ctx: &Reading, classes: Vec<Class>, budget: u64) -> Vec<Sweep> {
    let reads: Vec<(Inode, u64)> =
        classes.iter().flat_map(|c| c.inodes.iter().map(|&inode| (inode, 0))).collect();
    let mut found = places(ctx, &reads).into_iter();
    let mut placed: Vec<(Class, Vec<Place>)> = classes
        .into_iter()
        .map(|class| {
            let places = found.by_ref().take(class.inodes.len()).collect();
            (class, places)
        })
        .collect();
    placed.sort_by_key(|(_, places)| places.iter().min().copied());
    let mut batches: Vec<Vec<(Class, Vec<Place>)>> = Vec::new();
    let mut bytes = u64::MAX;
    for (class, places) in placed {
        let size = class.size.saturating_mul(class.inodes.len() as u64);
        if bytes.saturating_add(size) > budget {
            batches.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        batches.last_mut().expect("a batch was started").push((class, places));
    }
    batches.into_iter().map(sweep_of).collect()
}

fn sweep_of(batch: Vec<(Class, Vec<Place>)>) -> Sweep {
    // (place, class, member) of every member.
    let mut members: Vec<(Place, usize, Inode)> = Vec::new();
    for (c, (class, places)) in batch.iter().enumerate() {
        members.extend(places.iter().zip(&class.inodes).map(|(&place, &inode)| (place, c, inode)));
    }
    members.sort_by_key(|&(place, _, _)| place);
    let mut last = vec![0; batch.len()];
    for (position, &(_, c, _)) in members.iter().enumerate() {
        last[c] = position;
    }
    let mut classes: Vec<(Class, usize)> =
        batch.into_iter().map(|(class, _)| class).zip(last).collect();
    classes.sort_by_key(|&(_, last)| last);
    Sweep { members: members.into_iter().map(|(_, _, inode)| inode).collect(), classes }
}

impl Sweep {
    /// Run `compare` on the classes (each with the position of its last member, to wait for on
    /// the read-ahead it is given) while every member is read ahead whole, in the order of the
    /// disk.
    pub fn run<R>(
        self,
        ctx: &Reading,
        compare: impl FnOnce(Vec<(Class, usize)>, &ReadAhead) -> R,
    ) -> R {
        let Sweep { members, classes } = self;
        let pieces = Pieces::of(members.iter().map(|inode| ctx.dev(inode)));
        let request = |n: usize| {
            let inode = &members[n];
            ask(ctx, &pieces, inode, 0, inode.meta(ctx.tree).size)
        };
        reading_ahead(members.len(), &request, |ahead| compare(classes, ahead))
    }
}

/// Whether every page of every member of `class` is in the page cache or on its way there (a
/// member that cannot be opened counts as there: its comparison reports what is wrong with it;
/// so does every member where the kernel cannot tell).
pub(crate) fn in_page_cache(ctx: &Reading, class: &Class) -> bool {
    class.inodes.iter().all(|inode| {
        let Some(file) = ctx.open_quietly(inode) else { return true };
        layout::all_cached(&file, class.size).unwrap_or(true)
    })
}

/// The classes sorted by where their first member on the disk lies.
pub(crate) fn in_order_of_first_members(ctx: &Reading, classes: Vec<Class>) -> Vec<Class> {
    if classes.len() < 2 {
        return classes;
    }
    let reads: Vec<(Inode, u64)> =
        classes.iter().flat_map(|c| c.inodes.iter().map(|&inode| (inode, 0))).collect();
    let mut found = places(ctx, &reads).into_iter();
    let mut placed: Vec<(Option<Place>, Class)> = classes
        .into_iter()
        .map(|class| (found.by_ref().take(class.inodes.len()).min(), class))
        .collect();
    placed.sort_by_key(|(first, _)| *first);
    placed.into_iter().map(|(_, class)| class).collect()
}

/// Bytes of candidates one sweep reads ahead: half the memory the kernel says is available, so
/// that what is read ahead is still in the page cache when its class is compared.
pub(crate) fn sweep_budget() -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    available.map_or(1 << 30, |kib| kib * 1024 / 2).max(64 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(at: u64) -> Place {
        Place { dev: 1, unknown: false, at }
    }

    #[test]
    fn known_places_sort_by_address_before_unknown_ones_by_inode() {
        let mut places = [
            Place::new(1, 5, Address::Unknown),
            Place::new(1, 9, Address::At(4096)),
            Place::new(1, 2, Address::Unsupported),
            Place::new(1, 3, Address::At(1024)),
            Place::new(0, 7, Address::At(1 << 40)),
        ];
        places.sort();
        let order: Vec<(u64, bool, u64)> =
            places.iter().map(|p| (p.dev, p.unknown, p.at)).collect();
        assert_eq!(
            order,
            [(0, false, 1 << 40), (1, false, 1024), (1, false, 4096), (1, true, 2), (1, true, 5)]
        );
    }

    #[test]
    fn a_sweep_reads_members_in_disk_order_and_compares_each_class_after_its_last() {
        let class = |size: u64, first: u32, n: u32| Class {
            size,
            inodes: (first..first + n).map(Inode::numbered).collect(),
            cached: false,
        };
        // Class A's members lie at 10 and 50, B's at 20 and 30, C's at 5 and 60.
        let batch = vec![
            (class(100, 0, 2), vec![place(10), place(50)]),
            (class(200, 2, 2), vec![place(20), place(30)]),
            (class(300, 4, 2), vec![place(60), place(5)]),
        ];
        let sweep = sweep_of(batch);
        let order: Vec<usize> = sweep.members.iter().map(|i| i.first()).collect();
        assert_eq!(order, [5, 0, 2, 3, 1, 4]);
        let ready: Vec<(u64, usize)> =
            sweep.classes.iter().map(|(c, last)| (c.size, *last)).collect();
        assert_eq!(ready, [(200, 3), (100, 4), (300, 5)]);
    }

    #[test]
    fn the_order_is_on_where_chosen_forced_or_measured() {
        assert!(chosen(PhysicalOrder::Measured, true, Some(true)));
        assert!(!chosen(PhysicalOrder::Measured, false, Some(true)), "fast: no seeks to save");
        assert!(!chosen(PhysicalOrder::Measured, true, Some(false)), "slow, but no head");
        assert!(!chosen(PhysicalOrder::Measured, true, None), "no block queue to ask");
        assert!(chosen(PhysicalOrder::Always, false, None));
        assert!(!chosen(PhysicalOrder::Never, true, Some(true)));
    }

    /// Every stage that reads in the order of the disk (heads, tails, sweeps of small classes)
    /// must find the groups it finds without, reading the same bytes.
    #[test]
    fn the_order_of_the_disk_changes_no_group_and_no_byte_read() {
        use crate::{find, FindOptions, Tuning};
        use dedup_core::Progress;
        let dir = tempfile::tempdir().unwrap();
        let write =
            |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
        let pattern = |len: usize, seed: usize| -> Vec<u8> {
            (0..len).map(|i| ((i * 31 + seed * 7 + i / 251) % 256) as u8).collect()
        };
        for (i, len) in [100usize, 5000, 64 << 10, 200_000, 3 << 20].into_iter().enumerate() {
            let content = pattern(len, i);
            write(&format!("{i}-a"), &content);
            write(&format!("{i}-b"), &content);
            let mut other = content.clone();
            other[len / 2] ^= 1;
            write(&format!("{i}-c"), &other);
            let mut tail = content.clone();
            tail[len - 1] ^= 1;
            write(&format!("{i}-d"), &tail);
            write(&format!("{i}-e"), &pattern(len, i + 100));
        }
        let run = |physical_order| {
            // The switch to whole reads fixed: measured, it follows the machine's load, and
            // the two runs could read differently for that alone.
            let tuning = Tuning { physical_order, measure_whole_read: false, ..Tuning::default() };
            let options = FindOptions { tuning, ..FindOptions::default() };
            let progress = Progress::default();
            let report = find(&[dir.path().to_owned()], &options, &(), &progress);
            let mut groups: Vec<Vec<_>> = report
                .groups
                .iter()
                .map(|g| g.files.iter().map(|f| f.path.clone()).collect())
                .collect();
            groups.sort();
            (groups, progress.snapshot().bytes_read)
        };
        let (ordered, ordered_bytes) = run(PhysicalOrder::Always);
        let (plain, plain_bytes) = run(PhysicalOrder::Never);
        assert_eq!(ordered.len(), 5, "{ordered:?}");
        assert_eq!(ordered, plain);
        assert_eq!(ordered_bytes, plain_bytes);
    }

    #[test]
    fn a_sweep_budget_leaves_room() {
        assert!(sweep_budget() >= 64 << 20);
    }
}
