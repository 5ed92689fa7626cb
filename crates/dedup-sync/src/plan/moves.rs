//! Moved and renamed files: a new source file whose size and modification time a destination
//! file the source no longer has shares, and whose bytes agree (samples from both sides; every
//! byte with `--checksum`), is renamed there instead of copied (with `--delete`; without it the
//! old name must stay, so the new file is cloned from it where the file system can). A file
//! moved and edited differs in time or size and is copied. The files whose stamps cannot be
//! trusted are compared here too.

use std::collections::HashMap;

use dedup_core::{Problem, ProblemKind};

use super::deletions::Found;
use super::merge::Merged;
use super::{Before, Context, Op};
use crate::tree::{join, under};
use crate::verify::{Comparer, Depth};

/// Match new files with their old copies, and settle the files to verify.
pub fn settle(cx: &Context<'_>, m: &mut Merged, found: &mut Found) {
    let depth = if cx.options.checksum { Depth::Whole } else { Depth::Sampled };
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
    let mut used = vec![false; found.sources.len()];
    for &(d, a) in &m.new_files {
        let dir = &m.plan.dirs[d];
        let action = &dir.actions[a];
        let Some(meta) = action.src.meta else { continue };
        if action.op != Op::Create || matches!(action.before, Before::DeletedDir) {
            continue;
        }
        let Some(list) = by_stamp.get(&(meta.size, meta.mtime_ns)) else { continue };
        let src_path = under(cx.src_root, &join(&dir.rel, action.name()));
        let pick = list.iter().copied().find(|&i| {
            if cx.options.delete && used[i] {
                return false;
            }
            let dst_path = under(cx.dst_root, &found.sources[i].orig);
            comparer.same_bytes(&src_path, &dst_path, meta.size, depth).unwrap_or(false)
        });
        let Some(i) = pick else { continue };
        let from = found.sources[i].at.clone();
        let op = if cx.options.delete {
            used[i] = true;
            found.taken(i);
            Op::Rename { from }
        } else {
            Op::CloneFrom { from }
        };
        m.plan.dirs[d].actions[a].op = op;
    }
}

/// Files whose size and time match but cannot settle it: compare every byte.
fn settle_verified(cx: &Context<'_>, m: &mut Merged, comparer: &mut Comparer) {
    for (d, a, meta_differs, walked_at) in &m.verify {
        let (d, a, meta_differs) = (*d, *a, *meta_differs);
        let dir = &m.plan.dirs[d];
        let action = &dir.actions[a];
        let rel = join(&dir.rel, action.name());
        let Some(size) = action.src.meta.map(|m| m.size) else { continue };
        let src = under(cx.src_root, &rel);
        let dst = under(cx.dst_root, walked_at);
        let same = match comparer.same_bytes(&src, &dst, size, Depth::Whole) {
            Ok(same) => same,
            Err(e) => {
                cx.observer.problem(Problem::warning(&src, ProblemKind::Io(e)));
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
            m.plan.dirs[d].actions[a].op = Op::Settle;
        }
    }
}
