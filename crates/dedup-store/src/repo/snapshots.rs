//! Snapshots: list, read, write, and find one by id prefix or `latest`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Repository;
use crate::error::{Error, Result};
use crate::format::{Magic, Snapshot};
use crate::id::Id;

/// The object name of snapshot `id`.
pub(crate) fn snapshot_path(id: &Id) -> String {
    format!("snapshots/{id}")
}

/// Every snapshot that reads, oldest first, and the errors of those that do not.
pub type Snapshots = (Vec<(Id, Snapshot)>, Vec<Error>);

/// Which snapshots `latest` chooses among.
#[derive(Debug, Clone, Default)]
pub struct SnapshotFilter {
    /// Only this host's.
    pub host: Option<String>,
    /// Only snapshots that include every one of these paths (absolute, compared by path
    /// components, so a trailing `/` does not matter).
    pub paths: Vec<Vec<u8>>,
}

fn as_path(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

impl SnapshotFilter {
    /// Whether `snapshot` passes.
    pub fn accepts(&self, snapshot: &Snapshot) -> bool {
        self.host.as_ref().is_none_or(|host| &snapshot.host == host)
            && self
                .paths
                .iter()
                .all(|wanted| snapshot.paths.iter().any(|path| as_path(path) == as_path(wanted)))
    }

    /// The filter in words, for a message: `of host H including /p`.
    fn describe(&self) -> String {
        let mut words = Vec::new();
        if let Some(host) = &self.host {
            words.push(format!("of host {host}"));
        }
        if !self.paths.is_empty() {
            let paths: Vec<_> =
                self.paths.iter().map(|p| as_path(p).display().to_string()).collect();
            words.push(format!("including {}", paths.join(" and ")));
        }
        words.join(" ")
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

    /// Reads one snapshot. One of version 2 (naming a status tree) is only valid in a repository
    /// of format version 3 (docs/store-format.md §9): elsewhere nothing keeps status trees.
    pub fn load_snapshot(&self, id: &Id) -> Result<Snapshot> {
        let plain = self.read_sealed("snapshots", Magic::Snapshot, id)?;
        let snapshot =
            Snapshot::decode(&plain).map_err(|e| Error::decode(format!("snapshots/{id}"), e))?;
        if snapshot.status_tree.is_some() && !self.config().status_trees() {
            return Err(Error::damaged(
                format!("snapshots/{id}"),
                "a snapshot of version 2 (with status trees) in a repository of format version \
                 1 or 2",
            ));
        }
        Ok(snapshot)
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

    /// The newest snapshot of `host` whose paths are `paths`, as they were given (a backup's
    /// parent), from one listing; each snapshot is read once and only the newest match so far
    /// is kept, not every snapshot decoded. Snapshots that do not read are passed over: the
    /// parent only spares reads, and without one every file is read.
    pub fn newest_of(&self, host: &str, paths: &[Vec<u8>]) -> Result<Option<(Id, Snapshot)>> {
        let mut newest: Option<(Id, Snapshot)> = None;
        for id in self.list_snapshot_ids()? {
            let Ok(snapshot) = self.load_snapshot(&id) else { continue };
            let newer =
                newest.as_ref().is_none_or(|(best, s)| (snapshot.time, id) > (s.time, *best));
            if newer && snapshot.host == host && snapshot.paths == paths {
                newest = Some((id, snapshot));
            }
        }
        Ok(newest)
    }

    /// Writes a snapshot: the commit point of a backup. Returns its id.
    pub fn save_snapshot(&self, snapshot: &Snapshot) -> Result<Id> {
        self.write_sealed("snapshots", Magic::Snapshot, &snapshot.encode())
    }

    /// The snapshot named by `spec`: `latest` (the newest that `filter` accepts; refused while
    /// any snapshot cannot be read, since that one may be the newest) or a unique prefix of at
    /// least 4 hex digits of its id (which the filter does not restrict).
    pub fn find_snapshot(&self, spec: &str, filter: &SnapshotFilter) -> Result<(Id, Snapshot)> {
        if spec == "latest" {
            let (mut all, unread) = self.snapshots()?;
            // A snapshot that cannot be read may be the newest: choosing among the others would
            // hand back older data as if it were the latest.
            if let Some(err) = unread.first() {
                return Err(Error::Snapshot(format!(
                    "latest: cannot tell which snapshot is the newest, {err}{}; name one by its \
                     id (`dedup store snapshots` lists those that read)",
                    match unread.len() {
                        1 => String::new(),
                        n => format!(" (and {} more)", n - 1),
                    }
                )));
            }
            all.retain(|(_, s)| filter.accepts(s));
            return all.pop().ok_or_else(|| match filter.describe() {
                words if words.is_empty() => {
                    Error::Snapshot("latest: the repository has none".into())
                }
                words => Error::Snapshot(format!("latest: no snapshot {words}")),
            });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_takes_snapshots_of_its_host_holding_all_its_paths() {
        let snapshot = Snapshot {
            host: "here".into(),
            paths: vec![b"/home/a".to_vec(), b"/etc".to_vec()],
            ..Snapshot::default()
        };
        let filter = |host: Option<&str>, paths: &[&str]| SnapshotFilter {
            host: host.map(String::from),
            paths: paths.iter().map(|p| p.as_bytes().to_vec()).collect(),
        };
        assert!(filter(None, &[]).accepts(&snapshot));
        assert!(filter(Some("here"), &["/etc/"]).accepts(&snapshot));
        assert!(filter(None, &["/home/a", "/etc"]).accepts(&snapshot));
        assert!(!filter(Some("there"), &[]).accepts(&snapshot));
        assert!(!filter(None, &["/home"]).accepts(&snapshot));
        assert!(!filter(None, &["/etc", "/usr"]).accepts(&snapshot));
        assert_eq!(filter(Some("h"), &["/a", "/b"]).describe(), "of host h including /a and /b");
    }
}
