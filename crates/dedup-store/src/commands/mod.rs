//! The store's commands, one file each: each takes the open [`Repository`](crate::repo::Repository)
//! and its options, does the whole job (the order of steps that keeps a repository safe
//! included), and returns what it found or did for the binary to show. Nothing here prints.

mod backup_empty;
mod backup_options;
mod backup_parent;
mod backup_run;
mod copy;
mod diff;
mod dump;
mod dump_run;
mod find;
mod forget;
mod forget_run;
mod history_options;
mod ls;
mod pattern;
mod prune;
mod restore;
mod restore_run;
mod rewrite;
mod selection;
mod snapshots;
mod stats;
mod tag;
mod write_session;

pub use backup_options::{absolute_bytes, backup_options, list_file_lines, BackupRequest};
pub use backup_parent::choose_parent;
pub use backup_run::{backup_counted, Expected};
pub use copy::{copy, Copied, CopyReport};
pub use diff::{diff, Change, DiffEntry};
pub use dump::{open_file, write_file};
pub use dump_run::{dump_file, Dumped};
pub use find::{find, FindOptions, FindReport, Found};
pub use forget::{named_snapshots, plan_forget, remove_snapshots, ForgetPlan};
pub use forget_run::{forget_snapshots, ForgetDone, ForgetRequest, ForgetShow};
pub use history_options::{
    check_copy_pair, rewrite_patterns, selection_of, split_commas, tag_change,
};
pub use ls::{ls, trim_slashes};
pub use pattern::Patterns;
pub use prune::{prune, PruneEvent, PruneReport};
pub use restore::restore_node;
pub use restore_run::{restore_snapshot, RestoreOutcome, RestoreRequest};
pub use rewrite::{rewrite, RewriteOptions, RewriteReport, Rewritten};
pub use selection::{select, Selected, Selection};
pub use snapshots::{snapshots, SnapshotList};
pub use stats::{stats, RepoStats};
pub use tag::{tag, Retagged, TagChange, TagReport};

pub use crate::check::{check, CheckReport, ReadData};
pub use crate::repair::{
    repair_index, repair_snapshots, IndexRepair, SalvagedPack, SnapshotRepair, SnapshotsRepair,
};
pub use crate::restore::{
    restore, verify, Protected, RestoreOptions, RestoreSummary, VerifySummary,
};
