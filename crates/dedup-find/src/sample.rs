//! The sample stage: a head block and a tail block of each large candidate, hashed, split classes
//! cheaply before any full read. Files that differ usually differ in their first or last bytes
//! (headers, trailers, indexes). Small files skip this stage: one whole read costs about what two
//! sample reads cost, so reading twice would only add requests.

use dedup_core::Stage;
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use crate::candidates::{Class, Inode};
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
    fn sample_len(&self) -> u64 {
        self.sample_len.clamp(1, (self.whole_read_max / 2).max(1))
    }
}

/// Split every class by the samples of its members; classes of small files pass unchanged.
pub(crate) fn split_by_samples(
    classes: Vec<Class>,
    ctx: &Reading,
    hardlinks: bool,
    tuning: Tuning,
) -> Vec<Class> {
    let to_sample: u64 =
        classes.iter().filter(|c| needs_sampling(c, tuning)).map(|c| c.inodes.len() as u64).sum();
    ctx.progress.start_stage(Stage::Sampling, to_sample);
    classes
        .into_par_iter()
        .flat_map_iter(|class| {
            if needs_sampling(&class, tuning) {
                split_class(class, ctx, hardlinks, tuning.sample_len())
            } else {
                vec![class]
            }
        })
        .collect()
}

fn needs_sampling(class: &Class, tuning: Tuning) -> bool {
    class.size > tuning.whole_read_max.max(2) && class.inodes.len() >= 2
}

fn split_class(class: Class, ctx: &Reading, hardlinks: bool, sample_len: u64) -> Vec<Class> {
    let size = class.size;
    let mut keyed: Vec<(u128, Inode)> = class
        .inodes
        .into_par_iter()
        .filter_map(|inode| {
            let key = sample_key(&inode, size, sample_len, ctx);
            ctx.progress.done(1);
            key.map(|k| (k, inode))
        })
        .collect();
    // Entries are sorted by (dev, ino), so `first` orders members as the walk's sort did.
    keyed.sort_unstable_by_key(|(key, inode)| (*key, inode.first()));
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
    out
}

fn sample_key(inode: &Inode, size: u64, sample_len: u64, ctx: &Reading) -> Option<u128> {
    let file = ctx.open(inode)?;
    let mut buf = vec![0u8; 2 * sample_len as usize];
    let (head, tail) = buf.split_at_mut(sample_len as usize);
    ctx.read_at(inode, &file, head, 0)?;
    ctx.read_at(inode, &file, tail, size - sample_len)?;
    Some(xxh3_128(&buf))
}
