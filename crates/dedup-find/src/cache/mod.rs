//! The persistent content cache in a scan: files whose cached entry is still valid need not be
//! read. An entry holds a fingerprint of the file's first chunk, which can tell files apart, and
//! for content that had a copy the BLAKE3 digest of all of it, which can tell them equal. In a
//! size class made only of such members, members apart by fingerprint are settled, and so are
//! members that share a fingerprint but all have digests (grouped by digest); the rest is read
//! as usual with one representative per digest standing for the members that share it, which
//! join the representative's group afterwards. A class with a member not known is read the same
//! way, whole. Groups formed so are marked `cached` in the
//! report; `--verify` skips the shortcut (everything is compared byte for byte) but still
//! refreshes the cache.
//!
//! When the run ends, the digests the exact stage computed are merged into the cache and the
//! cache is written once. A file whose ctime is within [`RACY_NS`] of the start of the run is
//! not stored: timestamps advance in coarse ticks, and a write in the same tick as the one we
//! recorded would leave its times unchanged (git's "racily clean" problem).

pub(crate) mod fingerprint;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_cache::{Cache, Entry, Fingerprint, FingerprintKind, Lookup, Opened, Update};
use dedup_core::{FileId, FileMeta, Observer, Problem, ProblemKind};
use dedup_scan::{NodeId, PathWriter};

use crate::tree::Tree;
use rayon::prelude::*;

use crate::stages::candidates::{Class, Inode};

use crate::stages::reading::Reading;
use crate::tuning::Tuning;
use crate::PARALLEL_FROM;
use fingerprint::kind_for;

/// A file the exact stage read, with what the cache may keep of it.
pub(crate) type Learned = (Inode, Entry);

/// Files whose ctime is this close to the start of the run (or later) are not cached.
pub(crate) const RACY_NS: i64 = 100_000_000;

/// Cached files of one fingerprint, all with digests, and the new files that share it.
struct Digesting {
    size: u64,
    known: Vec<(Entry, Inode)>,
    new: Vec<Inode>,
}

/// A size class with files the cache knows, all fingerprinted the way this run would, and new
/// files.
pub(crate) struct Mixed {
    size: u64,
    kind: FingerprintKind,
    /// Sorted by entry.
    known: Vec<(Entry, Inode)>,
    unknown: Vec<Inode>,
}

/// Where the cache lives and how far to trust it.
#[derive(Debug, Clone)]
pub struct CacheOptions {
    /// The cache directory.
    pub dir: PathBuf,
    /// Compare files with matching cached digests byte for byte anyway.
    pub verify: bool,
}

/// What the cache did in a run (for the summary and `-v`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// Candidate files (sharing a size with another file) looked up.
    pub lookups: u64,
    /// Of those, files with a valid entry.
    pub hits: u64,
    /// Of those, files the cache settled: not read at all.
    pub unread: u64,
    /// Groups that rest on cached digests.
    pub cached_groups: u64,
    /// Entries in the cache after the run.
    pub entries: u64,
}

/// The cache during one run.
pub(crate) struct CacheRun {
    cache: Cache,
    verify: bool,
    dir: PathBuf,
    started_ns: i64,
    update: Update,
    /// Files settled by the cache alone.
    unread: u64,
    /// Fingerprints taken of new files by [`resolve`](Self::resolve).
    fingerprinted: Vec<Learned>,
    /// Per representative (its first entry index): itself and the members sharing its digest.
    followers: HashMap<usize, (Inode, Vec<Inode>)>,
}

impl CacheRun {
    /// Lock and load the cache; `None` (with a warning) when it cannot be used.
    pub fn open(options: &CacheOptions, observer: &dyn Observer) -> Option<CacheRun> {
        let warn = |path: PathBuf, what: String| {
            observer.problem(Problem::warning(path, ProblemKind::Cache(what)));
        };
        let started_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        match Cache::open(&options.dir) {
            Ok(Opened::Ready { cache, damaged }) => {
                if let Some(aside) = damaged {
                    let what = format!(
                        "cache file unusable ({}); moved aside, the cache is rebuilt",
                        aside.reason
                    );
                    warn(aside.moved_to, what);
                }
                Some(CacheRun {
                    cache,
                    verify: options.verify,
                    dir: options.dir.clone(),
                    started_ns,
                    update: Update::default(),
                    unread: 0,
                    fingerprinted: Vec::new(),
                    followers: HashMap::new(),
                })
            }
            Ok(Opened::Busy) => {
                let what = "cache in use by another dedup process; this run works without it";
                warn(options.dir.clone(), what.to_owned());
                None
            }
            Err(e) => {
                warn(
                    options.dir.clone(),
                    format!("cannot use the cache ({e}); working without it"),
                );
                None
            }
        }
    }

    /// Look every candidate up; returns the classes still to read, the groups that rest on
    /// cached entries alone, and the classes of known and new files to [`resolve`](Self::resolve).
    pub fn shortcut(
        &mut self,
        classes: Vec<Class>,
        tree: &Tree,
        hardlinks: bool,
        tuning: Tuning,
    ) -> (Vec<Class>, Vec<Class>, Vec<Mixed>) {
        let mut mixed = Vec::new();
        let mut to_read = Vec::with_capacity(classes.len());
        let mut groups = Vec::new();
        let metas: Vec<FileMeta> =
            classes.iter().flat_map(|c| c.inodes.iter().map(|i| *i.meta(tree))).collect();
        let mut answers = self.cache.lookup_all(&metas).into_iter();
        for class in classes {
            let mut known: Vec<(Entry, Inode)> = Vec::new();
            let mut unknown = Vec::new();
            for &inode in &class.inodes {
                let meta = inode.meta(tree);
                self.update.lookups += 1;
                match answers.next().expect("one answer per file looked up") {
                    Lookup::Valid(entry) => {
                        self.update.hits += 1;
                        known.push((entry, inode));
                    }
                    Lookup::Stale => {
                        self.update.stale.push(meta.id);
                        unknown.push(inode);
                    }
                    Lookup::Missing => unknown.push(inode),
                }
            }
            if self.verify || known.is_empty() {
                to_read.push(class);
                continue;
            }
            let size = class.size;
            let alone = unknown.is_empty();
            known.sort_unstable_by_key(|&(e, inode)| (e, inode.first()));
            // Fingerprints tell members apart only when all were taken the same way.
            let kind = known[0].0.fingerprint.map(|f| f.kind);
            let comparable =
                kind.is_some() && known.iter().all(|e| e.0.fingerprint.map(|f| f.kind) == kind);
            if !alone && comparable && kind == kind_for(size, tuning) {
                let kind = kind.expect("comparable");
                mixed.push(Mixed { size, kind, known, unknown });
                continue;
            }
            let buckets: Vec<&[(Entry, Inode)]> = if comparable {
                known.chunk_by(|a, b| a.0.fingerprint == b.0.fingerprint).collect()
            } else {
                vec![&known[..]]
            };
            for bucket in buckets {
                let settled = bucket.len() == 1 || bucket.iter().all(|e| e.0.digest.is_some());
                if alone && settled {
                    self.settle(bucket, size, hardlinks, &mut groups);
                    continue;
                }
                let reps = self.representatives(bucket);
                if alone {
                    to_read.push(Class { size, inodes: reps, cached: false });
                } else {
                    unknown.extend(reps);
                }
            }
            if !alone {
                unknown.sort_unstable_by_key(|i| i.first());
                to_read.push(Class { size, inodes: unknown, cached: false });
            }
        }
        (to_read, groups, mixed)
    }

    /// Settle classes of known and new files: the new files' fingerprints are taken first (in
    /// parallel); a known file whose fingerprint no new file shares is apart from all of them
    /// and settled as in a class of known files only, and a new file whose fingerprint nobody
    /// shares is unique. New files sharing a fingerprint with known files that all have digests
    /// are read once each for their own digest ([`Self::join_by_digest`]); files sharing a
    /// fingerprint with a new file are otherwise left to read. Returns the classes to read and
    /// the groups settled.
    pub fn resolve(
        &mut self,
        mut mixed: Vec<Mixed>,
        ctx: &Reading,
        hardlinks: bool,
    ) -> (Vec<Class>, Vec<Class>) {
        let unknown = mixed.iter_mut().map(|m| std::mem::take(&mut m.unknown)).collect();
        let taken = ctx.keyed_sets(unknown, &|set, inode| {
            fingerprint::take(inode, mixed[set].size, mixed[set].kind, ctx)
        });
        let (mut to_read, mut groups) = (Vec::new(), Vec::new());
        let mut to_digest = Vec::new();
        for (Mixed { size, known, .. }, mut new) in mixed.into_iter().zip(taken) {
            new.sort_unstable_by_key(|&(f, inode)| (f, inode.first()));
            for &(f, inode) in &new {
                self.fingerprinted.push((inode, Entry { fingerprint: Some(f), digest: None }));
            }
            let new_with = |f: Fingerprint| {
                let from = new.partition_point(|n| n.0 < f);
                new[from..].iter().take_while(move |n| n.0 == f).map(|n| n.1)
            };
            // Known files, by fingerprint (they are sorted by entry, fingerprint first).
            for bucket in known.chunk_by(|a, b| a.0.fingerprint == b.0.fingerprint) {
                let f = bucket[0].0.fingerprint.expect("comparable entries have fingerprints");
                let mut inodes: Vec<Inode> = new_with(f).collect();
                let settled = bucket.len() == 1 || bucket.iter().all(|e| e.0.digest.is_some());
                if inodes.is_empty() && settled {
                    self.settle(bucket, size, hardlinks, &mut groups);
                    continue;
                }
                if bucket.iter().all(|e| e.0.digest.is_some()) {
                    // Every content here is known by digest: the new files' own suffice.
                    to_digest.push(Digesting { size, known: bucket.to_vec(), new: inodes });
                    continue;
                }
                inodes.extend(self.representatives(bucket));
                inodes.sort_unstable_by_key(|i| i.first());
                to_read.push(Class { size, inodes, cached: false });
            }
            // New files whose fingerprint no known file has.
            for same in new.chunk_by(|a, b| a.0 == b.0) {
                let f = Some(same[0].0);
                if known.binary_search_by(|(e, _)| e.fingerprint.cmp(&f)).is_ok() {
                    continue;
                }
                let inodes = same.iter().map(|n| n.1).collect();
                compare_new(
                    Class { size, inodes, cached: false },
                    hardlinks,
                    &mut to_read,
                    &mut groups,
                );
            }
        }
        self.join_by_digest(to_digest, ctx, hardlinks, &mut to_read, &mut groups);
        (to_read, groups)
    }

    /// New files whose fingerprint only files with digests share: each is read once for its
    /// digest, and joins the cached files of the same digest (a group that rests on cached
    /// digests, as theirs did). New files of a digest no cached file has are compared with each
    /// other byte for byte, or are unique.
    fn join_by_digest(
        &mut self,
        mut sets: Vec<Digesting>,
        ctx: &Reading,
        hardlinks: bool,
        to_read: &mut Vec<Class>,
        groups: &mut Vec<Class>,
    ) {
        let new = sets.iter_mut().map(|d| std::mem::take(&mut d.new)).collect();
        let digested = ctx.keyed_sets(new, &|_, inode| ctx.digest(inode));
        for (Digesting { size, mut known, .. }, mut new) in sets.into_iter().zip(digested) {
            for &(d, inode) in &new {
                self.fingerprinted.push((inode, Entry { fingerprint: None, digest: Some(d) }));
            }
            self.unread += known.len() as u64;
            let fingerprint = known[0].0.fingerprint;
            let (joining, mut apart): (Vec<_>, Vec<_>) =
                new.drain(..).partition(|(d, _)| known.iter().any(|k| k.0.digest == Some(*d)));
            known.extend(
                joining
                    .into_iter()
                    .map(|(d, inode)| (Entry { fingerprint, digest: Some(d) }, inode)),
            );
            group_by_digest(&known, size, hardlinks, groups);
            apart.sort_unstable_by_key(|&(d, inode)| (d, inode.first()));
            for same in apart.chunk_by(|a, b| a.0 == b.0) {
                let inodes = same.iter().map(|n| n.1).collect();
                compare_new(Class { size, inodes, cached: false }, hardlinks, to_read, groups);
            }
        }
    }

    /// Members of a class whose contents the cache settles: those of equal digests form groups.
    fn settle(
        &mut self,
        members: &[(Entry, Inode)],
        size: u64,
        hardlinks: bool,
        groups: &mut Vec<Class>,
    ) {
        self.unread += members.len() as u64;
        group_by_digest(members, size, hardlinks, groups);
    }

    /// One member per digest (and every member without one) to be read, the others following
    /// their representative; sorted as the walk sorted them.
    fn representatives(&mut self, members: &[(Entry, Inode)]) -> Vec<Inode> {
        let mut reps = Vec::new();
        let mut by_digest: Vec<&(Entry, Inode)> = members.iter().collect();
        by_digest.sort_unstable_by_key(|(e, inode)| (e.digest, inode.first()));
        for same in by_digest.chunk_by(|a, b| a.0.digest.is_some() && a.0.digest == b.0.digest) {
            let inodes: Vec<Inode> = same.iter().map(|&&(_, inode)| inode).collect();
            reps.push(inodes[0]);
            if inodes.len() > 1 {
                self.followers.insert(inodes[0].first(), (inodes[0], inodes[1..].to_vec()));
            }
        }
        reps.sort_unstable_by_key(|i| i.first());
        reps
    }

    /// Members sharing a representative's digest join its group; a representative that ended
    /// in no group still forms one with them.
    pub fn expand(&mut self, groups: &mut Vec<Class>, size_of: impl Fn(Inode) -> u64) {
        for group in groups.iter_mut() {
            let mut joined = Vec::new();
            for inode in &group.inodes {
                if let Some((_, followers)) = self.followers.remove(&inode.first()) {
                    joined.extend(followers);
                }
            }
            if !joined.is_empty() {
                group.inodes.extend(joined);
                group.inodes.sort_unstable_by_key(|i| i.first());
                group.cached = true;
            }
        }
        for (_, (rep, followers)) in self.followers.drain() {
            let mut inodes = vec![rep];
            inodes.extend(followers);
            inodes.sort_unstable_by_key(|i| i.first());
            groups.push(Class { size: size_of(rep), inodes, cached: true });
        }
    }

    /// Merge what the run learned and write the cache; returns what the cache did.
    pub fn save(
        mut self,
        tree: &Tree,
        mut learned: Vec<Learned>,
        observer: &dyn Observer,
    ) -> CacheUse {
        // A file fingerprinted or sampled, then compared, is learned more than once: keep what
        // each stage found.
        learned.append(&mut self.fingerprinted);
        if learned.len() < PARALLEL_FROM {
            learned.sort_by_key(|(inode, _)| inode.first());
        } else {
            learned.par_sort_by_key(|(inode, _)| inode.first());
        }
        let mut merged = Vec::with_capacity(learned.len());
        for same in learned.chunk_by(|a, b| a.0.first() == b.0.first()) {
            let inode = same[0].0;
            let entry =
                same.iter().fold(Entry { fingerprint: None, digest: None }, |acc, l| Entry {
                    fingerprint: acc.fingerprint.or(l.1.fingerprint),
                    digest: acc.digest.or(l.1.digest),
                });
            let meta = *inode.meta(tree);
            if meta.ctime_ns <= self.started_ns - RACY_NS {
                merged.push((meta, entry, tree.files[inode.first()].node));
            }
        }
        // The cache wants the entries in the order of its key, paths are cheapest to write in
        // the order of the tree's nodes: both orders are found at once, as lists of indices.
        let (by_key, (names, ranges)) = if merged.len() < PARALLEL_FROM {
            (order_by_key(&merged), write_paths(&merged, tree))
        } else {
            rayon::join(|| order_by_key(&merged), || write_paths(&merged, tree))
        };
        let files = by_key.iter().map(|&(_, i)| {
            let (meta, entry, _) = merged[i as usize];
            (meta, entry, ranges[i as usize])
        });
        self.update.learn_many(files.collect(), names);
        let (lookups, hits) = (self.update.lookups, self.update.hits);
        if let Err(e) = self.cache.save(std::mem::take(&mut self.update)) {
            let what = format!("cannot write the cache ({e}); it keeps its previous contents");
            observer.problem(Problem::warning(self.dir.clone(), ProblemKind::Cache(what)));
        }
        let (unread, entries) = (self.unread, self.cache.len() as u64);
        CacheUse { lookups, hits, unread, cached_groups: 0, entries }
    }
}

/// Indices of `files` in the order of the cache's key.
fn order_by_key(files: &[(FileMeta, Entry, NodeId)]) -> Vec<(FileId, u32)> {
    let mut order: Vec<(FileId, u32)> =
        files.iter().enumerate().map(|(i, (meta, _, _))| (meta.id, i as u32)).collect();
    order.sort_unstable();
    order
}

/// The paths of `files`, end to end, and where each one's path lies. They are written in the
/// order of the tree's nodes, where the files of one directory are side by side and share its
/// path.
fn write_paths(files: &[(FileMeta, Entry, NodeId)], tree: &Tree) -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut by_node: Vec<(NodeId, u32)> =
        files.iter().enumerate().map(|(i, &(_, _, node))| (node, i as u32)).collect();
    by_node.sort_unstable();
    let (mut names, mut ranges) = (Vec::new(), vec![(0, 0); files.len()]);
    let mut writer = PathWriter::new(&tree.arena);
    for (node, i) in by_node {
        let start = names.len();
        writer.write(node, &mut names);
        ranges[i as usize] = (start, names.len());
    }
    (names, ranges)
}

/// New files alike as far as the cache can tell: several are compared with each other, one is
/// unique (or, with -H, a group of its own names).
fn compare_new(class: Class, hardlinks: bool, to_read: &mut Vec<Class>, groups: &mut Vec<Class>) {
    if class.inodes.len() > 1 {
        to_read.push(class);
    } else if class.is_group(hardlinks) {
        groups.push(class);
    }
}

/// Members of one size: those of equal digests form groups (marked as resting on cached
/// digests); members without a digest stand alone.
fn group_by_digest(
    members: &[(Entry, Inode)],
    size: u64,
    hardlinks: bool,
    groups: &mut Vec<Class>,
) {
    let mut by_digest: Vec<&(Entry, Inode)> = members.iter().collect();
    by_digest.sort_unstable_by_key(|(e, inode)| (e.digest, inode.first()));
    // Files without a digest stand alone.
    for same in by_digest.chunk_by(|a, b| a.0.digest.is_some() && a.0.digest == b.0.digest) {
        let inodes: Vec<Inode> = same.iter().map(|&&(_, inode)| inode).collect();
        // One file with several names (-H) is a group without any digest.
        let cached = inodes.len() > 1;
        let group = Class { size, inodes, cached };
        if group.is_group(hardlinks) {
            groups.push(group);
        }
    }
}
