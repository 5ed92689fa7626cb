//! What `prune` says: each step as it happens, the plan before it runs, and what it did.

use dedup_core::text::{Bytes, Count};

use super::Line;
use crate::commands::{PruneEvent, PruneReport};
use crate::error::{Error, Result};
use crate::prune::PruneStats;

/// `--max-unused`: a percentage from 0 to 100 (its `%` optional), as a share from 0 to 1.
pub fn parse_max_unused(text: &str) -> Result<f64> {
    let percent = text.trim_end_matches('%').parse::<f64>().ok();
    match percent.filter(|p| (0.0..=100.0).contains(p)) {
        Some(percent) => Ok(percent / 100.0),
        None => {
            Err(Error::Invalid(format!("--max-unused {text}: give a percentage from 0 to 100")))
        }
    }
}

/// The line of a step of a prune, as it happens.
pub fn prune_event_line(event: &PruneEvent<'_>, dry_run: bool) -> Vec<Line> {
    match event {
        PruneEvent::TemporariesRemoved(n) => {
            vec![Line::Info(format!("removed {n} partial file(s) left by interrupted writers"))]
        }
        PruneEvent::PendingUnreadable(plan) => vec![Line::Problem(format!(
            "deletion plan {plan}: left alone; `dedup store check` reports it"
        ))],
        PruneEvent::PendingFinished(n) => {
            vec![Line::Info(format!("finished the deletions of {n} earlier prune(s)"))]
        }
        PruneEvent::Warning(warning) => vec![Line::Problem(format!("warning: {warning}"))],
        PruneEvent::Planned(stats) => prune_plan_lines(stats, dry_run),
    }
}

/// The plan, before it runs: what is in use, what happens to the packs, what it frees.
pub fn prune_plan_lines(stats: &PruneStats, dry_run: bool) -> Vec<Line> {
    let will = if dry_run { "would" } else { "will" };
    vec![
        Line::Info(format!(
            "{} snapshot(s); {} of {} blobs in use",
            stats.snapshots,
            Count(stats.blobs_used),
            Count(stats.blobs)
        )),
        Line::Info(format!(
            "packs: {} kept, {} to repack, {} to delete, {} left by interrupted sessions to delete",
            stats.packs_keep, stats.packs_repack, stats.packs_delete, stats.packs_unindexed
        )),
        Line::Info(format!(
            "prune {will} free {} of {} and copy {} into new packs, replacing {} index file(s)",
            Bytes(stats.bytes_freed),
            Bytes(stats.bytes),
            Bytes(stats.bytes_repack),
            stats.index_files
        )),
    ]
}

/// What the prune did: nothing to do, done, or its deletions left for a later prune.
pub fn prune_report_lines(report: &PruneReport) -> Vec<Line> {
    let Some(planned) = &report.planned else {
        return vec![Line::Info("nothing to prune: every pack is in use".into())];
    };
    match &report.outcome {
        Some(outcome) if outcome.deleted => vec![Line::Info(format!(
            "done: {} pack(s) written, {} freed",
            outcome.packs_written,
            Bytes(planned.bytes_freed)
        ))],
        Some(outcome) => vec![Line::Info(format!(
            "{} pack(s) written; the deletions wait for {} session(s) still writing to the \
             repository: the next prune finishes them",
            outcome.packs_written, outcome.waiting_for
        ))],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_unused_is_a_percentage() {
        assert_eq!(parse_max_unused("5%").unwrap(), 0.05);
        assert_eq!(parse_max_unused("0").unwrap(), 0.0);
        assert_eq!(parse_max_unused("100").unwrap(), 1.0);
        for bad in ["101", "-1", "x", "", "NaN"] {
            assert!(parse_max_unused(bad).is_err(), "{bad}");
        }
    }
}
