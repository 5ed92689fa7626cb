//! Snapshots: list, read, write, and find one by id prefix or `latest`.

use super::Repository;
use crate::error::{Error, Result};
use crate::format::{Magic, Snapshot};
use crate::id::Id;

/// Every snapshot that reads, oldest first, and the errors of those that do not.
pub type Snapshots = (Vec<(Id, Snapshot)>, Vec<Error>);

/// Which snapshots `latest` chooses among.
#[derive(Debug, Clone, Default)]
pub struct SnapshotFilter {
    /// Only this host.
    pub host: Option<String>,
    /// Only snapshots that include this path.
    pub path: Option<Vec<u8>>,
}

impl SnapshotFilter {
    fn accepts(&self, snapshot: &Snapshot) -> bool {
        self.host.as_ref().is_none_or(|host| &snapshot.host == host)
            && self.path.as_ref().is_none_or(|path| snapshot.paths.contains(path))
    }
}

impl Repository {
    /// Ids of the snapshots present.
    pub fn list_snapshot_ids(&self) -> Result<Vec<Id>> {
        let listing = self.backend().list("snapshots").map_err(|e| Error::io("snapshots", e))?;
        Ok(listing
            .iter()
            .filter_map(|o| o.name.strip_prefix("snapshots/").and_then(Id::from_hex))
            .collect())
    }

    /// Reads one snapshot.
    pub fn load_snapshot(&self, id: &Id) -> Result<Snapshot> {
        let plain = self.read_sealed("snapshots", Magic::Snapshot, id)?;
        Snapshot::decode(&plain).map_err(|e| Error::decode(format!("snapshots/{id}"), e))
    }

    /// Every snapshot, oldest first, and the errors of those that could not be read.
    pub fn snapshots(&self) -> Result<Snapshots> {
        let mut good = Vec::new();
        let mut bad = Vec::new();
        for id in self.list_snapshot_ids()? {
            match self.load_snapshot(&id) {
                Ok(snapshot) => good.push((id, snapshot)),
                Err(err) => bad.push(err),
            }
        }
        good.sort_by(|a, b| a.1.time.cmp(&b.1.time).then(a.0.cmp(&b.0)));
        Ok((good, bad))
    }

    /// Writes a snapshot: the commit point of a backup. Returns its id.
    pub fn save_snapshot(&self, snapshot: &Snapshot) -> Result<Id> {
        self.write_sealed("snapshots", Magic::Snapshot, &snapshot.encode())
    }

    /// The snapshot named by `spec`: `latest` (the newest that `filter` accepts) or a unique
    /// prefix of at least 4 hex digits of its id.
    pub fn find_snapshot(&self, spec: &str, filter: &SnapshotFilter) -> Result<(Id, Snapshot)> {
        if spec == "latest" {
            let (mut all, _) = self.snapshots()?;
            all.retain(|(_, s)| filter.accepts(s));
            return all.pop().ok_or_else(|| Error::Snapshot("latest: no snapshot matches".into()));
        }
        let prefix = spec.to_ascii_lowercase();
        if prefix.len() < 4 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Snapshot(format!(
                "{spec}: give `latest` or at least 4 hex digits of an id"
            )));
        }
        let matches: Vec<Id> = self
            .list_snapshot_ids()?
            .into_iter()
            .filter(|id| id.to_hex().starts_with(&prefix))
            .collect();
        match matches.as_slice() {
            [id] => Ok((*id, self.load_snapshot(id)?)),
            [] => Err(Error::Snapshot(format!("{spec}: not found"))),
            _ => Err(Error::Snapshot(format!(
                "{spec}: matches {} snapshots; give more digits",
                matches.len()
            ))),
        }
    }
}
