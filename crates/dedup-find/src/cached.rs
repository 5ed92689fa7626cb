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

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_cache::{Cache, Entry, Lookup, Opened, Update};
use dedup_core::{Observer, Problem, ProblemKind};
use dedup_scan::Tree;

use crate::candidates::{Class, Inode};

/// A file the exact stage read, with what the cache may keep of it.
pub(crate) type Learned = (Inode, Entry);

/// Files whose ctime is this close to the start of the run (or later) are not cached.
pub(crate) const RACY_NS: i64 = 100_000_000;

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

    /// Look every candidate up; returns the classes still to read and the groups that rest on
    /// cached entries alone.
    pub fn shortcut(
        &mut self,
        classes: Vec<Class>,
        tree: &Tree,
        hardlinks: bool,
    ) -> (Vec<Class>, Vec<Class>) {
        let mut to_read = Vec::with_capacity(classes.len());
        let mut groups = Vec::new();
        for class in classes {
            let mut known: Vec<(Entry, Inode)> = Vec::new();
            let mut unknown = Vec::new();
            for &inode in &class.inodes {
                let meta = inode.meta(tree);
                self.update.lookups += 1;
                match self.cache.lookup(meta) {
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
            // With every member known, members of different fingerprints differ and those of
            // equal digests are equal: only a fingerprint shared without digests needs a read.
            // A member not known could equal any other, so then every known content is read
            // once, by a representative.
            let alone = unknown.is_empty();
            known.sort_unstable_by_key(|&(e, inode)| (e.fingerprint, e.digest, inode.first()));
            for same_start in known.chunk_by(|a, b| a.0.fingerprint == b.0.fingerprint) {
                let settled =
                    same_start.len() == 1 || same_start.iter().all(|e| e.0.digest.is_some());
                if alone && settled {
                    for same in same_start.chunk_by(|a, b| a.0.digest == b.0.digest) {
                        let inodes: Vec<Inode> = same.iter().map(|&(_, inode)| inode).collect();
                        // One file with several names (-H) is a group without any digest.
                        let cached = inodes.len() > 1;
                        let group = Class { size, inodes, cached };
                        if group.is_group(hardlinks) {
                            groups.push(group);
                        }
                    }
                    continue;
                }
                let mut reps = Vec::new();
                for same in
                    same_start.chunk_by(|a, b| a.0.digest.is_some() && a.0.digest == b.0.digest)
                {
                    let inodes: Vec<Inode> = same.iter().map(|&(_, inode)| inode).collect();
                    reps.push(inodes[0]);
                    if inodes.len() > 1 {
                        self.followers.insert(inodes[0].first(), (inodes[0], inodes[1..].to_vec()));
                    }
                }
                if alone {
                    reps.sort_unstable_by_key(|i| i.first());
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
        (to_read, groups)
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
    pub fn save(mut self, tree: &Tree, learned: Vec<Learned>, observer: &dyn Observer) -> CacheUse {
        for (inode, digest) in learned {
            let meta = *inode.meta(tree);
            if meta.ctime_ns > self.started_ns - RACY_NS {
                continue;
            }
            let node = tree.files[inode.first()].node;
            self.update.learn(meta, digest, |out| tree.arena.write_path(node, out));
        }
        let (lookups, hits) = (self.update.lookups, self.update.hits);
        if let Err(e) = self.cache.save(std::mem::take(&mut self.update)) {
            let what = format!("cannot write the cache ({e}); it keeps its previous contents");
            observer.problem(Problem::warning(self.dir.clone(), ProblemKind::Cache(what)));
        }
        CacheUse { lookups, hits, cached_groups: 0, entries: self.cache.len() as u64 }
    }
}
