//! `tag`: change the tags of snapshots (restic's `tag --add/--remove/--set`). A snapshot file is
//! never modified: each changed snapshot is written anew, with its tags changed and its original
//! recorded (docs/store-format.md §9), and the old file removed only once the new one is
//! written, so that an interruption leaves at least one of the two.

use crate::error::{Error, Result};
use crate::format::Snapshot;
use crate::id::Id;
use crate::repo::Repository;

/// How the tags change: `set` replaces them all (when given), then `add`, then `remove`.
#[derive(Debug, Clone, Default)]
pub struct TagChange {
    /// The tags every snapshot ends with, before `add` and `remove`.
    pub set: Option<Vec<String>>,
    /// Tags added (each once).
    pub add: Vec<String>,
    /// Tags removed.
    pub remove: Vec<String>,
}

impl TagChange {
    /// The tags of a snapshot that had `tags`.
    pub fn apply(&self, tags: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let start = self.set.as_deref().unwrap_or(tags);
        for tag in start.iter().chain(&self.add) {
            if !out.contains(tag) {
                out.push(tag.clone());
            }
        }
        out.retain(|t| !self.remove.contains(t));
        out
    }
}

/// One snapshot retagged.
#[derive(Debug)]
pub struct Retagged {
    /// The snapshot as it was (removed).
    pub old: Id,
    /// Its replacement.
    pub new: Id,
    /// Its tags now.
    pub tags: Vec<String>,
    /// Why the old snapshot could not be removed (it stays beside its replacement).
    pub old_kept: Option<Error>,
}

/// What `tag` did.
#[derive(Debug, Default)]
pub struct TagReport {
    /// The snapshots changed.
    pub changed: Vec<Retagged>,
    /// Snapshots whose tags were already as asked: left alone.
    pub unchanged: u64,
}

/// The snapshot that replaces `old` (whose id is `id`), with other tags: its original is the
/// original of `old`, or `old` itself.
pub fn derived(id: Id, old: &Snapshot) -> Snapshot {
    Snapshot { original: Some(old.original.unwrap_or(id)), ..old.clone() }
}

/// Writes `wanted` unless a snapshot of `present` says the same (a run interrupted after it
/// wrote the replacement, and before it removed the original, is run again): its id.
fn save_once(repo: &Repository, present: &[(Id, Snapshot)], wanted: &Snapshot) -> Result<Id> {
    match present.iter().find(|(_, s)| s == wanted) {
        Some((id, _)) => Ok(*id),
        None => repo.save_snapshot(wanted),
    }
}

/// Changes the tags of `snapshots` as `change` says. An original that cannot be removed once
/// its replacement is written is reported with it; the others are changed all the same.
pub fn tag(
    repo: &Repository,
    snapshots: &[(Id, Snapshot)],
    change: &TagChange,
) -> Result<TagReport> {
    let (present, _) = repo.snapshots()?;
    let mut report = TagReport::default();
    for (id, snapshot) in snapshots {
        let tags = change.apply(&snapshot.tags);
        if tags == snapshot.tags {
            report.unchanged += 1;
            continue;
        }
        let wanted = Snapshot { tags: tags.clone(), ..derived(*id, snapshot) };
        let new = save_once(repo, &present, &wanted)?;
        let old_kept = if new == *id { None } else { remove_snapshot(repo, id).err() };
        report.changed.push(Retagged { old: *id, new, tags, old_kept });
    }
    Ok(report)
}

/// Removes the snapshot file of `id`.
pub(crate) fn remove_snapshot(repo: &Repository, id: &Id) -> Result<()> {
    let name = crate::repo::snapshot_path(id);
    repo.backend().delete(&name).map_err(|e| Error::io(name, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(tags: &[&str]) -> Vec<String> {
        tags.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn set_then_add_then_remove_each_tag_once() {
        let change =
            TagChange { set: None, add: strings(&["b", "c", "c"]), remove: strings(&["a"]) };
        assert_eq!(change.apply(&strings(&["a", "b"])), strings(&["b", "c"]));
        let set = TagChange { set: Some(strings(&["x"])), add: strings(&["y"]), remove: vec![] };
        assert_eq!(set.apply(&strings(&["a"])), strings(&["x", "y"]));
        let clear = TagChange { set: Some(vec![]), ..TagChange::default() };
        assert!(clear.apply(&strings(&["a"])).is_empty());
    }

    #[test]
    fn a_derived_snapshot_names_the_first_original() {
        let first = Id([1; 32]);
        let copy = derived(first, &Snapshot::default());
        assert_eq!(copy.original, Some(first));
        assert_eq!(derived(Id([2; 32]), &copy).original, Some(first));
    }
}
