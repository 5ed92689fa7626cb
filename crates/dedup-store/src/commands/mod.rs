//! The store's commands, one file each: each takes the open [`Repository`](crate::repo::Repository)
//! and its options, does the whole job (the order of steps that keeps a repository safe
//! included), and returns what it found or did for the binary to show. Nothing here prints.

mod backup_parent;
mod diff;
mod dump;
mod forget;
mod ls;
mod prune;
mod restore;
mod snapshots;
mod stats;

pub use backup_parent::choose_parent;
pub use diff::{diff, Change, DiffEntry};
pub use dump::{open_file, write_file};
pub use forget::{named_snapshots, plan_forget, remove_snapshots, ForgetPlan};
pub use ls::{ls, trim_slashes};
pub use prune::{prune, PruneEvent, PruneReport};
pub use restore::restore_node;
pub use snapshots::{snapshots, SnapshotList};
pub use stats::{stats, RepoStats};

pub use crate::check::{check, CheckReport, ReadData};
pub use crate::repair::{
    repair_index, repair_snapshots, IndexRepair, SalvagedPack, SnapshotRepair, SnapshotsRepair,
};
pub use crate::restore::{restore, verify, RestoreOptions, RestoreSummary, VerifySummary};
