//! The persistent content cache in a scan: files whose cached digest is still valid need not be
//! read. Within a size class, members with valid entries are gathered by digest; a class made
//! only of such members becomes its groups at once (equal digests), and any other class is read
//! as usual with one representative per digest standing for the members that share it, which
//! join the representative's group afterwards. Groups formed so are marked `cached` in the
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

use dedup_cache::{Cache, Digest, Lookup, Opened, Update};
use dedup_core::{Observer, Problem, ProblemKind};
use dedup_scan::Tree;

use crate::candidates::{Class, Inode};

/// A file read whole by the exact stage, with its BLAKE3 digest.
pub(crate) type Learned = (Inode, Digest);

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
    /// cached digests alone.
    pub fn shortcut(
        &mut self,
        classes: Vec<Class>,
        tree: &Tree,
        hardlinks: bool,
    ) -> (Vec<Class>, Vec<Class>) {
        let mut to_read = Vec::with_capacity(classes.len());
        let mut groups = Vec::new();
        for class in classes {
            let mut known: Vec<(Digest, Inode)> = Vec::new();
            let mut unknown = Vec::new();
            for &inode in &class.inodes {
                let meta = inode.meta(tree);
                self.update.lookups += 1;
                match self.cache.lookup(meta) {
                    Lookup::Valid(digest) => {
                        self.update.hits += 1;
                        known.push((digest, inode));
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
            known.sort_unstable_by_key(|&(digest, inode)| (digest, inode.first()));
            let alone = unknown.is_empty();
            for same in known.chunk_by(|a, b| a.0 == b.0) {
                let inodes: Vec<Inode> = same.iter().map(|&(_, inode)| inode).collect();
                if alone {
                    // One file with several names (-H) is a group without any digest.
                    let cached = inodes.len() > 1;
                    let group = Class { size: class.size, inodes, cached };
                    if group.is_group(hardlinks) {
                        groups.push(group);
                    }
                } else {
                    unknown.push(inodes[0]);
                    if inodes.len() > 1 {
                        self.followers.insert(inodes[0].first(), (inodes[0], inodes[1..].to_vec()));
                    }
                }
            }
            if !alone {
                unknown.sort_unstable_by_key(|i| i.first());
                to_read.push(Class { size: class.size, inodes: unknown, cached: false });
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
        let mut path = Vec::new();
        for (inode, digest) in learned {
            let meta = *inode.meta(tree);
            if meta.ctime_ns > self.started_ns - RACY_NS {
                continue;
            }
            path.clear();
            tree.arena.write_path(tree.files[inode.first()].node, &mut path);
            self.update.learned.push((meta, digest, path.clone()));
        }
        let (lookups, hits) = (self.update.lookups, self.update.hits);
        if let Err(e) = self.cache.save(std::mem::take(&mut self.update)) {
            let what = format!("cannot write the cache ({e}); it keeps its previous contents");
            observer.problem(Problem::warning(self.dir.clone(), ProblemKind::Cache(what)));
        }
        CacheUse { lookups, hits, cached_groups: 0, entries: self.cache.len() as u64 }
    }
}
