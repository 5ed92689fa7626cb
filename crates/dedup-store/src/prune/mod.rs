//! `prune`: delete what no snapshot reaches, without locks and while backups run
//! (docs/store-format.md §12). [`plan`] marks and decides (then guards against misplaced blobs),
//! touching nothing; [`run`] carries a plan out; [`execute_pending`] finishes the deletions that
//! earlier prunes had to defer.

mod authentic;
mod execute;
mod mark;
mod pending;
mod plan;
mod repack;

pub use execute::{execute_pending, run, PendingOutcome, PruneOutcome};
pub use mark::Marks;
pub use plan::{Fate, Plan, PruneOptions, PruneStats};

use std::collections::HashSet;

use crate::error::Result;
use crate::id::Id;
use crate::repo::Repository;

/// Works out what a prune with `options` would do, as if the snapshots in `gone` were not there
/// (a dry run of `forget --prune`). Refuses on a repository whose snapshots, index or packs are
/// damaged or missing, naming the object: `check` and `repair` come first.
pub fn plan(repo: &Repository, options: &PruneOptions, gone: &HashSet<Id>) -> Result<Plan> {
    let (mut plan, present) = plan::draft(repo, options, gone)?;
    authentic::keep_the_only_authentic_copies(repo, &mut plan, &present)?;
    if plan.is_empty() {
        plan.stats.index_files = 0;
    }
    Ok(plan)
}
