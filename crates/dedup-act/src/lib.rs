//! Acting on duplicates without losing data. Every action is a [`Plan`] built from a report
//! (which file of each group is kept, what happens to the others); each step is validated again
//! just before it runs (same device, inode, size, mtime and ctime as in the report, content still
//! equal to the kept file byte for byte, no symlink or directory swapped in) and replacements are
//! atomic (a new name in the same directory, then `rename` over the duplicate). A dry run goes
//! through the same validation and prints what the real run would do. The file operations
//! themselves (opening without following links, validating, comparing, replacing, sharing
//! extents, cleaning up temporary names) are dedup-fs's; this crate decides what to do with them.

mod action;
mod alias;
mod anchor;
#[cfg(feature = "clap")]
pub mod args;
mod dest;
mod dir_plan;
mod execute;
mod keep;
mod lines;
mod log;
mod place;
mod plan;
mod run;
mod run_error;
mod script;
mod show;
mod skip;
mod steps;

pub use action::Action;
pub use dedup_fs::is_temp_name;
pub use execute::{execute, Done, ExecOptions, ExecSummary, StepEvents};
pub use keep::{conflicting_rules, KeepPolicy, KeepRule};
pub use lines::{cleaned_line, not_cleaned_line, skipped_line, summary_line};
pub use log::LogRecord;
pub use place::Places;
pub use plan::build_plan;
pub use run::{run, RunOptions};
pub use run_error::RunError;
pub use script::{write_script, ScriptError};
pub use skip::SkipReason;
pub use steps::{DirRemoval, Plan, PlanError, PlanFile, PlanOptions, Skipped, Step};
