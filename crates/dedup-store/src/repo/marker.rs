//! Writer markers (docs/store-format.md §12): a writing session announces itself before its
//! first write and withdraws when its snapshot is written, so a prune can tell whether deleting
//! at once is safe.

use super::{now_ns, seal_file, Repository};
use crate::error::{Error, Result};
use crate::format::Magic;
use crate::id::Id;

/// A session's marker in `writers/`.
pub struct WriterMarker {
    name: String,
}

fn encode(host: &str, pid: u32, started: i64, refreshed: i64) -> Vec<u8> {
    let mut out = vec![1u8];
    out.extend_from_slice(&(host.len() as u32).to_le_bytes());
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(&pid.to_le_bytes());
    out.extend_from_slice(&started.to_le_bytes());
    out.extend_from_slice(&refreshed.to_le_bytes());
    out
}

impl WriterMarker {
    /// Writes a marker for this process on `host`.
    pub fn create(repo: &Repository, host: &str) -> Result<WriterMarker> {
        let now = now_ns();
        let bytes =
            seal_file(repo.sealer(), Magic::Writer, &encode(host, std::process::id(), now, now));
        let name = format!("writers/{}", Id::random());
        repo.backend().put(&name, &bytes).map_err(|e| Error::io(&name, e))?;
        Ok(WriterMarker { name })
    }

    /// Withdraws the marker (after the session's snapshot is written).
    pub fn remove(self, repo: &Repository) -> Result<()> {
        repo.backend().delete(&self.name).map_err(|e| Error::io(&self.name, e))
    }
}
