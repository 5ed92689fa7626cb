//! `forget`: which snapshots a keep policy removes (a plan, each verdict with its reasons), and
//! their removal.

use crate::error::{Error, Result};
use crate::forget::{apply, groups, GroupKey, KeepPolicy, Verdict};
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};

/// What a keep policy decides, group by group (host and paths), each newest first.
pub struct ForgetPlan {
    /// The groups and the verdict on each of their snapshots.
    pub groups: Vec<(GroupKey, Vec<Verdict>)>,
    /// Snapshot files that could not be read: left alone.
    pub unreadable: Vec<Error>,
}

impl ForgetPlan {
    /// The snapshots no rule keeps.
    pub fn doomed(&self) -> Vec<Id> {
        self.groups
            .iter()
            .flat_map(|(_, verdicts)| verdicts.iter())
            .filter(|v| v.kept_by.is_empty())
            .map(|v| v.id)
            .collect()
    }

    /// A group of which the policy keeps no snapshot, if any.
    pub fn group_left_empty(&self) -> Option<&(GroupKey, Vec<Verdict>)> {
        self.groups.iter().find(|(_, v)| v.iter().all(|v| v.kept_by.is_empty()))
    }
}

/// Applies `policy` to the snapshots `filter` accepts, group by group. Nothing is removed.
pub fn plan_forget(
    repo: &Repository,
    policy: &KeepPolicy,
    filter: &SnapshotFilter,
) -> Result<ForgetPlan> {
    let (mut all, unreadable) = repo.snapshots()?;
    all.retain(|(_, s)| filter.accepts(s));
    let groups =
        groups(&all).into_iter().map(|(key, group)| (key, apply(policy, &group))).collect();
    Ok(ForgetPlan { groups, unreadable })
}

/// The snapshots `specs` name (ids, prefixes or `latest`), each once.
pub fn named_snapshots(repo: &Repository, specs: &[String]) -> Result<Vec<Id>> {
    let filter = SnapshotFilter::default();
    let mut ids = Vec::new();
    for spec in specs {
        let (id, _) = repo.find_snapshot(spec, &filter)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Removes the snapshots `ids`: one request (object storage) or one directory flush (a local
/// disk) for all of them. Their data stays until a prune.
pub fn remove_snapshots(repo: &Repository, ids: &[Id]) -> Result<()> {
    let names: Vec<String> = ids.iter().map(crate::repo::snapshot_path).collect();
    repo.backend()
        .delete_many(&names)
        .map_err(|failed| Error::io(format!("cannot remove {}", failed.name), failed.cause))
}
