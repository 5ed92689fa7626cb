//! Which snapshots `find`, `tag`, `rewrite` and `copy` work on, as restic chooses them: those
//! named (ids, prefixes or `latest`), or else every snapshot the filters accept.

use crate::error::{Error, Result};
use crate::format::Snapshot;
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};

/// The snapshots asked for.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Snapshots named (id prefixes or `latest`); when empty, every snapshot the filters accept.
    pub snapshots: Vec<String>,
    /// Host and paths (`latest` is the newest they accept).
    pub filter: SnapshotFilter,
    /// Tag lists: a snapshot passes when it carries every tag of one of them (restic's
    /// `--tag a,b --tag c`: a and b, or c). Empty: no condition.
    pub tags: Vec<Vec<String>>,
}

impl Selection {
    /// Whether `snapshot` passes the filters (host, paths, tags).
    pub fn accepts(&self, snapshot: &Snapshot) -> bool {
        self.filter.accepts(snapshot)
            && (self.tags.is_empty()
                || self.tags.iter().any(|all| all.iter().all(|t| snapshot.tags.contains(t))))
    }
}

/// The snapshots selected, oldest first.
pub struct Selected {
    /// The snapshots, each once.
    pub snapshots: Vec<(Id, Snapshot)>,
    /// Snapshot files that could not be read (when none were named): left alone.
    pub unreadable: Vec<Error>,
}

/// The snapshots of `repo` that `selection` names or accepts.
pub fn select(repo: &Repository, selection: &Selection) -> Result<Selected> {
    if selection.snapshots.is_empty() {
        let (mut all, unreadable) = repo.snapshots()?;
        all.retain(|(_, s)| selection.accepts(s));
        return Ok(Selected { snapshots: all, unreadable });
    }
    let mut snapshots: Vec<(Id, Snapshot)> = Vec::new();
    for spec in &selection.snapshots {
        let (id, snapshot) = repo.find_snapshot(spec, &selection.filter)?;
        if !snapshots.iter().any(|(seen, _)| *seen == id) {
            snapshots.push((id, snapshot));
        }
    }
    snapshots.sort_by(|a, b| a.1.time.cmp(&b.1.time).then(a.0.cmp(&b.0)));
    Ok(Selected { snapshots, unreadable: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_passes_when_it_has_every_tag_of_one_list() {
        let snapshot = Snapshot { tags: vec!["a".into(), "b".into()], ..Snapshot::default() };
        let with = |lists: &[&[&str]]| Selection {
            tags: lists.iter().map(|l| l.iter().map(|t| t.to_string()).collect()).collect(),
            ..Selection::default()
        };
        assert!(with(&[]).accepts(&snapshot));
        assert!(with(&[&["a", "b"]]).accepts(&snapshot));
        assert!(with(&[&["c"], &["b"]]).accepts(&snapshot));
        assert!(!with(&[&["a", "c"]]).accepts(&snapshot));
        assert!(!with(&[&["c"]]).accepts(&snapshot));
    }
}
