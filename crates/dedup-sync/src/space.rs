//! Whether the deletions must come first: when the content the plan writes is more than the room
//! left on DST's file system, the deletions (which the plan has only when every source part was
//! read) run before the copies, as rsync's `--delete-during` would free it; otherwise they run
//! last, so that an interrupted run has removed as little as it can.

use std::path::Path;

use dedup_scan::EntryKind;

use crate::plan::{Op, Plan};

/// True when the plan deletes something and writes more than DST's file system has free.
pub fn deletions_make_room(plan: &Plan, dst: &Path) -> bool {
    if plan.deletions.is_empty() {
        return false;
    }
    let Ok(fs) = rustix::fs::statvfs(dst) else { return false };
    let free = fs.f_bavail.saturating_mul(fs.f_frsize);
    written(plan) > free
}

/// Bytes of file content the plan writes (new copies and clones, counted whole).
fn written(plan: &Plan) -> u64 {
    plan.dirs
        .iter()
        .flat_map(|d| &d.actions)
        .filter(|a| a.src.kind == EntryKind::File)
        .filter(|a| matches!(a.op, Op::Create | Op::CloneFrom { .. }))
        .filter_map(|a| a.src.meta.map(|m| m.size))
        .sum()
}
