//! The changes of a plan, in the order a real run makes them, as [`Change`]s: what `--dry-run`
//! reports. The executor reports the same changes as it makes them.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use dedup_scan::EntryKind;

use crate::change::{Change, ChangeKind, Item};
use crate::compare::Rules;
use crate::plan::{Action, DirState, Op, Plan};
use crate::rel_path::join;

/// A relative path as a `PathBuf`.
pub fn path(rel: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(if rel.is_empty() { b"." } else { rel }))
}

/// The change one action makes; `bytes` is the content written, where known.
pub fn change_of(dir: &[u8], action: &Action, bytes: u64, rules: &Rules<'_>) -> Change {
    let rel = join(dir, action.name());
    let (kind, from) = match &action.op {
        Op::Meta => (ChangeKind::Update, None),
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
    Change { kind, path, from, bytes, item: Item::of_action(action, rules) }
}

/// The content bytes an action writes, as a real run reports them: the length of each regular
/// file copied or cloned.
fn bytes(a: &Action) -> u64 {
    let writes = matches!(a.op, Op::Create | Op::CloneFrom { .. }) && a.src.kind == EntryKind::File;
    if writes {
        a.src.meta.map_or(0, |m| m.size)
    } else {
        0
    }
}

/// Every change of `plan`, in the order of a real run's phases, with the entries each removes
/// (a deletion counts everything below it; every other change one).
pub fn changes(plan: &Plan, rules: &Rules<'_>) -> Vec<(Change, u64)> {
    let mut out = Vec::new();
    let plain = |kind, rel: &[u8], item| (Change::new(kind, path(rel), None, item), 1);
    for s in &plan.strays {
        out.push(plain(ChangeKind::RemoveTemp, s, Item::of_kind(None, false)));
    }
    let backup = |out: &mut Vec<(Change, u64)>, rel: &[u8], kind: Option<EntryKind>| {
        if plan.backup {
            out.push(plain(ChangeKind::Backup, rel, Item::of_kind(kind, false)));
        }
    };
    for d in &plan.dirs {
        let item = || Item::of_dir(d, rules);
        if let (crate::plan::Before::Entry(kind), DirState::Create | DirState::Renamed { .. }) =
            (d.before, &d.state)
        {
            backup(&mut out, &d.rel, Some(kind));
        }
        match &d.state {
            DirState::Create => out.push(plain(ChangeKind::Mkdir, &d.rel, item())),
            DirState::Renamed { from } => out
                .push((Change::new(ChangeKind::Rename, path(&d.rel), Some(path(from)), item()), 1)),
            DirState::Exists => {}
        }
    }
    let deferred = |a: &Action| a.before == crate::plan::Before::DeletedDir;
    let renamed = |a: &Action| matches!(a.op, Op::Rename { .. });
    let actions = |out: &mut Vec<(Change, u64)>, which: &dyn Fn(&Action) -> bool| {
        for d in &plan.dirs {
            for a in d.actions.iter().filter(|a| which(a)) {
                if a.replaces().is_some() {
                    backup(out, &join(&d.rel, a.name()), a.replaces());
                }
                out.push((change_of(&d.rel, a, bytes(a), rules), 1));
            }
        }
    };
    let deletions = |out: &mut Vec<(Change, u64)>| {
        for d in &plan.deletions {
            backup(out, &d.rel, d.kind);
            let item = Item::of_kind(d.kind, false);
            out.push((plain(ChangeKind::Delete, &d.rel, item).0, d.entries));
        }
        actions(out, &deferred);
    };
    if plan.delete_first {
        actions(&mut out, &|a| !deferred(a) && renamed(a));
        deletions(&mut out);
        actions(&mut out, &|a| !deferred(a) && !renamed(a));
    } else {
        actions(&mut out, &|a| !deferred(a));
    }
    for l in &plan.links {
        if let crate::plan::Before::Entry(kind) = l.before {
            backup(&mut out, &l.rel, Some(kind));
        }
        let change =
            Change::new(ChangeKind::Link, path(&l.rel), Some(path(&l.leader)), Item::of_link(l));
        out.push((change, 1));
    }
    if !plan.delete_first {
        deletions(&mut out);
    }
    for d in &plan.dirs {
        if d.set_meta && d.state != DirState::Create {
            out.push(plain(ChangeKind::Update, &d.rel, Item::of_dir(d, rules)));
        }
    }
    out
}
