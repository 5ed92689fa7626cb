//! `prune`: the whole of a prune in the order that keeps the repository safe — temporaries of
//! interrupted writers removed, the deletions of earlier prunes finished, then a plan made and
//! carried out (new packs and index first, deletions only after, docs/store-format.md §12).
//! Each step is told to the caller as it happens, so that a person sees the plan before it runs.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::id::Id;
use crate::prune::{execute_pending, plan, run, PruneOptions, PruneOutcome, PruneStats};
use crate::repo::{Repository, STALE_AFTER};

/// A step of a prune, as it happens.
#[derive(Debug)]
pub enum PruneEvent<'a> {
    /// Partial files left by interrupted writers were removed (how many).
    TemporariesRemoved(u64),
    /// A deletion plan of an earlier prune does not read: left alone (`check` reports it).
    PendingUnreadable(&'a str),
    /// The deletions of this many earlier prunes were finished.
    PendingFinished(u64),
    /// Something the plan noticed that the user should know.
    Warning(&'a str),
    /// The plan, about to be carried out (or not, in a dry run).
    Planned(&'a PruneStats),
}

/// What a prune did.
#[derive(Debug, Default)]
pub struct PruneReport {
    /// The plan's figures; `None` when every pack is in use (nothing to prune).
    pub planned: Option<PruneStats>,
    /// What carrying the plan out did; `None` in a dry run or when there was nothing to do.
    pub outcome: Option<PruneOutcome>,
}

/// Prunes `repo` as a writing session of `host`, with `options`. `gone` are snapshots a dry run
/// of `forget` would have removed, counted as removed. A dry run only plans.
pub fn prune(
    repo: &Repository,
    options: &PruneOptions,
    gone: &HashSet<Id>,
    dry_run: bool,
    host: &str,
    events: &mut dyn FnMut(PruneEvent<'_>),
) -> Result<PruneReport> {
    // Markers of sessions already gone (killed, or kept by append-only credentials): this
    // prune lists `data/` itself and collects what they left, so they mean nothing after it.
    let mut stale_writers = Vec::new();
    if !dry_run {
        // Asked first, so that credentials that may not delete stop the prune before it writes.
        repo.require_deletion_rights()?;
        stale_writers = repo.stale_writers(None)?;
        let removed = repo.backend().remove_stale_temporaries(STALE_AFTER).map_err(|e| {
            Error::io("the temporary files of interrupted writers: cannot remove them", e)
        })?;
        if removed > 0 {
            events(PruneEvent::TemporariesRemoved(removed));
        }
        let pending = execute_pending(repo)?;
        for unreadable in &pending.unreadable {
            events(PruneEvent::PendingUnreadable(unreadable));
        }
        if pending.executed > 0 {
            events(PruneEvent::PendingFinished(pending.executed));
        }
    }
    let plan = plan(repo, options, gone)?;
    for warning in &plan.warnings {
        events(PruneEvent::Warning(warning));
    }
    if plan.is_empty() {
        repo.delete_objects(&stale_writers)?;
        return Ok(PruneReport::default());
    }
    events(PruneEvent::Planned(&plan.stats));
    let outcome = if dry_run { None } else { Some(run(repo, &plan, host)?) };
    repo.delete_objects(&stale_writers)?;
    Ok(PruneReport { planned: Some(plan.stats.clone()), outcome })
}
