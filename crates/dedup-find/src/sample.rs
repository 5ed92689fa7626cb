//! The sample stage: a head block and a tail block of each large candidate, hashed, split classes
//! cheaply before any full read. Files that differ usually differ in their first or last bytes
//! (headers, trailers, indexes). Small files skip this stage: one whole read costs about what two
//! sample reads cost, so reading twice would only add requests.

use dedup_cache::{Entry, Fingerprint};
use dedup_core::Stage;
use rayon::prelude::*;

use crate::cached::Learned;
use crate::candidates::{Class, Inode};
use crate::fingerprint::{kind_for, samples_hash};
use crate::reading::Reading;

/// Sizes of the sample stage, chosen by measurement (docs/BENCHMARKS.md); settable for
/// benchmarks only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Files up to this size skip sampling and are read whole, in one request.
    pub whole_read_max: u64,
    /// Bytes read at each end of a sampled file.
    pub sample_len: u64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning { whole_read_max: 64 * 1024, sample_len: 4096 }
    }
}

impl Tuning {
    /// A sample must fit twice into the smallest sampled file.
    pub(crate) fn sample_len(&self) -> u64 {
        self.sample_len.clamp(1, (self.whole_read_max / 2).max(1))
    }

    /// True when the members of a class of `size` are sampled before any full read.
    pub(crate) fn samples(&self, size: u64) -> bool {
        size > self.whole_read_max.max(2)
    }
}

/// Split every class by the samples of its members; classes of small files pass unchanged.
/// With `learn`, also returns each sampled file's fingerprint for the cache.
pub(crate) fn split_by_samples(
    classes: Vec<Class>,
    ctx: &Reading,
    hardlinks: bool,
    tuning: Tuning,
    learn: bool,
) -> (Vec<Class>, Vec<Learned>) {
    let to_sample: u64 =
        classes.iter().filter(|c| needs_sampling(c, tuning)).map(|c| c.inodes.len() as u64).sum();
    ctx.progress.start_stage(Stage::Sampling, to_sample);
    let split: Vec<(Vec<Class>, Vec<Learned>)> = classes
        .into_par_iter()
        .map(|class| {
            if needs_sampling(&class, tuning) {
                split_class(class, ctx, hardlinks, tuning, learn)
            } else {
                (vec![class], Vec::new())
            }
        })
        .collect();
    let mut classes = Vec::with_capacity(split.len());
    let mut learned = Vec::new();
    for (c, l) in split {
        classes.extend(c);
        learned.extend(l);
    }
    (classes, learned)
}

fn needs_sampling(class: &Class, tuning: Tuning) -> bool {
    tuning.samples(class.size) && class.inodes.len() >= 2
}

fn split_class(
    class: Class,
    ctx: &Reading,
    hardlinks: bool,
    tuning: Tuning,
    learn: bool,
) -> (Vec<Class>, Vec<Learned>) {
    let sample_len = tuning.sample_len();
    let size = class.size;
    let mut keyed: Vec<(u128, Inode)> = class
        .inodes
        .into_par_iter()
        .filter_map(|inode| {
            let key = samples_hash(&inode, size, sample_len, ctx);
            ctx.progress.done(1);
            key.map(|k| (k, inode))
        })
        .collect();
    // Entries are sorted by (dev, ino), so `first` orders members as the walk's sort did.
    keyed.sort_unstable_by_key(|(key, inode)| (*key, inode.first()));
    let learned = match kind_for(size, tuning) {
        Some(kind) if learn => keyed
            .iter()
            .map(|&(key, inode)| {
                let fingerprint = Some(Fingerprint { kind, value: key as u64 });
                (inode, Entry { fingerprint, digest: None })
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    let mut rest = keyed.into_iter().peekable();
    while let Some((key, first)) = rest.next() {
        let mut inodes = vec![first];
        while let Some((_, inode)) = rest.next_if(|(k, _)| *k == key) {
            inodes.push(inode);
        }
        let class = Class { size, inodes, cached: false };
        if class.is_group(hardlinks) {
            out.push(class);
        }
    }
    (out, learned)
}
