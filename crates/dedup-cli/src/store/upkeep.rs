//! `forget`, `prune` and `repair`: the library's command run with the options the arguments
//! make, its lines printed (dedup-store's `text` words them).

use std::collections::HashSet;

use anyhow::Result;
use dedup_store::args::{
    CommonArgs, ForgetArgs, PruneArgs, PruneOptionsArgs, RepairArgs, RepairWhat,
};
use dedup_store::commands::{self, ForgetShow};
use dedup_store::id::Id;
use dedup_store::repo::{this_host, Repository};
use dedup_store::text;

use super::report::print;

/// `dedup store forget`.
pub fn forget(common: &CommonArgs, args: ForgetArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let request = args.request()?;
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
    let options = args.options()?;
    // A line that cannot be printed must not stop a prune between its steps: the first such
    // error is returned once the prune is done.
    let mut unprinted = None;
    let host = this_host();
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
    let repo = super::open_uncached(common)?;
    let host = this_host();
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
