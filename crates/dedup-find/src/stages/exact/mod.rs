//! The exact stage: every remaining candidate is read once, chunk by chunk, in lockstep across
//! its class, and each chunk is compared byte for byte with the chunk of a representative; a
//! class splits wherever its members' bytes differ. Files that end in one class are identical.
//!
//! Memory is bounded whatever the class size: only a limited number of representative chunks is
//! held (`REP_BUDGET`). A member whose chunk matches none of them while the budget is full is set
//! aside by a hash of that chunk, and each such set is later compared again at the same offset
//! with a representative of its own, so exactness never rests on a hash. (That re-read happens
//! only when one class holds more distinct chunks at one offset than the budget allows.) Large
//! classes do not keep their files open between chunks, so the open-file limit holds too.
//!
//! With the content cache on, the chunks also feed BLAKE3 as they are compared, so every file
//! read whole comes out with its digest for the cache at no extra I/O. Members proven equal over
//! a prefix share one hasher for it: each distinct chunk is hashed once, not once per copy, and
//! a class that splits hands each part a copy of the state of the prefix they had in common.
//!
//! The threads reading one step's members place each member as soon as its chunk is read
//! (`split`), so a step is one stream of reads without a wait for the slowest of a batch, and a
//! buffer is held only while a chunk is read or while it is a representative's. A chunk is first
//! compared with the representative most members have joined (the lead) while that is likely
//! to pay; a chunk equal to it needs no hash, and when it is in the page cache it is compared a
//! piece at a time as it is read (`chunk_read`). Chunks of 64 KiB or more are read into
//! page-aligned buffers that the stage's threads share and reuse (`buffers`). On a device the
//! samples measured slow per request, chunks are whole requests of the device, read around the
//! page cache (`dedup_scan::read::direct`).

mod chunk_read;
mod split;

use std::fs::File;
use std::sync::{Arc, Mutex, PoisonError};

use dedup_cache::{Digest, Entry, Fingerprint, FingerprintKind};
use xxhash_rust::xxh3::xxh3_64;

use crate::cache::fingerprint::kind_for;
use crate::cache::Learned;
use crate::phases::COMPARE;
use crate::stages::candidates::{Class, Inode};
use crate::stages::physical::{self, Order};
use crate::stages::reading::Reading;
use crate::stages::whole_read::{self, direct_request, WholeRead};
use crate::tuning::{Tuning, FIRST_CHUNK};
use chunk_read::Slot;
use dedup_scan::read::ahead::ReadAhead;
use dedup_scan::read::direct::DirectBufs;
use dedup_scan::read::BufferPool;
use split::{Rep, Seen, Split};

const MAX_CHUNK: u64 = 4 << 20;
/// Bytes of representative chunks one class may hold at once.
const REP_BUDGET: u64 = 8 << 20;
/// Classes of files larger than one chunk hold chunk-sized buffers for their whole comparison,
/// so at most this many are compared at once; a few multi-MiB reads in flight keep any device
/// busy, and memory stays bounded however many reader threads small files get.
const LARGE_CLASSES_AT_ONCE: usize = 8;
/// Chunks at least this large are read for several members at once.
const PARALLEL_READ_MIN: u64 = 256 << 10;
/// Bytes of such chunks in flight at once for the classes of one pool together (beside their
/// representatives' `REP_BUDGET`): it caps how many members of a class are read at once, and
/// the scheduler's gate bounds the reads below that. It must leave room above the gate, or files
/// of 1 MiB are read fewer at a time than the device wants (docs/benchmarks/find.md).
const IN_FLIGHT_BYTES: u64 = 32 << 20;
/// Sweeps of the classes read in the order of the disk: a class whose pages left the page cache
/// before its comparison is swept again, at most this many times in all.
const SWEEP_ROUNDS: usize = 3;
/// Classes with more members than this reopen each file per chunk instead of holding it open.
const KEEP_OPEN_MAX: usize = 64;

/// Compare the classes in full; returns the groups of identical files, and (when `hash`) what
/// the cache may keep of every file read: digests, and the fingerprint of the kind a run takes
/// of its size (`fingerprint::kind_for`), from its first chunk. Classes on devices that
/// `whole_reads` says read around the page cache are read that way, and the devices are marked
/// there when the kernel would not give those reads their buffers of huge pages.
pub(crate) fn compare_classes(
    classes: Vec<Class>,
    ctx: &Reading,
    hardlinks: bool,
    hash: bool,
    tuning: Tuning,
    whole_reads: &mut [WholeRead],
) -> (Vec<Class>, Vec<Learned>) {
    let total = classes.iter().map(|c| c.inodes.len() as u64).sum();
    ctx.progress().start_phase(COMPARE, total);
    let order = Order::new(tuning, whole_read::ordered_devices(whole_reads));
    let (large, small): (Vec<Class>, Vec<Class>) =
        classes.into_iter().partition(|c| c.size > FIRST_CHUNK);
    // Classes read in one chunk whose members all lie on devices read in the order of the disk
    // are compared in sweeps (`crate::stages::physical`).
    let (swept, small): (Vec<Class>, Vec<Class>) = small
        .into_iter()
        .partition(|c| order.any() && c.inodes.iter().all(|i| order.on(ctx.dev(i))));
    let buffers = BufferPool::default();
    let direct_bufs = DirectBufs::default();
    // Each class with, when it is swept, the position of its last member in the sweep's
    // read-ahead; with `may_defer`, a swept class whose pages left the page cache before its
    // comparison is handed back for another sweep instead of being read out of order.
    let compare = |classes: Vec<(Class, Option<usize>)>,
                   threads: usize,
                   ahead: Option<&ReadAhead>,
                   may_defer: bool|
     -> (Vec<Class>, Vec<Learned>, Vec<Class>) {
        // Fewer classes than threads leave threads idle: only then read inside a class in
        // parallel, the classes sharing one budget of buffers.
        let in_flight_bytes =
            if classes.len() < threads { IN_FLIGHT_BYTES / classes.len().max(1) as u64 } else { 0 };
        let compared = ctx.each(classes, threads, &|(class, last)| {
            let size = class.size;
            // Every fingerprint lies in the first chunk: a small file's whole content, a larger
            // one's head sample. The sample stage took the head of the files it sampled, but not
            // of those a slow device reads whole instead (`crate::stages::whole_read`).
            let fingerprint = if hash { kind_for(size, tuning) } else { None };
            // A swept class is read from the page cache its read-ahead filled: not around it.
            let direct_request = match (last, ahead) {
                (Some(last), Some(ahead)) => {
                    ahead.wait_for(last);
                    if may_defer && !physical::in_page_cache(ctx, &class) {
                        return (Vec::new(), Vec::new(), Some(class));
                    }
                    None
                }
                _ => direct_request_of(&class, ctx, whole_reads),
            };
            let comparer = Comparer {
                ctx,
                buffers: &buffers,
                direct_bufs: &direct_bufs,
                direct_request,
                hardlinks,
                hash,
                size,
                fingerprint,
                in_flight_bytes,
                threads,
            };
            let (groups, learned) = comparer.run(class);
            (groups, learned, None)
        });
        let (mut groups, mut learned, mut deferred) = (Vec::new(), Vec::new(), Vec::new());
        for (g, l, d) in compared {
            groups.extend(g);
            learned.extend(l);
            deferred.extend(d);
        }
        (groups, learned, deferred)
    };
    let unswept = |classes: Vec<Class>| classes.into_iter().map(|c| (c, None)).collect();
    let threads = ctx.reader.io.threads();
    let (mut groups, mut learned, _) = compare(unswept(small), threads, None, false);
    // Pages read ahead can leave the page cache before their class is compared (memory
    // pressure; another process dropping the caches): such classes are swept again, in the
    // order of the disk, rather than read in the order of the classes; the last round compares
    // whatever it must read.
    let mut to_sweep = swept;
    for round in 1..=SWEEP_ROUNDS {
        let may_defer = round < SWEEP_ROUNDS;
        let mut deferred = Vec::new();
        for sweep in physical::sweeps(ctx, std::mem::take(&mut to_sweep), physical::sweep_budget())
        {
            let (swept_groups, swept_learned, again) = sweep.run(ctx, |classes, ahead| {
                let classes = classes.into_iter().map(|(c, last)| (c, Some(last))).collect();
                compare(classes, threads, Some(ahead), may_defer)
            });
            groups.extend(swept_groups);
            learned.extend(swept_learned);
            deferred.extend(again);
        }
        to_sweep = deferred;
    }
    // Classes of several chunks on devices read in the order of the disk: one at a time, in
    // the order of their first members, since a second class read beside one would send the
    // head back and forth between them at every chunk.
    let (ordered_large, large): (Vec<Class>, Vec<Class>) = large
        .into_iter()
        .partition(|c| order.any() && c.inodes.iter().all(|i| order.on(ctx.dev(i))));
    let ordered_large = physical::in_order_of_first_members(ctx, ordered_large);
    for (classes, threads) in
        [(large, LARGE_CLASSES_AT_ONCE.min(ctx.reader.io.threads())), (ordered_large, 1)]
    {
        let (large_groups, large_learned, _) = compare(unswept(classes), threads, None, false);
        groups.extend(large_groups);
        learned.extend(large_learned);
    }
    if direct_bufs.refused() {
        for choice in whole_reads.iter_mut().filter(|c| c.direct.is_some()) {
            choice.direct_refused = true;
        }
    }
    (groups, learned)
}

/// The request size in which a class is read around the page cache: the smallest of its
/// members' devices', if every member's device reads that way.
fn direct_request_of(class: &Class, ctx: &Reading, whole_reads: &[WholeRead]) -> Option<u64> {
    if whole_reads.iter().all(|choice| choice.direct.is_none()) {
        return None;
    }
    let mut requests =
        class.inodes.iter().map(|i| direct_request(whole_reads, i.meta(ctx.tree).id.dev));
    requests.try_fold(u64::MAX, |least, request| request.map(|r| least.min(r)))
}

struct Member {
    inode: Inode,
    file: Option<File>,
}

/// Members known equal over `[0, offset)`.
struct Pending {
    members: Vec<Member>,
    offset: u64,
    chunk: u64,
    /// The cache's fingerprint of their content, once the first chunk is read (when wanted).
    fingerprint: Option<Fingerprint>,
    /// BLAKE3 of their common bytes `[0, offset)`.
    hash: Hash,
}

impl Pending {
    /// What the cache may keep of every member, once none will be read further.
    fn learned(&self) -> impl Iterator<Item = Learned> + '_ {
        let entry = Entry { fingerprint: self.fingerprint, digest: self.hash.digest() };
        let useful = entry.fingerprint.is_some() || entry.digest.is_some();
        self.members.iter().filter(move |_| useful).map(move |m| (m.inode, entry))
    }
}

/// BLAKE3 of the bytes compared so far, when the content cache wants digests.
#[derive(Clone)]
enum Hash {
    /// No digest wanted (no cache, or a lone member that will not be read to its end).
    Off,
    /// Nothing hashed yet (offset 0).
    Empty,
    /// The state after a prefix.
    Prefix(Box<blake3::Hasher>),
    /// The whole content.
    Whole(Digest),
}

impl Hash {
    /// The state after `bytes` more; `to_end` when they are the last. A file read in one chunk
    /// (most are) is hashed in one call, without a hasher to allocate and copy.
    fn extended(&self, bytes: &[u8], to_end: bool) -> Hash {
        let mut hasher = match self {
            Hash::Off | Hash::Whole(_) => return Hash::Off,
            Hash::Empty if to_end => return Hash::Whole(*blake3::hash(bytes).as_bytes()),
            Hash::Empty => Box::new(blake3::Hasher::new()),
            Hash::Prefix(hasher) => hasher.clone(),
        };
        hasher.update(bytes);
        if to_end {
            Hash::Whole(*hasher.finalize().as_bytes())
        } else {
            Hash::Prefix(hasher)
        }
    }

    fn digest(&self) -> Option<Digest> {
        match self {
            Hash::Whole(digest) => Some(*digest),
            // Nothing read yet: nothing to keep.
            Hash::Off | Hash::Empty | Hash::Prefix(_) => None,
        }
    }
}

struct Comparer<'a> {
    ctx: &'a Reading<'a>,
    buffers: &'a BufferPool,
    direct_bufs: &'a DirectBufs,
    /// Read around the page cache, in chunks of whole requests of this size (`dedup_scan::read::direct`).
    direct_request: Option<u64>,
    hardlinks: bool,
    hash: bool,
    size: u64,
    /// The kind of fingerprint the cache keeps of files of this size, when it wants one.
    fingerprint: Option<FingerprintKind>,
    /// Bytes of large chunks this class may read for several members at once (0: none).
    in_flight_bytes: u64,
    /// Threads that may read for this class's stage at once.
    threads: usize,
}

impl Comparer<'_> {
    fn run(&self, class: Class) -> (Vec<Class>, Vec<Learned>) {
        let keep_open = class.inodes.len() <= KEEP_OPEN_MAX && self.size > FIRST_CHUNK;
        let hash = if self.hash { Hash::Empty } else { Hash::Off };
        let members = class.inodes.into_iter().map(|inode| Member { inode, file: None });
        let members = members.collect();
        let mut work =
            vec![Pending { members, offset: 0, chunk: FIRST_CHUNK, fingerprint: None, hash }];
        let mut groups = Vec::new();
        let mut learned = Vec::new();
        while let Some(pending) = work.pop() {
            if pending.offset >= self.size || pending.members.len() < 2 {
                learned.extend(pending.learned());
            }
            if pending.members.len() < 2 {
                self.finish_alone(pending.members, &mut groups);
            } else if pending.offset >= self.size {
                self.ctx.progress().done(pending.members.len() as u64);
                let inodes = pending.members.into_iter().map(|m| m.inode).collect();
                groups.push(Class { size: self.size, inodes, cached: false });
            } else {
                self.step(pending, keep_open, &mut work);
            }
        }
        (groups, learned)
    }

    /// A member left without partners is unique, unless it is one file with several names and
    /// hard links count as duplicates.
    fn finish_alone(&self, members: Vec<Member>, groups: &mut Vec<Class>) {
        self.ctx.progress().done(members.len() as u64);
        let class = Class {
            size: self.size,
            inodes: members.into_iter().map(|m| m.inode).collect(),
            cached: false,
        };
        if !class.inodes.is_empty() && class.is_group(self.hardlinks) {
            groups.push(class);
        }
    }

    /// The fingerprint the cache keeps of the members of `rep`, from their first chunk.
    fn fingerprint_of(&self, rep: &Rep) -> Option<Fingerprint> {
        let kind = self.fingerprint?;
        let value = match kind {
            // A file of this kind is read in one chunk.
            FingerprintKind::Whole => rep.xxh3,
            FingerprintKind::Head { len } => xxh3_64(rep.chunk.bytes().get(..len as usize)?),
            FingerprintKind::Samples { .. } => return None,
        };
        Some(Fingerprint { kind, value })
    }

    /// Read one chunk of every member and split them by its bytes.
    fn step(&self, pending: Pending, keep_open: bool, work: &mut Vec<Pending>) {
        let Pending { members, offset, chunk, fingerprint, hash } = pending;
        // A direct read goes to the device as it is: a chunk of whole requests costs no more
        // requests than its size needs.
        let len = match self.direct_request {
            Some(request) => chunk.next_multiple_of(request),
            None => chunk,
        };
        let len = len.min(self.size - offset);
        let chunk_len = len as usize;
        let rep_limit = (REP_BUDGET / len).max(1) as usize;
        // Large chunks of several members are read in parallel when there are too few classes
        // to keep the threads busy: a class of a few huge files would otherwise be read by one
        // thread. Small reads stay sequential, where the hand-off would cost more than the read.
        let width = if len >= PARALLEL_READ_MIN {
            ((self.in_flight_bytes / len) as usize).clamp(1, self.threads)
        } else {
            1
        };
        let split = Mutex::new(Split::new(members.len(), rep_limit));
        let lock = || split.lock().unwrap_or_else(PoisonError::into_inner);
        let take = || lock().spare.pop().unwrap_or_else(|| self.buffers.take(chunk_len));
        let read = |mut member: Member| {
            let lead = lock().lead();
            let mut slot = Slot { buf: None, take: &take };
            let seen = self.read_chunk(
                &mut member,
                offset,
                chunk_len,
                keep_open,
                &mut slot,
                lead.as_ref(),
            );
            drop(lead);
            if matches!(seen, Seen::Dropped) {
                self.ctx.progress().done(1);
            }
            lock().place(member, seen, slot.buf);
        };
        if width > 1 && members.len() > 1 {
            self.ctx.each(members, width, &read);
        } else {
            members.into_iter().for_each(read);
        }
        let Split { reps, set_aside, spare, .. } =
            split.into_inner().unwrap_or_else(PoisonError::into_inner);
        for buf in spare {
            self.buffers.give(buf);
        }
        let next_chunk = (chunk * 2).min(MAX_CHUNK);
        let to_end = offset + len == self.size;
        for rep in reps {
            // Content without a copy read in one chunk needs no digest: its fingerprint keeps it
            // apart next time. Otherwise a file read to its end gets one.
            let copies = rep.members.len() > 1;
            let fingerprinted =
                self.fingerprint == Some(FingerprintKind::Whole) && matches!(hash, Hash::Empty);
            let rep_hash = if copies || (to_end && !fingerprinted) {
                hash.extended(rep.chunk.bytes(), to_end)
            } else {
                Hash::Off
            };
            let fingerprint = if offset == 0 { self.fingerprint_of(&rep) } else { fingerprint };
            // Every reader's handle on the lead was dropped with the step's reads.
            if let Ok(buf) = Arc::try_unwrap(rep.chunk) {
                self.buffers.give(buf);
            }
            let (members, offset, chunk, hash) = (rep.members, offset + len, next_chunk, rep_hash);
            work.push(Pending { members, offset, chunk, fingerprint, hash });
        }
        for members in set_aside.into_values() {
            let hash = hash.clone();
            work.push(Pending { members, offset, chunk, fingerprint, hash });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use dedup_cache::{Cache, Entry, Fingerprint, FingerprintKind, Lookup, Opened};
    use dedup_core::{FileMeta, Progress};
    use xxhash_rust::xxh3::xxh3_64;

    use crate::{find_run, CacheOptions, FindOptions};

    fn meta(path: &Path) -> FileMeta {
        FileMeta::of(&fs::metadata(path).unwrap())
    }

    /// Chunk buffers go back to a pool and come out again holding another file's bytes, often
    /// longer than the new chunk. Equal files must still group and files that differ in one
    /// byte in the middle (where no sample looks) must not, whatever a buffer held before.
    #[test]
    fn reused_buffers_never_carry_bytes_between_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut expected = Vec::new();
        // Sizes in the same rooms of the pool (256 and 512 KiB), the larger classes first in
        // name order, each with two copies and one file differing in its middle byte.
        for (i, size) in
            [500_000usize, 450_000, 300_000, 280_000, 200_000, 140_000].iter().enumerate()
        {
            let content: Vec<u8> = (0..*size).map(|b| ((b * (i + 3)) % 251) as u8).collect();
            let mut other = content.clone();
            other[size / 2] ^= 1;
            let names = [format!("{i}-a"), format!("{i}-b"), format!("{i}-c")];
            fs::write(dir.path().join(&names[0]), &content).unwrap();
            fs::write(dir.path().join(&names[1]), &content).unwrap();
            fs::write(dir.path().join(&names[2]), &other).unwrap();
            expected.push(vec![dir.path().join(&names[0]), dir.path().join(&names[1])]);
        }
        // Large files whose buffers (1-4 MiB chunks) the pool then offers to the others.
        let big: Vec<u8> = (0..(6 << 20)).map(|b| (b % 241) as u8).collect();
        fs::write(dir.path().join("big-a"), &big).unwrap();
        fs::write(dir.path().join("big-b"), &big).unwrap();
        expected.push(vec![dir.path().join("big-a"), dir.path().join("big-b")]);
        let roots = [dir.path().to_owned()];
        let run = find_run(&roots, &FindOptions::default(), &(), &Progress::default());
        let mut found: Vec<Vec<_>> = run
            .report
            .groups
            .iter()
            .map(|g| {
                let mut paths: Vec<_> = g.files.iter().map(|f| f.path.clone()).collect();
                paths.sort();
                paths
            })
            .collect();
        found.sort();
        expected.sort();
        assert_eq!(found, expected);
    }

    /// Copies share one hasher while equal; the digest each file gets must still be the BLAKE3
    /// of its own bytes, whether its class split in the first chunk, a later one, or never.
    /// Sampled files keep their head sample's fingerprint; small files the hash of their content,
    /// and no digest when they had no copy.
    #[test]
    fn every_file_read_gets_the_entry_of_its_own_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let variant = |base: &[u8], at: usize| {
            let mut v = base.to_vec();
            v[at] ^= 1;
            v
        };
        // Chunks of 1, 2, 4 and 1 MiB.
        let size = 8 << 20;
        let big: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        let mid: Vec<u8> = (0..100_000).map(|i| (i * 13 % 253) as u8).collect();
        let small: Vec<u8> = (0..1000).map(|i| (i * 5 % 241) as u8).collect();
        let files = [
            ("a1", big.clone()),
            ("a2", big.clone()),
            ("b1", variant(&big, 2 << 20)),
            ("b2", variant(&big, 2 << 20)),
            ("c", variant(&big, 10)),
            ("d", variant(&big, 5 << 20)),
            ("e", variant(&big, (15 << 20) / 2)),
            ("m1", mid.clone()),
            ("m2", mid.clone()),
            ("m3", variant(&mid, 50_000)),
            ("s1", small.clone()),
            ("s2", small.clone()),
            ("s3", variant(&small, 500)),
        ];
        for (name, bytes) in &files {
            fs::write(dir.path().join(name), bytes).unwrap();
        }
        // Files changed within the last moments are not cached (racily clean); wait them out.
        std::thread::sleep(std::time::Duration::from_millis(250));
        let cache_dir = dir.path().join("cache");
        let options = FindOptions {
            cache: Some(CacheOptions { dir: cache_dir.clone(), verify: false }),
            ..FindOptions::default()
        };
        let roots = [dir.path().to_owned()];
        let run = find_run(&roots, &options, &(), &Progress::default());
        assert_eq!(run.report.groups.len(), 4);
        let Ok(Opened::Ready { cache, .. }) = Cache::open(&cache_dir) else { panic!("no cache") };
        for (name, bytes) in &files {
            let fingerprint = if bytes.len() > 64 * 1024 {
                let kind = FingerprintKind::Head { len: 4096 };
                Fingerprint { kind, value: xxh3_64(&bytes[..4096]) }
            } else {
                Fingerprint { kind: FingerprintKind::Whole, value: xxh3_64(bytes) }
            };
            let digest = Some(*blake3::hash(bytes).as_bytes());
            // "c" (told apart by its samples), "d" (apart in its third chunk, read no further)
            // and "s3" (small, without a copy) need no digest.
            let digest = if ["c", "d", "s3"].contains(name) { None } else { digest };
            let expected = Lookup::Valid(Entry { fingerprint: Some(fingerprint), digest });
            assert_eq!(cache.lookup(&meta(&dir.path().join(name))), expected, "{name}");
        }
    }
}
