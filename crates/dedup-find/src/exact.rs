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
//! With the content cache on, each member's chunks also feed a BLAKE3 hasher as they are
//! compared, so every file read whole comes out with its digest for the cache at no extra I/O.

use std::collections::HashMap;
use std::fs::File;
use std::num::NonZeroU64;

use dedup_core::Stage;
use rayon::prelude::*;
use rustix::fs::{fadvise, Advice};
use xxhash_rust::xxh3::xxh3_64;

use crate::cached::Learned;
use crate::candidates::{Class, Inode};
use crate::reading::Reading;

/// First chunk size; chunks then double while a class stays equal, up to `MAX_CHUNK`.
const FIRST_CHUNK: u64 = 1 << 20;
const MAX_CHUNK: u64 = 4 << 20;
/// Bytes of representative chunks one class may hold at once.
const REP_BUDGET: u64 = 8 << 20;
/// Classes of files larger than one chunk hold chunk-sized buffers for their whole comparison,
/// so at most this many are compared at once; a few multi-MiB reads in flight keep any device
/// busy, and memory stays bounded however many reader threads small files get.
const LARGE_CLASSES_AT_ONCE: usize = 8;
/// Classes with more members than this reopen each file per chunk instead of holding it open.
const KEEP_OPEN_MAX: usize = 64;

/// Compare the classes in full; returns the groups of identical files, and (when `hash`) the
/// BLAKE3 digest of every file read whole.
pub(crate) fn compare_classes(
    classes: Vec<Class>,
    ctx: &Reading,
    hardlinks: bool,
    hash: bool,
) -> Result<(Vec<Class>, Vec<Learned>), rayon::ThreadPoolBuildError> {
    let total = classes.iter().map(|c| c.inodes.len() as u64).sum();
    ctx.progress.start_stage(Stage::Comparing, total);
    let (large, small): (Vec<Class>, Vec<Class>) =
        classes.into_iter().partition(|c| c.size > FIRST_CHUNK);
    let compare = |classes: Vec<Class>| -> (Vec<Class>, Vec<Learned>) {
        classes
            .into_par_iter()
            .map(|class| Comparer { ctx, hardlinks, hash, size: class.size }.run(class))
            .reduce(Default::default, |mut a, b| {
                a.0.extend(b.0);
                a.1.extend(b.1);
                a
            })
    };
    let (mut groups, mut learned) = compare(small);
    let large_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(LARGE_CLASSES_AT_ONCE.min(rayon::current_num_threads()))
        .thread_name(|i| format!("dedup-large-{i}"))
        .build()?;
    let (large_groups, large_learned) = large_pool.install(|| compare(large));
    groups.extend(large_groups);
    learned.extend(large_learned);
    Ok((groups, learned))
}

struct Member {
    inode: Inode,
    file: Option<File>,
    /// The digest of the bytes compared so far (with the cache on).
    hasher: Option<Box<blake3::Hasher>>,
}

impl Member {
    /// Count a chunk into the digest: called once per offset, when the chunk is compared.
    fn hash(&mut self, chunk: &[u8]) {
        if let Some(hasher) = &mut self.hasher {
            hasher.update(chunk);
        }
    }

    /// The digest of a member read to its end.
    fn learned(&self) -> Option<Learned> {
        self.hasher.as_ref().map(|h| (self.inode, *h.finalize().as_bytes()))
    }
}

/// Members known equal over `[0, offset)`.
struct Pending {
    members: Vec<Member>,
    offset: u64,
    chunk: u64,
}

struct Rep {
    bytes: Vec<u8>,
    members: Vec<Member>,
}

struct Comparer<'a> {
    ctx: &'a Reading<'a>,
    hardlinks: bool,
    hash: bool,
    size: u64,
}

impl Comparer<'_> {
    fn run(&self, class: Class) -> (Vec<Class>, Vec<Learned>) {
        let keep_open = class.inodes.len() <= KEEP_OPEN_MAX && self.size > FIRST_CHUNK;
        let hasher = || self.hash.then(|| Box::new(blake3::Hasher::new()));
        let members =
            class.inodes.into_iter().map(|inode| Member { inode, file: None, hasher: hasher() });
        let mut work = vec![Pending { members: members.collect(), offset: 0, chunk: FIRST_CHUNK }];
        let mut groups = Vec::new();
        let mut learned = Vec::new();
        let mut scratch = Vec::new();
        while let Some(pending) = work.pop() {
            if pending.offset >= self.size {
                learned.extend(pending.members.iter().filter_map(Member::learned));
            }
            if pending.members.len() < 2 {
                self.finish_alone(pending.members, &mut groups);
            } else if pending.offset >= self.size {
                self.ctx.progress.done(pending.members.len() as u64);
                let inodes = pending.members.into_iter().map(|m| m.inode).collect();
                groups.push(Class { size: self.size, inodes, cached: false });
            } else {
                self.step(pending, keep_open, &mut scratch, &mut work);
            }
        }
        (groups, learned)
    }

    /// A member left without partners is unique, unless it is one file with several names and
    /// hard links count as duplicates.
    fn finish_alone(&self, members: Vec<Member>, groups: &mut Vec<Class>) {
        self.ctx.progress.done(members.len() as u64);
        let class = Class {
            size: self.size,
            inodes: members.into_iter().map(|m| m.inode).collect(),
            cached: false,
        };
        if !class.inodes.is_empty() && class.is_group(self.hardlinks) {
            groups.push(class);
        }
    }

    /// Read one chunk of every member and split them by its bytes.
    fn step(
        &self,
        pending: Pending,
        keep_open: bool,
        scratch: &mut Vec<u8>,
        work: &mut Vec<Pending>,
    ) {
        let offset = pending.offset;
        let len = pending.chunk.min(self.size - offset);
        let rep_limit = (REP_BUDGET / len).max(1) as usize;
        // Sized up front: classes of small files can hold many thousands of members, and growing
        // the index from empty rehashed it again and again (3 % of a 1M-file run).
        let expected_reps = pending.members.len().min(rep_limit);
        let mut reps: Vec<Rep> = Vec::with_capacity(expected_reps);
        let mut reps_by_hash: HashMap<u64, Vec<usize>> = HashMap::with_capacity(expected_reps);
        let mut set_aside: HashMap<u64, Vec<Member>> = HashMap::new();
        for mut member in pending.members {
            if !self.read_chunk(&mut member, offset, len, keep_open, scratch) {
                self.ctx.progress.done(1);
                continue;
            }
            let hash = xxh3_64(scratch);
            let same_hash = reps_by_hash.entry(hash).or_default();
            if let Some(&r) = same_hash.iter().find(|&&r| reps[r].bytes == *scratch) {
                member.hash(scratch);
                reps[r].members.push(member);
            } else if reps.len() < rep_limit {
                member.hash(scratch);
                same_hash.push(reps.len());
                reps.push(Rep { bytes: std::mem::take(scratch), members: vec![member] });
            } else {
                set_aside.entry(hash).or_default().push(member);
            }
        }
        let next_chunk = (pending.chunk * 2).min(MAX_CHUNK);
        for rep in reps {
            work.push(Pending { members: rep.members, offset: offset + len, chunk: next_chunk });
        }
        for members in set_aside.into_values() {
            work.push(Pending { members, offset, chunk: pending.chunk });
        }
    }

    /// Read `[offset, offset + len)` of a member into `buf`; on the last chunk also check that the
    /// file did not change while it was read. False when the member drops out.
    fn read_chunk(
        &self,
        member: &mut Member,
        offset: u64,
        len: u64,
        keep_open: bool,
        buf: &mut Vec<u8>,
    ) -> bool {
        let ctx = self.ctx;
        if member.file.is_none() {
            member.file = ctx.open(&member.inode);
            if let (Some(file), true) = (&member.file, keep_open) {
                // Tell the kernel to read ahead aggressively: this file is read start to end.
                let _ = fadvise(file, 0, NonZeroU64::new(self.size), Advice::Sequential);
            }
        }
        let Some(file) = &member.file else { return false };
        buf.resize(len as usize, 0);
        let mut ok = ctx.read_at(&member.inode, file, buf, offset).is_some();
        if ok && offset + len == self.size {
            ok = ctx.unchanged_after_read(&member.inode, file);
        }
        if !ok || !keep_open || offset + len == self.size {
            member.file = None;
        }
        ok
    }
}
