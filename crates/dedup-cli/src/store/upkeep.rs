//! `forget`, `prune` and `repair`: the options read, the library's command run, its lines
//! printed (dedup-store's `text` words them).

use std::collections::HashSet;

use anyhow::{bail, Context, Result};
use dedup_store::commands;
use dedup_store::forget::KeepPolicy;
use dedup_store::id::Id;
use dedup_store::prune::PruneOptions;
use dedup_store::repo::{Repository, SnapshotFilter};
use dedup_store::text::{self, Line};

use super::absolute_bytes;
use super::args::{CommonArgs, ForgetArgs, PruneArgs, PruneOptionsArgs, RepairArgs, RepairWhat};
use super::report::{print, say};

/// `dedup store forget`.
pub fn forget(common: &CommonArgs, args: ForgetArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let policy = policy(&args)?;
    let named = !args.snapshots.is_empty();
    if let Some(refusal) = text::forget_refusal(&policy, named, args.unsafe_allow_remove_all) {
        bail!(refusal);
    }
    let doomed = if named {
        commands::named_snapshots(&repo, &args.snapshots)?
    } else {
        by_policy(&repo, &policy, &args, common.quiet)?
    };
    let verb = if args.dry_run { "would remove" } else { "removed" };
    if !args.dry_run {
        commands::remove_snapshots(&repo, &doomed)?;
    }
    if !common.quiet {
        say(format_args!("{verb} {} snapshot(s)", doomed.len()))?;
    }
    if args.prune {
        let gone = if args.dry_run { doomed.into_iter().collect() } else { HashSet::new() };
        return run_prune(common, &repo, &args.prune_options, args.dry_run, &gone);
    }
    Ok(true)
}

/// Applies the policy group by group, printing each verdict; returns the snapshots to remove.
fn by_policy(
    repo: &Repository,
    policy: &KeepPolicy,
    args: &ForgetArgs,
    quiet: bool,
) -> Result<Vec<Id>> {
    let wanted: Vec<Vec<u8>> = args.paths.iter().map(|p| absolute_bytes(p)).collect();
    let filter = SnapshotFilter { host: args.host.clone(), paths: wanted };
    let plan = commands::plan_forget(repo, policy, &filter)?;
    let lines = text::forget_lines(&plan);
    print(lines.iter().filter(|l| matches!(l, Line::Problem(_))), quiet)?;
    if let Some(refusal) = text::forget_plan_refusal(&plan) {
        if !args.unsafe_allow_remove_all {
            bail!(refusal);
        }
    }
    print(lines.iter().filter(|l| !matches!(l, Line::Problem(_))), quiet)?;
    Ok(plan.doomed())
}

/// The policy of the --keep-* options.
fn policy(args: &ForgetArgs) -> Result<KeepPolicy> {
    let within_ns = args.keep_within.as_deref().map(parse_duration).transpose()?;
    Ok(KeepPolicy {
        last: args.keep_last,
        hourly: args.keep_hourly,
        daily: args.keep_daily,
        weekly: args.keep_weekly,
        monthly: args.keep_monthly,
        yearly: args.keep_yearly,
        within_ns,
        tags: args.keep_tags.clone(),
    })
}

/// `2y5m7d3h` in nanoseconds (y = 365 days, m = 30 days, w = 7 days), as `--keep-within` and a
/// profile's `keep-within` take it.
pub(super) fn parse_duration(text: &str) -> Result<i64> {
    text::parse_keep_within(text).map_err(|e| anyhow::anyhow!("--keep-within {text}: {e}"))
}

/// `dedup store prune`.
pub fn prune(common: &CommonArgs, args: PruneArgs) -> Result<bool> {
    let repo = super::open(common)?;
    run_prune(common, &repo, &args.options, args.dry_run, &HashSet::new())
}

fn prune_options(args: &PruneOptionsArgs) -> Result<PruneOptions> {
    let percent: f64 = args
        .max_unused
        .trim_end_matches('%')
        .parse()
        .ok()
        .filter(|p: &f64| (0.0..=100.0).contains(p))
        .with_context(|| {
            format!("--max-unused {}: give a percentage from 0 to 100", args.max_unused)
        })?;
    let max_repack_bytes = args
        .max_repack_size
        .as_deref()
        .map(|s| {
            crate::size::parse_size(s).map_err(|e| anyhow::anyhow!("--max-repack-size {s}: {e}"))
        })
        .transpose()?;
    Ok(PruneOptions { max_unused: percent / 100.0, max_repack_bytes })
}

fn run_prune(
    common: &CommonArgs,
    repo: &Repository,
    args: &PruneOptionsArgs,
    dry_run: bool,
    gone: &HashSet<Id>,
) -> Result<bool> {
    let options = prune_options(args)?;
    let quiet = common.quiet;
    let host = super::hostname();
    // A line that cannot be printed must not stop a prune between its steps: the first such
    // error is returned once the prune is done.
    let mut unprinted = None;
    let report = commands::prune(repo, &options, gone, dry_run, &host, &mut |event| {
        if unprinted.is_none() {
            unprinted = print(&text::prune_event_line(&event, dry_run), quiet).err();
        }
    })?;
    if let Some(err) = unprinted {
        return Err(err);
    }
    print(&text::prune_report_lines(&report), quiet)?;
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
