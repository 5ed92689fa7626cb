//! `forget` and `prune`: which snapshots go (and by which rule the others stay), then what the
//! prune will do, printed before it does it.

use std::collections::HashSet;

use anyhow::{bail, Context, Result};
use dedup_store::commands::{self, PruneEvent};
use dedup_store::forget::KeepPolicy;
use dedup_store::id::Id;
use dedup_store::prune::{PruneOptions, PruneStats};
use dedup_store::repo::{Repository, SnapshotFilter};
use indicatif::{HumanBytes, HumanCount};

use super::args::{CommonArgs, ForgetArgs, PruneArgs, PruneOptionsArgs, RepairArgs, RepairWhat};
use super::snapshot_view::quote;
use super::{absolute_bytes, show_time};

/// `dedup store forget`.
pub fn forget(common: &CommonArgs, args: ForgetArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let policy = policy(&args)?;
    let doomed = if args.snapshots.is_empty() {
        if policy.keeps_nothing() && !args.unsafe_allow_remove_all {
            if policy.is_empty() {
                bail!(
                    "no snapshot and no --keep-* option given: nothing would be kept, so nothing \
                     is removed (--unsafe-allow-remove-all removes every snapshot)"
                );
            }
            bail!(
                "this policy keeps no snapshot (every --keep-* count is 0), so nothing is \
                 removed (--unsafe-allow-remove-all removes every snapshot)"
            );
        }
        by_policy(&repo, &policy, &args, common.quiet)?
    } else {
        if !policy.is_empty() || args.unsafe_allow_remove_all {
            bail!("give either SNAPSHOTs or --keep-* options, not both");
        }
        commands::named_snapshots(&repo, &args.snapshots)?
    };
    let verb = if args.dry_run { "would remove" } else { "removed" };
    if !args.dry_run {
        commands::remove_snapshots(&repo, &doomed)?;
    }
    if !common.quiet {
        println!("{verb} {} snapshot(s)", doomed.len());
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
    for err in &plan.unreadable {
        eprintln!("dedup: {err} (left alone)");
    }
    let shown_paths = |paths: &[Vec<u8>]| -> String {
        paths.iter().map(|p| quote(p)).collect::<Vec<_>>().join(" ")
    };
    if !args.unsafe_allow_remove_all {
        // Only --keep-tag alone can get here: any count or --keep-within keeps a group's newest.
        if let Some((key, verdicts)) = plan.group_left_empty() {
            bail!(
                "host {}, paths {}: the policy keeps none of its {} snapshot(s), so nothing is \
                 removed (--unsafe-allow-remove-all removes them all)",
                quote(key.host.as_bytes()),
                shown_paths(&key.paths),
                verdicts.len()
            );
        }
    }
    if !quiet {
        for (key, verdicts) in &plan.groups {
            let keep = verdicts.iter().filter(|v| !v.kept_by.is_empty()).count();
            println!(
                "host {}, paths {}: keep {keep} of {} snapshot(s)",
                quote(key.host.as_bytes()),
                shown_paths(&key.paths),
                verdicts.len()
            );
            for verdict in verdicts {
                let (what, why) = if verdict.kept_by.is_empty() {
                    ("remove", String::new())
                } else {
                    ("keep  ", verdict.kept_by.join(", "))
                };
                // An incomplete snapshot is kept only in addition to the complete ones.
                let mark = if verdict.incomplete { " (incomplete)" } else { "" };
                let (id, time) = (verdict.id.short(8), show_time(verdict.time));
                println!("  {what}  {id}  {time}  {why}{mark}");
            }
        }
    }
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

/// `2y5m7d3h` in nanoseconds (y = 365 days, m = 30 days, w = 7 days).
pub(super) fn parse_duration(text: &str) -> Result<i64> {
    let mut total: i64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let hours: i64 = match c {
            'y' => 365 * 24,
            'm' => 30 * 24,
            'w' => 7 * 24,
            'd' => 24,
            'h' => 1,
            _ => bail!("--keep-within {text}: unknown unit {c:?} (use y, m, w, d, h)"),
        };
        let n: i64 = number
            .parse()
            .with_context(|| format!("--keep-within {text}: a number must precede {c:?}"))?;
        number.clear();
        total = n
            .checked_mul(hours * 3600 * 1_000_000_000)
            .and_then(|ns| total.checked_add(ns))
            .with_context(|| format!("--keep-within {text}: too long"))?;
    }
    if !number.is_empty() || total == 0 {
        bail!("--keep-within {text}: give a duration such as 7d or 1y6m");
    }
    Ok(total)
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
    let report = commands::prune(repo, &options, gone, dry_run, &host, &mut |event| match event {
        PruneEvent::TemporariesRemoved(n) if !quiet => {
            println!("removed {n} partial file(s) left by interrupted writers")
        }
        PruneEvent::PendingUnreadable(plan) => {
            eprintln!("dedup: deletion plan {plan}: left alone; `dedup store check` reports it")
        }
        PruneEvent::PendingFinished(n) if !quiet => {
            println!("finished the deletions of {n} earlier prune(s)")
        }
        PruneEvent::Warning(warning) => eprintln!("dedup: warning: {warning}"),
        PruneEvent::Planned(stats) if !quiet => print_plan(stats, dry_run),
        _ => {}
    })?;
    let Some(planned) = report.planned else {
        if !quiet {
            println!("nothing to prune: every pack is in use");
        }
        return Ok(true);
    };
    match report.outcome {
        Some(outcome) if !quiet && outcome.deleted => println!(
            "done: {} pack(s) written, {} freed",
            outcome.packs_written,
            HumanBytes(planned.bytes_freed)
        ),
        Some(outcome) if !quiet => println!(
            "{} pack(s) written; the deletions wait for {} session(s) still writing to the \
             repository: the next prune finishes them",
            outcome.packs_written, outcome.waiting_for
        ),
        _ => {}
    }
    Ok(true)
}

/// `dedup store repair index | snapshots`.
pub fn repair(common: &CommonArgs, args: RepairArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let host = super::hostname();
    match args.what {
        RepairWhat::Index { read_data } => {
            let outcome = commands::repair_index(&repo, &host, read_data)?;
            for damaged in &outcome.packs_damaged {
                eprintln!("dedup: {damaged} (left in place, not indexed)");
            }
            for unread in &outcome.packs_unread {
                eprintln!(
                    "dedup: {unread} (left in place; what the old index said it holds stays \
                     indexed: run `dedup store repair index` again once it reads)"
                );
            }
            for pack in &outcome.packs_salvaged {
                let fate = if pack.deleted {
                    "the pack is deleted"
                } else {
                    "the pack is left in place, not indexed: no trailer or index file proves \
                     which blobs it holds, so blobs of it may still be found"
                };
                eprintln!(
                    "dedup: {}: damaged: {}: {} blob(s) copied into new packs, {} already in \
                     other packs, {} lost (they do not authenticate); {fate}",
                    pack.name, pack.damage, pack.blobs_saved, pack.blobs_elsewhere, pack.blobs_lost
                );
            }
            if outcome.packs_salvaged.iter().any(|p| p.blobs_lost > 0) && !common.quiet {
                println!(
                    "some blobs are lost: `dedup store repair snapshots` writes snapshots \
                     without the files that held them, and the next backup stores them again"
                );
            }
            if !common.quiet {
                println!(
                    "indexed {} pack(s) from their trailers, replacing {} index file(s)",
                    outcome.packs_indexed, outcome.index_files_replaced
                );
            }
            let whole = outcome.packs_salvaged.iter().all(|p| p.blobs_lost == 0 && p.deleted);
            Ok(outcome.packs_damaged.is_empty() && outcome.packs_unread.is_empty() && whole)
        }
        RepairWhat::Snapshots { forget } => {
            let outcome = commands::repair_snapshots(&repo, &host, forget)?;
            let fate = if forget { "removed" } else { "kept" };
            for fix in &outcome.rewritten {
                println!(
                    "snapshot {}: repaired copy {} written (original {fate}); left out:",
                    fix.old.short(8),
                    fix.new.short(8)
                );
                for line in &fix.dropped {
                    println!("  {line}");
                }
            }
            for (id, why) in &outcome.unreadable {
                if forget {
                    println!("snapshot {}: does not read ({why}); removed", id.short(8));
                } else {
                    eprintln!(
                        "dedup: snapshot {}: does not read ({why}); nothing in it can be \
                         recovered: --forget removes it",
                        id.short(8)
                    );
                }
            }
            for (id, why) in &outcome.left_alone {
                eprintln!("dedup: snapshot {}: could not be read ({why}); left alone", id.short(8));
            }
            let nothing = outcome.rewritten.is_empty() && outcome.unreadable.is_empty();
            if nothing && outcome.left_alone.is_empty() && !common.quiet {
                println!("no snapshot needs repair");
            }
            Ok((forget || outcome.unreadable.is_empty()) && outcome.left_alone.is_empty())
        }
    }
}

fn print_plan(stats: &PruneStats, dry_run: bool) {
    let will = if dry_run { "would" } else { "will" };
    println!(
        "{} snapshot(s); {} of {} blobs in use",
        stats.snapshots,
        HumanCount(stats.blobs_used),
        HumanCount(stats.blobs)
    );
    println!(
        "packs: {} kept, {} to repack, {} to delete, {} left by interrupted sessions to delete",
        stats.packs_keep, stats.packs_repack, stats.packs_delete, stats.packs_unindexed
    );
    println!(
        "prune {will} free {} of {} and copy {} into new packs, replacing {} index file(s)",
        HumanBytes(stats.bytes_freed),
        HumanBytes(stats.bytes),
        HumanBytes(stats.bytes_repack),
        stats.index_files
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_add_their_units() {
        let hour = 3600 * 1_000_000_000i64;
        assert_eq!(parse_duration("3h").unwrap(), 3 * hour);
        assert_eq!(parse_duration("1y2m1w1d").unwrap(), (365 + 60 + 7 + 1) * 24 * hour);
        for bad in ["", "7", "d", "3x", "0d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
