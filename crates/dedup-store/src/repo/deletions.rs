//! Deletion plans and the liveness of writing sessions (docs/store-format.md §12): what prune
//! has planned to delete, which a writer must treat as gone, and whether the sessions a plan
//! waits for are still at work.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use super::{now_ns, open_sealed, seal_file, Repository};
use crate::error::{Error, Result};
use crate::format::{DeletionPlan, Magic, WriterInfo};
use crate::host::{process_runs, this_host};
use crate::id::Id;

/// The folder of deletion plans.
const DELETIONS: &str = "deletions";

/// A marker not rewritten for this long belongs to a session that is hung or gone (§12).
pub const STALE_AFTER: Duration = Duration::from_secs(3600);

/// Whether a marker holds up deletion: present, and neither of a dead process of this host nor
/// left unrefreshed for [`STALE_AFTER`] (by the storage's clock where it gives one).
fn marker_is_live(info: Option<&WriterInfo>, modified: Option<SystemTime>) -> bool {
    if let Some(info) = info {
        if info.host == this_host() && !process_runs(info.pid) {
            return false;
        }
    }
    let age = match (modified, info) {
        (Some(modified), _) => SystemTime::now().duration_since(modified).unwrap_or_default(),
        (None, Some(info)) => Duration::from_nanos(
            u64::try_from(now_ns().saturating_sub(info.refreshed)).unwrap_or(0),
        ),
        // Neither a readable marker nor a time: assume the worst, that it is at work.
        (None, None) => Duration::ZERO,
    };
    age < STALE_AFTER
}

impl Repository {
    /// Names of the deletion plans present.
    pub fn list_deletion_plans(&self) -> Result<Vec<String>> {
        let listing = self.backend().list(DELETIONS).map_err(|e| Error::io(DELETIONS, e))?;
        Ok(listing.into_iter().map(|o| o.name).collect())
    }

    /// Reads the deletion plan `name`.
    pub fn read_deletion_plan(&self, name: &str) -> Result<DeletionPlan> {
        let bytes = self.backend().get(name).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Missing { object: name.to_string() },
            _ => Error::io(name, e),
        })?;
        let plain = open_sealed(self.sealer(), &bytes, Magic::Deletion)
            .map_err(|e| Error::decode(name, e))?;
        DeletionPlan::decode(&plain).map_err(|e| Error::decode(name, e))
    }

    /// Writes a deletion plan under a random name; returns the name.
    pub fn write_deletion_plan(&self, plan: &DeletionPlan) -> Result<String> {
        let bytes = seal_file(self.sealer(), Magic::Deletion, &plan.encode());
        let name = format!("{DELETIONS}/{}", Id::random());
        self.backend().put(&name, &bytes).map_err(|e| Error::io(&name, e))?;
        Ok(name)
    }

    /// Fails, naming the refused request, when the storage does not let these credentials
    /// delete (an append-only arrangement, §12): a command that deletes asks before it changes
    /// anything, so that it never stops half-way. It deletes a name nobody uses (a random
    /// `writers/` one): a policy refuses the request whether the object exists or not, and a
    /// storage that allows it has nothing to delete.
    pub fn require_deletion_rights(&self) -> Result<()> {
        let name = format!("writers/{}", Id::random());
        self.backend().delete(&name).map_err(|e| Error::io(&name, e))
    }

    /// Deletes the object `name` (a plan, a pack, an index file).
    pub(crate) fn delete_object(&self, name: &str) -> Result<()> {
        self.backend().delete(name).map_err(|e| Error::io(name, e))
    }

    /// Deletes the objects `names`, in no particular order and as few requests as the storage
    /// allows; an error names an object that failed.
    pub(crate) fn delete_objects(&self, names: &[String]) -> Result<()> {
        self.backend().delete_many(names).map_err(|failed| Error::io(failed.name, failed.cause))
    }

    /// Every pack that a readable deletion plan names: a writer treats them as gone, neither
    /// deduplicating against them nor adopting them. A plan that does not read is reported by
    /// `check` and never executed (prune cannot read it either), so it endangers nothing.
    pub fn planned_deletions(&self) -> Result<HashSet<Id>> {
        let mut packs = HashSet::new();
        for name in self.list_deletion_plans()? {
            if let Ok(plan) = self.read_deletion_plan(&name) {
                packs.extend(plan.packs);
            }
        }
        Ok(packs)
    }

    /// Names of the writer markers of sessions still at work (not stale), less `except`.
    pub fn live_writers(&self, except: Option<&str>) -> Result<Vec<String>> {
        Ok(self.writers_by_liveness(except)?.0)
    }

    /// Names of the stale writer markers (of sessions killed, or hung for [`STALE_AFTER`]), less
    /// `except`: such a session may have left packs that no index lists.
    pub fn stale_writers(&self, except: Option<&str>) -> Result<Vec<String>> {
        Ok(self.writers_by_liveness(except)?.1)
    }

    /// The writer markers present, less `except`: the live ones, then the stale ones.
    fn writers_by_liveness(&self, except: Option<&str>) -> Result<(Vec<String>, Vec<String>)> {
        let listing = self.backend().list("writers").map_err(|e| Error::io("writers", e))?;
        let (mut live, mut stale) = (Vec::new(), Vec::new());
        for object in listing {
            if Some(object.name.as_str()) == except {
                continue;
            }
            let info = self.backend().get(&object.name).ok().and_then(|bytes| {
                let plain = open_sealed(self.sealer(), &bytes, Magic::Writer).ok()?;
                WriterInfo::decode(&plain).ok()
            });
            // Gone since the listing: the session withdrew it.
            if info.is_none() && !self.backend().exists(&object.name).unwrap_or(true) {
                continue;
            }
            if marker_is_live(info.as_ref(), object.modified) {
                live.push(object.name);
            } else {
                stale.push(object.name);
            }
        }
        Ok((live, stale))
    }

    /// Whether any of the markers `names` is still present and fresh.
    pub fn any_live(&self, names: &[String]) -> Result<bool> {
        if names.is_empty() {
            return Ok(false);
        }
        let live: HashSet<String> = self.live_writers(None)?.into_iter().collect();
        Ok(names.iter().any(|name| live.contains(name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(host: &str, pid: u32) -> WriterInfo {
        WriterInfo { host: host.into(), pid, started: now_ns(), refreshed: now_ns() }
    }

    #[test]
    fn asking_for_deletion_rights_where_they_are_granted_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let backend = std::sync::Arc::new(crate::backend::LocalBackend::new(dir.path().join("r")));
        let repo = Repository::init(backend, crate::repo::InitOptions::default()).unwrap();
        let before = repo.backend().list("writers").unwrap();
        repo.require_deletion_rights().unwrap();
        assert_eq!(repo.backend().list("writers").unwrap(), before);
    }

    #[test]
    fn a_marker_of_a_dead_process_here_or_an_old_one_is_stale() {
        let now = Some(SystemTime::now());
        let me = std::process::id();
        assert!(marker_is_live(Some(&info(&this_host(), me)), now));
        // pid 0 is never a process a session runs as.
        assert!(!marker_is_live(Some(&info(&this_host(), 0)), now));
        // Another host's process cannot be asked: its marker's age decides.
        assert!(marker_is_live(Some(&info("elsewhere.invalid", 0)), now));
        let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(1);
        assert!(!marker_is_live(Some(&info("elsewhere.invalid", 0)), Some(old)));
        assert!(marker_is_live(None, now));
        assert!(!marker_is_live(None, Some(old)));
    }
}
