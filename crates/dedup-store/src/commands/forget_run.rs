//! `forget` from start to end: the snapshots named, or those the --keep-* policy leaves out,
//! refused where the request would remove every snapshot by mistake, then removed (unless a
//! dry run). What the binary shows of the plan it is handed before anything is removed.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::Error;
use crate::forget::KeepPolicy;
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};
use dedup_core::text::quote_path;

use super::forget::{named_snapshots, plan_forget, remove_snapshots, ForgetPlan};

/// What `dedup store forget` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct ForgetRequest {
    /// The snapshots named; when empty, the policy chooses.
    pub snapshots: Vec<String>,
    /// The --keep-* options.
    pub policy: KeepPolicy,
    /// Host and paths of the snapshots the policy looks at.
    pub filter: SnapshotFilter,
    /// --unsafe-allow-remove-all: a policy may keep no snapshot.
    pub remove_all: bool,
    /// Decide and show, remove nothing.
    pub dry_run: bool,
}

/// What `forget` did.
#[derive(Debug, Default)]
pub struct ForgetDone {
    /// The snapshots removed (in a dry run: that would be).
    pub doomed: Vec<Id>,
    /// Whether it was a dry run.
    pub dry_run: bool,
}

impl ForgetDone {
    /// The snapshots a prune run after this one takes as gone: in a dry run the ones that would
    /// have been removed (so that it shows what a real run frees), else none (they are gone).
    pub fn gone(&self) -> HashSet<Id> {
        if self.dry_run {
            self.doomed.iter().copied().collect()
        } else {
            HashSet::new()
        }
    }
}

/// What of a policy's plan is shown, and when.
#[derive(Clone, Copy)]
pub enum ForgetShow<'a> {
    /// First, whatever happens next: the snapshot files that could not be read.
    Unreadable(&'a ForgetPlan),
    /// Once the plan may be carried out: its verdicts.
    Verdicts(&'a ForgetPlan),
}

/// Carries out `request` on `repo`. A policy's plan is handed to `show` before anything is
/// removed; an `Err` from `show` stops everything (nothing is removed that was not shown).
pub fn forget_snapshots<E: From<Error>>(
    repo: &Repository,
    request: &ForgetRequest,
    show: &mut dyn FnMut(ForgetShow<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<ForgetDone, E> {
    let named = !request.snapshots.is_empty();
    if let Some(refusal) = forget_refusal(&request.policy, named, request.remove_all) {
        return Err(Error::Invalid(refusal.to_string()).into());
    }
    let doomed = if named {
        named_snapshots(repo, &request.snapshots)?
    } else {
        let plan = plan_forget(repo, &request.policy, &request.filter)?;
        show(ForgetShow::Unreadable(&plan))?;
        if let Some(refusal) = forget_plan_refusal(&plan).filter(|_| !request.remove_all) {
            return Err(Error::Invalid(refusal).into());
        }
        show(ForgetShow::Verdicts(&plan))?;
        plan.doomed()
    };
    if !request.dry_run {
        remove_snapshots(repo, &doomed)?;
    }
    Ok(ForgetDone { doomed, dry_run: request.dry_run })
}

/// Why `forget` refuses to remove anything, if it does: both ways of choosing at once (`named`:
/// snapshots named; `policy`: the --keep-* options), or a policy that would keep no snapshot
/// without `remove_all` (--unsafe-allow-remove-all).
fn forget_refusal(policy: &KeepPolicy, named: bool, remove_all: bool) -> Option<&'static str> {
    if named {
        return (!policy.is_empty() || remove_all)
            .then_some("give either SNAPSHOTs or --keep-* options, not both");
    }
    if !policy.keeps_nothing() || remove_all {
        return None;
    }
    Some(if policy.is_empty() {
        "no snapshot and no --keep-* option given: nothing would be kept, so nothing is removed \
         (--unsafe-allow-remove-all removes every snapshot)"
    } else {
        "this policy keeps no snapshot (every --keep-* count is 0), so nothing is removed \
         (--unsafe-allow-remove-all removes every snapshot)"
    })
}

/// Why a plan must not be carried out without --unsafe-allow-remove-all, if it must not: a
/// group of which it keeps no snapshot (only --keep-tag alone can do that: any count or
/// --keep-within keeps a group's newest).
fn forget_plan_refusal(plan: &ForgetPlan) -> Option<String> {
    let (key, verdicts) = plan.group_left_empty()?;
    let quote = |bytes: &[u8]| quote_path(Path::new(OsStr::from_bytes(bytes)));
    let paths: Vec<String> = key.paths.iter().map(|p| quote(p)).collect();
    Some(format!(
        "host {}, paths {}: the policy keeps none of its {} snapshot(s), so nothing is removed \
         (--unsafe-allow-remove-all removes them all)",
        quote(key.host.as_bytes()),
        paths.join(" "),
        verdicts.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forget_refuses_to_choose_twice_or_to_keep_nothing() {
        let none = KeepPolicy::default();
        let last = KeepPolicy { last: Some(1), ..KeepPolicy::default() };
        let zero = KeepPolicy { last: Some(0), ..KeepPolicy::default() };
        assert!(forget_refusal(&none, true, false).is_none());
        assert!(forget_refusal(&last, true, false).unwrap().contains("not both"));
        assert!(forget_refusal(&none, true, true).unwrap().contains("not both"));
        assert!(forget_refusal(&none, false, false).unwrap().starts_with("no snapshot"));
        assert!(forget_refusal(&zero, false, false).unwrap().contains("keeps no snapshot"));
        assert!(forget_refusal(&zero, false, true).is_none());
        assert!(forget_refusal(&last, false, false).is_none());
    }

    #[test]
    fn a_dry_run_hands_prune_what_it_would_have_removed() {
        let done = ForgetDone { doomed: vec![Id([1; 32])], dry_run: true };
        assert_eq!(done.gone().len(), 1);
        assert!(ForgetDone { dry_run: false, ..done }.gone().is_empty());
    }
}
