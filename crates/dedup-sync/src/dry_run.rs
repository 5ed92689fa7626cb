//! The changes of a plan, in the order a real run makes them, as [`Change`]s: what `--dry-run`
//! reports. The executor reports the same changes as it makes them.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use dedup_scan::EntryKind;

use crate::change::{Change, ChangeKind};
use crate::plan::{Action, DirState, Op, Plan};
use crate::tree::join;

/// A relative path as a `PathBuf`.
pub fn path(rel: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(if rel.is_empty() { b"." } else { rel }))
}

/// The change one action makes; `bytes` is the content written, where known.
pub fn change_of(dir: &[u8], action: &Action, bytes: u64) -> Change {
    let rel = join(dir, action.name());
    let (kind, from) = match &action.op {
        Op::Meta | Op::Settle => (ChangeKind::Update, None),
        Op::Rename { from } => (ChangeKind::Rename, Some(path(from))),
        Op::CloneFrom { from } => (ChangeKind::Clone, Some(path(from))),
        Op::LinkDest { from } => (ChangeKind::LinkDest, Some(path(from))),
        Op::Create => (
            match action.src.kind {
                EntryKind::File => ChangeKind::Copy,
                EntryKind::Symlink => ChangeKind::Symlink,
                EntryKind::Dir => ChangeKind::Mkdir,
                _ => ChangeKind::Special,
            },
            None,
        ),
    };
    let path = if rel.is_empty() { path(&rel) } else { PathBuf::from(OsString::from_vec(rel)) };
    Change { kind, path, from, bytes }
}

/// Every change of `plan`, in the order of a real run's phases.
pub fn changes(plan: &Plan) -> Vec<Change> {
    let mut out = Vec::new();
    let plain = |kind, rel: &[u8]| Change { kind, path: path(rel), from: None, bytes: 0 };
    for s in &plan.strays {
        out.push(plain(ChangeKind::RemoveTemp, s));
    }
    for d in &plan.dirs {
        match &d.state {
            DirState::Create => out.push(plain(ChangeKind::Mkdir, &d.rel)),
            DirState::Renamed { from } => out.push(Change {
                kind: ChangeKind::Rename,
                path: path(&d.rel),
                from: Some(path(from)),
                bytes: 0,
            }),
            DirState::Exists => {}
        }
    }
    let deferred = |a: &Action| a.before == crate::plan::Before::DeletedDir;
    for d in &plan.dirs {
        for a in d.actions.iter().filter(|a| !deferred(a) && a.op != Op::Settle) {
            let bytes = if a.op == Op::Create { a.src.meta.map_or(0, |m| m.size) } else { 0 };
            out.push(change_of(&d.rel, a, bytes));
        }
    }
    for l in &plan.links {
        out.push(Change {
            kind: ChangeKind::Link,
            path: path(&l.rel),
            from: Some(path(&l.leader)),
            bytes: 0,
        });
    }
    for d in &plan.deletions {
        out.push(plain(ChangeKind::Delete, &d.rel));
    }
    for d in &plan.dirs {
        for a in d.actions.iter().filter(|a| deferred(a)) {
            let bytes = if a.op == Op::Create { a.src.meta.map_or(0, |m| m.size) } else { 0 };
            out.push(change_of(&d.rel, a, bytes));
        }
    }
    for d in &plan.dirs {
        if d.set_meta && d.state != DirState::Create {
            out.push(plain(ChangeKind::Update, &d.rel));
        }
    }
    out
}
