//! Why the command line's arguments did not turn into the store's options: each message names
//! the option and the value, as a person typed them.

use crate::client::open::OpenError;
use crate::client::profile::ProfileError;

/// Arguments that do not make a request the store can run.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// The profile `-P` names could not be found, read or understood.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A backup with nothing to back up.
    #[error(
        "nothing to back up: give PATHs, --files-from FILE, --stdin, or a profile (-P NAME) \
         with [backup] sources"
    )]
    NothingToBackUp,
    /// `--keep-within` is not a duration.
    #[error("--keep-within {text}: {reason}")]
    KeepWithin {
        /// The value given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `--max-repack-size` is not a size.
    #[error("--max-repack-size {text}: {reason}")]
    MaxRepackSize {
        /// The value given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `copy` without a repository to copy from.
    #[error("no repository to copy from: use --from-repo REPO or set DEDUP_FROM_REPO")]
    NoSourceRepository,
    /// No repository location.
    #[error(transparent)]
    Location(#[from] OpenError),
    /// A value the store refuses (a pattern, a time, a share, a tag list).
    #[error(transparent)]
    Store(#[from] crate::Error),
}
