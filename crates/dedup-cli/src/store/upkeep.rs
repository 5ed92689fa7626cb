//! `forget`, `prune` and `repair`: the options read, the library's command run, its lines
//! printed (dedup-store's `text` words them).

use std::collections::HashSet;

use anyhow::{anyhow, Result};
use dedup_store::commands::{self, ForgetRequest, ForgetShow};
use dedup_store::forget::KeepPolicy;
use dedup_store::id::Id;
use dedup_store::prune::PruneOptions;
use dedup_store::repo::{Repository, SnapshotFilter};
use dedup_store::text;

use super::args::{CommonArgs, ForgetArgs, PruneArgs, PruneOptionsArgs, RepairArgs, RepairWhat};
use super::report::print;

/// `dedup store forget`.
pub fn forget(common: &CommonArgs, args: ForgetArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let policy = KeepPolicy {
        last: args.keep_last,
        hourly: args.keep_hourly,
        daily: args.keep_daily,
        weekly: args.keep_weekly,
        monthly: args.keep_monthly,
        yearly: args.keep_yearly,
        within_ns: args.keep_within.as_deref().map(parse_duration).transpose()?,
        tags: args.keep_tags.clone(),
    };
    let request = ForgetRequest {
        snapshots: args.snapshots.clone(),
        policy,
        filter: SnapshotFilter {
            host: args.host.clone(),
            paths: args.paths.iter().map(|p| commands::absolute_bytes(p)).collect(),
        },
        remove_all: args.unsafe_allow_remove_all,
        dry_run: args.dry_run,
    };
    let done = commands::forget_snapshots(&repo, &request, &mut |show| match show {
        ForgetShow::Unreadable(plan) => print(&text::forget_unreadable_lines(plan), common.quiet),
        ForgetShow::Verdicts(plan) => print(&text::forget_verdict_lines(plan), common.quiet),
    })?;
    print(&[text::forget_done_line(&done)], common.quiet)?;
    if args.prune {
        return run_prune(common, &repo, &args.prune_options, args.dry_run, &done.gone());
    }
    Ok(true)
}

/// `2y5m7d3h` in nanoseconds (y = 365 days, m = 30 days, w = 7 days), as `--keep-within` and a
/// profile's `keep-within` take it.
pub(super) fn parse_duration(text: &str) -> Result<i64> {
    text::parse_keep_within(text).map_err(|e| anyhow!("--keep-within {text}: {e}"))
}

/// `dedup store prune`.
pub fn prune(common: &CommonArgs, args: PruneArgs) -> Result<bool> {
    let repo = super::open(common)?;
    run_prune(common, &repo, &args.options, args.dry_run, &HashSet::new())
}

fn run_prune(
    common: &CommonArgs,
    repo: &Repository,
    args: &PruneOptionsArgs,
    dry_run: bool,
    gone: &HashSet<Id>,
) -> Result<bool> {
    let max_unused = text::parse_max_unused(&args.max_unused)?;
    let max_repack_bytes = args
        .max_repack_size
        .as_deref()
        .map(|s| crate::size::parse_size(s).map_err(|e| anyhow!("--max-repack-size {s}: {e}")))
        .transpose()?;
    let options = PruneOptions { max_unused, max_repack_bytes };
    // A line that cannot be printed must not stop a prune between its steps: the first such
    // error is returned once the prune is done.
    let mut unprinted = None;
    let host = super::hostname();
    let report = commands::prune(repo, &options, gone, dry_run, &host, &mut |event| {
        if unprinted.is_none() {
            unprinted = print(&text::prune_event_line(&event, dry_run), common.quiet).err();
        }
    })?;
    if let Some(err) = unprinted {
        return Err(err);
    }
    print(&text::prune_report_lines(&report), common.quiet)?;
    Ok(true)
}

/// `dedup store repair index | snapshots`.
pub fn repair(common: &CommonArgs, args: RepairArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let host = super::hostname();
    match args.what {
        RepairWhat::Index { read_data } => {
            let outcome = commands::repair_index(&repo, &host, read_data)?;
            print(&text::index_repair_lines(&outcome), common.quiet)?;
            Ok(text::index_repair_whole(&outcome))
        }
        RepairWhat::Snapshots { forget } => {
            let outcome = commands::repair_snapshots(&repo, &host, forget)?;
            print(&text::snapshots_repair_lines(&outcome, forget), common.quiet)?;
            Ok(text::snapshots_repair_whole(&outcome, forget))
        }
    }
}
