//! Why an action could not run, or could not show or log all it did.

use std::io;
use std::path::PathBuf;

use dedup_core::text::quote_path;

use crate::{PlanError, ScriptError};

/// Why an action could not run, or could not show all it did.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A `--reference` directory cannot be resolved.
    #[error("bad --reference")]
    Reference(#[source] io::Error),
    /// The plan cannot be made.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The script cannot be written.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// The log cannot be opened.
    #[error("cannot write the log {}", quote_path(.0))]
    OpenLog(PathBuf, #[source] io::Error),
    /// A log record cannot be made.
    #[error(transparent)]
    Record(io::Error),
    /// The log cannot be written.
    #[error("cannot write the log")]
    Log(#[source] io::Error),
    /// A change line cannot be written.
    #[error("cannot write output")]
    Output(#[source] io::Error),
    /// What was written cannot be flushed.
    #[error("cannot write to standard output")]
    Stdout(#[source] io::Error),
}
