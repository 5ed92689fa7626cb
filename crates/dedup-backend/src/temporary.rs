//! Temporary names for objects being written where the storage has no whole-object write of its
//! own (a local directory, an SFTP server): `.tmp-HOST-PID-RANDOM` beside the final name, and the
//! rule that tells a dead writer's leftover from a live writer's.

use std::time::{Duration, SystemTime};

use crate::Id;

/// Temporary names begin with this, then the writer's host tag and pid: `.tmp-HOST-PID-RANDOM`.
pub(super) const TEMP_PREFIX: &str = ".tmp-";

/// Eight hex digits standing for this host in temporary names (a repository on a shared disk or
/// a server may have writers on several hosts, and only this host's pids can be asked about).
pub(super) fn host_tag() -> String {
    Id::of_file(crate::host::this_host().as_bytes()).short(8)
}

/// A fresh temporary name for an object to be written into `dir` (`""` for the top folder).
pub(super) fn temporary_name(dir: &str) -> String {
    let file =
        format!("{TEMP_PREFIX}{}-{}-{}", host_tag(), std::process::id(), Id::random().short(16));
    if dir.is_empty() {
        file
    } else {
        format!("{dir}/{file}")
    }
}

/// Whether a file name (the last part of a path) is hidden: a temporary, or anything else whose
/// name begins with `.`, which no reader takes for an object.
#[cfg_attr(not(feature = "sftp"), allow(dead_code))]
pub(super) fn is_hidden(file_name: &str) -> bool {
    file_name.starts_with('.')
}

/// Whether the temporary file `name`, last written at `modified`, is a dead writer's: one of
/// this host whose process is gone, or any older than `stale_after`.
pub(super) fn temporary_is_stale(name: &str, modified: SystemTime, stale_after: Duration) -> bool {
    let mut parts = name.strip_prefix(TEMP_PREFIX).unwrap_or("").split('-');
    if let (Some(host), Some(pid)) = (parts.next(), parts.next().and_then(|p| p.parse().ok())) {
        if host == host_tag() && !crate::host::process_runs(pid) {
            return true;
        }
    }
    SystemTime::now().duration_since(modified).is_ok_and(|age| age > stale_after)
}
