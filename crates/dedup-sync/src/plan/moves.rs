//! Moved and renamed files: a new source file whose size and modification time a destination
//! file the source no longer has shares, and whose bytes agree (samples from both sides where
//! the stamp is strong, every byte otherwise: [`depth`]), is renamed there instead of copied
//! (with `--delete`; without it the old name must stay, so the new file is cloned from it where
//! the file system can). A file moved and edited differs in time or size and is copied. The
//! files whose stamps cannot be trusted are compared here too.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use dedup_core::{Problem, ProblemKind};
use dedup_scan::crew::{map_each, Staffing};

use super::deletions::Found;
use super::merge::Merged;
use super::{Before, Context, Op};
use crate::rel_path::{join, under};
use crate::verify::{Comparer, Depth};

/// Match new files with their old copies, and settle the files to verify.
pub fn settle(cx: &Context<'_>, m: &mut Merged, found: &mut Found) {
    let mut comparer = Comparer::default();
    settle_verified(cx, m, &mut comparer);
    if found.sources.is_empty() || m.new_files.is_empty() {
        return;
    }
    let mut by_stamp: HashMap<(u64, i64), Vec<usize>> = HashMap::new();
    for (i, s) in found.sources.iter().enumerate() {
        if s.meta.size > 0 {
            by_stamp.entry((s.meta.size, s.meta.mtime_ns)).or_default().push(i);
        }
    }
    // New files per stamp: two of one stamp say that stamps were copied from file to file.
    let mut new_per_stamp: HashMap<(u64, i64), usize> = HashMap::new();
    for &(d, a) in &m.new_files {
        if let Some(meta) = m.plan.dirs[d].actions[a].src.meta {
            if by_stamp.contains_key(&(meta.size, meta.mtime_ns)) {
                *new_per_stamp.entry((meta.size, meta.mtime_ns)).or_default() += 1;
            }
        }
    }
    let mut used = vec![false; found.sources.len()];
    for &(d, a) in &m.new_files {
        let dir = &m.plan.dirs[d];
        let action = &dir.actions[a];
        let Some(meta) = action.src.meta else { continue };
        if action.op != Op::Create || matches!(action.before, Before::DeletedDir) {
            continue;
        }
        let stamp = (meta.size, meta.mtime_ns);
        let Some(list) = by_stamp.get(&stamp) else { continue };
        let unique = list.len() == 1 && new_per_stamp.get(&stamp) == Some(&1);
        let depth = depth(cx.options.checksum, meta.mtime_ns, unique);
        let src_path = under(cx.src_root, &join(&dir.rel, action.name()));
        let pick = list.iter().copied().find(|&i| {
            if cx.deleting && used[i] {
                return false;
            }
            let dst_path = under(cx.dst_root, &found.sources[i].orig);
            comparer.same_bytes(&src_path, &dst_path, meta.size, depth).unwrap_or(false)
        });
        let Some(i) = pick else { continue };
        let from = found.sources[i].at.clone();
        let op = if cx.deleting {
            used[i] = true;
            found.taken(i);
            Op::Rename { from }
        } else {
            Op::CloneFrom { from }
        };
        m.plan.dirs[d].actions[a].op = op;
    }
}

/// How much of a moved file's old copy is compared before it is trusted. Samples (head,
/// middle, tail; the whole file when it is no larger than them) where the stamp is as strong
/// as the one a file at the same path is trusted on: a modification time with nanosecond
/// digits, which no other file of that size shares among the run's old and new files. Whole
/// seconds (or microseconds), or a stamp shared by several files, are what copying tools and
/// archives leave: then files of one size and time may differ anywhere, and every byte is
/// compared. `--checksum` compares every byte.
fn depth(checksum: bool, mtime_ns: i64, unique: bool) -> Depth {
    let fine = mtime_ns.rem_euclid(1_000) != 0;
    if checksum || !fine || !unique {
        Depth::Whole
    } else {
        Depth::Sampled
    }
}

/// Comparisons shared among threads from this many on: each costs two opens by path and the
/// reads of both files (for a small file in RAM, less than starting a thread), and a run right
/// after a change that touched many files compares every one of them
/// (docs/benchmarks/journal.md, "Sync fixed costs, 2026-11-26").
const SHARED_FROM: usize = 16;

/// One comparison: the source path, the destination path, the size both must have.
type Pair = (PathBuf, PathBuf, u64);

thread_local! {
    /// A comparer per thread of a shared comparison, its buffers kept from pair to pair.
    static COMPARER: RefCell<Comparer> = RefCell::new(Comparer::default());
}

/// Whether each pair holds the same bytes, in order: on the calling thread through `comparer`
/// when there are few, else on a crew of up to one thread per processor.
fn compare_all(
    pairs: &[Option<Pair>],
    comparer: &mut Comparer,
) -> Vec<Option<std::io::Result<bool>>> {
    let compare = |c: &mut Comparer, p: &Option<Pair>| {
        p.as_ref().map(|(a, b, size)| c.same_bytes(a, b, *size, Depth::Whole))
    };
    let serial = |comparer: &mut Comparer| pairs.iter().map(|p| compare(comparer, p)).collect();
    if pairs.iter().flatten().count() < SHARED_FROM {
        return serial(comparer);
    }
    // Asked only here: the answer reads the cgroup's CPU quota, 17 system calls.
    let cores = std::thread::available_parallelism().map_or(1, usize::from).min(4);
    if cores < 2 {
        return serial(comparer);
    }
    let staff = Staffing { most: cores, wanted: &|| cores, name: "dedup-verify" };
    let items: Vec<&Option<Pair>> = pairs.iter().collect();
    let out = map_each(items, staff, &|p| COMPARER.with_borrow_mut(|c| compare(c, p)));
    // The calling thread's buffers are not kept past the plan.
    COMPARER.with_borrow_mut(|c| *c = Comparer::default());
    out
}

/// Files whose size and time match but cannot settle it: compare every byte.
fn settle_verified(cx: &Context<'_>, m: &mut Merged, comparer: &mut Comparer) {
    let pairs: Vec<Option<Pair>> = m
        .verify
        .iter()
        .map(|(d, a, _, walked_at)| {
            let dir = &m.plan.dirs[*d];
            let action = &dir.actions[*a];
            let size = action.src.meta.map(|m| m.size)?;
            let src = under(cx.src_root, &join(&dir.rel, action.name()));
            Some((src, under(cx.dst_root, walked_at), size))
        })
        .collect();
    let outcomes = compare_all(&pairs, comparer);
    for ((d, a, meta_differs, _), outcome) in m.verify.iter().zip(outcomes) {
        let (d, a, meta_differs) = (*d, *a, *meta_differs);
        let Some(outcome) = outcome else { continue };
        let rel = join(&m.plan.dirs[d].rel, m.plan.dirs[d].actions[a].name());
        let same = match outcome {
            Ok(same) => same,
            Err(e) => {
                cx.observer.problem(Problem::warning(under(cx.src_root, &rel), ProblemKind::Io(e)));
                false
            }
        };
        if !same {
            m.plan.dirs[d].actions[a].op = Op::Create;
            let held = std::mem::take(&mut m.held_links);
            let (relink, keep): (Vec<_>, Vec<_>) = held.into_iter().partition(|l| l.leader == rel);
            m.plan.links.extend(relink);
            m.held_links = keep;
        } else if !meta_differs {
            // Equal: nothing to do. Not even its times are set again, which would let later
            // runs trust its stamps: a run with nothing to do writes nothing (the run that
            // copies a file settles its own racy copies, `execute::racy`).
            m.drop.push((d, a));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_trusted_only_on_a_unique_stamp_with_nanosecond_digits() {
        let fine = 1_700_000_000_123_456_789;
        assert_eq!(depth(false, fine, true), Depth::Sampled);
        assert_eq!(depth(false, fine, false), Depth::Whole, "a stamp shared by several files");
        assert_eq!(depth(false, 1_700_000_000_000_000_000, true), Depth::Whole, "whole seconds");
        assert_eq!(depth(false, 1_700_000_000_123_456_000, true), Depth::Whole, "microseconds");
        assert_eq!(depth(true, fine, true), Depth::Whole, "--checksum");
    }
}
