//! `prune`: delete what no snapshot reaches, without locks and while backups run
//! (docs/store-format.md §12). [`plan`] marks and decides, touching nothing; [`run`] carries a
//! plan out; [`execute_pending`] finishes the deletions that earlier prunes had to defer.

mod authentic;
mod execute;
mod mark;
mod pending;
mod plan;
mod repack;

pub use execute::{execute_pending, run, PendingOutcome, PruneOutcome};
pub use mark::Marks;
pub use plan::{plan, Fate, Plan, PruneOptions, PruneStats};
