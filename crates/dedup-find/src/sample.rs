//! The sample stage: a head block and a tail block of each large candidate, hashed, split classes
//! cheaply before any full read. Files that differ usually differ in their first or last bytes
//! (headers, trailers, indexes). Small files skip this stage: one whole read costs about what two
//! sample reads cost, so reading twice would only add requests.

use dedup_core::Stage;
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use crate::candidates::{Class, Inode};
use crate::reading::Reading;

/// Files up to this size go straight to the exact stage and are read whole in one request.
pub(crate) const WHOLE_READ_MAX: u64 = 64 * 1024;

/// Bytes read at each end of a sampled file.
const SAMPLE_LEN: usize = 4096;

/// Split every class by the samples of its members; classes of small files pass unchanged.
pub(crate) fn split_by_samples(classes: Vec<Class>, ctx: &Reading, hardlinks: bool) -> Vec<Class> {
    let to_sample: u64 =
        classes.iter().filter(|c| needs_sampling(c)).map(|c| c.inodes.len() as u64).sum();
    ctx.progress.start_stage(Stage::Sampling, to_sample);
    classes
        .into_par_iter()
        .flat_map_iter(|class| {
            if needs_sampling(&class) {
                split_class(class, ctx, hardlinks)
            } else {
                vec![class]
            }
        })
        .collect()
}

fn needs_sampling(class: &Class) -> bool {
    class.size > WHOLE_READ_MAX && class.inodes.len() >= 2
}

fn split_class(class: Class, ctx: &Reading, hardlinks: bool) -> Vec<Class> {
    let size = class.size;
    let mut keyed: Vec<(u128, Inode)> = class
        .inodes
        .into_par_iter()
        .filter_map(|inode| {
            let key = sample_key(&inode, size, ctx);
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
        let class = Class { size, inodes };
        if class.is_group(hardlinks) {
            out.push(class);
        }
    }
    out
}

fn sample_key(inode: &Inode, size: u64, ctx: &Reading) -> Option<u128> {
    let file = ctx.open(inode)?;
    let mut buf = [0u8; 2 * SAMPLE_LEN];
    let (head, tail) = buf.split_at_mut(SAMPLE_LEN);
    ctx.read_at(inode, &file, head, 0)?;
    ctx.read_at(inode, &file, tail, size - SAMPLE_LEN as u64)?;
    Some(xxh3_128(&buf))
}
