//! The parent of a backup: the snapshot whose files are taken as unchanged when their status
//! matches, so that only changed files are read.

use crate::error::Result;
use crate::format::Snapshot;
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};

/// The parent of a backup of `paths` (absolute) by `host`: the snapshot `spec` names among
/// that host's when one is given, else the newest of that host with exactly those paths.
/// A backup of standard input (`stdin`) has none unless named.
pub fn choose_parent(
    repo: &Repository,
    spec: Option<&str>,
    host: &str,
    paths: &[Vec<u8>],
    stdin: bool,
) -> Result<Option<(Id, Snapshot)>> {
    let of_host = SnapshotFilter { host: Some(host.to_string()), paths: Vec::new() };
    match spec {
        Some(spec) => Ok(Some(repo.find_snapshot(spec, &of_host)?)),
        None if !stdin => repo.newest_of(host, paths),
        None => Ok(None),
    }
}
