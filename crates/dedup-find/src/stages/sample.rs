//! The sample stage: the head block of each large candidate, then the tail block of those whose
//! heads are alike, hashed, split classes cheaply before any full read. Files that differ usually
//! differ in their first or last bytes (headers, trailers, indexes), most often in the first: a
//! file whose head is unique in its class needs no second request (two requests per file cost
//! more than a peer that reads the prefix first: docs/benchmarks/find.md). Small files skip this
//! stage: one whole read costs about what a sample read costs, so reading twice would only add
//! requests.

use dedup_cache::{Entry, Fingerprint};

use crate::cache::fingerprint::{kind_for, sample_hash};
use crate::cache::Learned;
use crate::phases::SAMPLE;
use crate::stages::candidates::{Class, Inode};
use crate::stages::keyed::same_key_runs;
use crate::stages::physical::{keyed_in_order, Order};
use crate::stages::reading::Reading;
use crate::stages::whole_read::{self, Heads, WholeRead};
use crate::tuning::Tuning;

/// What the sample stage leaves for the full comparison.
pub(crate) struct Sampled {
    /// Classes still possibly equal, split by their samples.
    pub classes: Vec<Class>,
    /// With `learn`, each sampled file's fingerprint for the cache.
    pub learned: Vec<Learned>,
    /// Devices measured slow enough to read more files whole than `Tuning::whole_read_max`.
    pub whole_reads: Vec<WholeRead>,
}

/// Split every class by the samples of its members; classes of small files pass unchanged, and
/// so do the classes a slow device reads whole instead (`crate::stages::whole_read`). The heads of every
/// class are read first, then the tails of the files whose heads are alike, each round on one
/// crew (the heads in two, when the switch to whole reads is measured on the first of them), on
/// devices where that pays in the order of the disk (`crate::stages::physical`).
pub(crate) fn split_by_samples(
    classes: Vec<Class>,
    ctx: &Reading,
    hardlinks: bool,
    tuning: Tuning,
    learn: bool,
) -> Sampled {
    let (sampled, mut out): (Vec<Class>, Vec<Class>) =
        classes.into_iter().partition(|c| needs_sampling(c, tuning));
    let to_sample = sampled.iter().map(|c| c.inodes.len() as u64).sum();
    ctx.progress().start_phase(SAMPLE, to_sample);
    let len = tuning.sample_len();
    let head = |_: usize, inode: &Inode| {
        let key = sample_hash(inode, 0, len, ctx);
        ctx.progress().done(1);
        key
    };
    let head_part = |_: usize, _: &Inode| (0, len);
    let Heads { classes: sampled, heads, whole, whole_heads, whole_reads } =
        if tuning.measure_whole_read {
            whole_read::heads_measured(sampled, &out, ctx, tuning, &head)
        } else {
            let sets = sampled.iter().map(|c| c.inodes.clone()).collect();
            let order = Order::new(tuning, []);
            let heads = keyed_in_order(ctx, &order, sets, &head_part, &head);
            let (whole, whole_heads, whole_reads) = (Vec::new(), Vec::new(), Vec::new());
            Heads { classes: sampled, heads, whole, whole_heads, whole_reads }
        };
    let order = Order::new(tuning, whole_read::ordered_devices(&whole_reads));
    out.extend(whole);
    let mut learned = Vec::new();
    let mut learn_heads = |size: u64, heads: &[(u64, Inode)]| {
        if let Some(kind) = kind_for(size, tuning).filter(|_| learn) {
            learned.extend(heads.iter().map(|&(key, inode)| {
                let fingerprint = Some(Fingerprint { kind, value: key });
                (inode, Entry { fingerprint, digest: None })
            }));
        }
    };
    for (size, heads) in &whole_heads {
        learn_heads(*size, heads);
    }
    // Files whose heads are alike, and their size: only these need their tails.
    let mut alike: Vec<(u64, Vec<Inode>)> = Vec::new();
    for (class, heads) in sampled.into_iter().zip(heads) {
        let size = class.size;
        learn_heads(size, &heads);
        for inodes in same_key_runs(&heads) {
            if inodes.len() < 2 {
                // One file (with -H perhaps several names of it): nothing to tell apart.
                out.push(Class { size, inodes, cached: false });
            } else {
                alike.push((size, inodes));
            }
        }
    }
    let (sizes, sets): (Vec<u64>, Vec<Vec<Inode>>) = alike.into_iter().unzip();
    let tail_part = |set: usize, _: &Inode| (sizes[set] - len, len);
    let tail = |set: usize, inode: &Inode| sample_hash(inode, sizes[set] - len, len, ctx);
    let tails = keyed_in_order(ctx, &order, sets, &tail_part, &tail);
    for (&size, tails) in sizes.iter().zip(tails) {
        for inodes in same_key_runs(&tails) {
            out.push(Class { size, inodes, cached: false });
        }
    }
    out.retain(|class| class.is_group(hardlinks));
    Sampled { classes: out, learned, whole_reads }
}

fn needs_sampling(class: &Class, tuning: Tuning) -> bool {
    tuning.samples(class.size) && class.inodes.len() >= 2
}

#[cfg(test)]
mod tests {
    use std::fs;

    use dedup_core::Progress;

    use crate::{find, FindOptions};

    /// Bytes the run read, and the groups it found, for files with these contents.
    fn run(files: &[Vec<u8>]) -> (u64, usize) {
        let dir = tempfile::tempdir().unwrap();
        for (i, bytes) in files.iter().enumerate() {
            fs::write(dir.path().join(format!("f{i}")), bytes).unwrap();
        }
        let progress = Progress::default();
        let report = find(&[dir.path().to_owned()], &FindOptions::default(), &(), &progress);
        (progress.snapshot().bytes_read, report.groups.len())
    }

    /// 100 KiB (sampled), `head` in the first 4 KiB sample, `tail` in the last.
    fn file(head: u8, tail: u8) -> Vec<u8> {
        let mut bytes = vec![7u8; 100 * 1024];
        bytes[10] = head;
        bytes[100 * 1024 - 10] = tail;
        bytes
    }

    #[test]
    fn a_file_whose_head_is_unique_in_its_class_is_read_no_further() {
        let (read, groups) = run(&[file(1, 0), file(2, 0), file(3, 0)]);
        assert_eq!((read, groups), (3 * 4096, 0));
    }

    #[test]
    fn files_alike_in_the_head_are_told_apart_by_the_tail() {
        let (read, groups) = run(&[file(1, 1), file(1, 2), file(2, 3)]);
        assert_eq!((read, groups), (3 * 4096 + 2 * 4096, 0), "heads, then tails of two");
    }

    #[test]
    fn heads_timed_first_and_read_later_are_sorted_together() {
        // More files than are timed before the switch is chosen: the first copy's head is read
        // among the timed ones, the last copy's after; they must still meet in one class.
        let mut files: Vec<Vec<u8>> = (0..20).map(|i| file(i + 1, 0)).collect();
        files[19] = files[0].clone();
        let dir = tempfile::tempdir().unwrap();
        for (i, bytes) in files.iter().enumerate() {
            fs::write(dir.path().join(format!("f{i}")), bytes).unwrap();
        }
        let progress = Progress::default();
        let run =
            crate::find_run(&[dir.path().to_owned()], &FindOptions::default(), &(), &progress);
        assert_eq!(run.report.groups.len(), 1);
        // The timed heads decide whether files of this size are read whole instead: on a
        // machine loaded enough that they measure slow, the class is, and the bytes differ.
        if run.whole_reads.iter().all(|choice| choice.up_to < 100 * 1024) {
            let read = progress.snapshot().bytes_read;
            assert_eq!(
                read,
                20 * 4096 + 2 * 4096 + 2 * 100 * 1024,
                "heads once, two tails, two files"
            );
        }
    }

    #[test]
    fn files_alike_at_both_ends_are_compared_in_full() {
        let mut middle = file(1, 1);
        middle[50_000] = 9;
        let (read, groups) = run(&[file(1, 1), file(1, 1), middle]);
        assert_eq!(groups, 1);
        assert!(read >= 6 * 4096 + 2 * 100 * 1024, "heads, tails, then the copies in full");
    }
}
