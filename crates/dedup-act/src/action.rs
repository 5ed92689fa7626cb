//! The actions: what happens to each duplicate that is not kept.

use std::path::PathBuf;

/// What to do with every file of a group except the kept one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Replace the duplicate with a hard link to the kept file.
    Link,
    /// Make the duplicate share the kept file's extents (FIDEDUPERANGE); it stays its own inode.
    Reflink,
    /// Replace the duplicate with a symbolic link to the kept file's absolute path.
    Symlink,
    /// Delete the duplicate.
    Remove,
    /// Move the duplicate under this directory, keeping its path below it.
    Move {
        /// Destination directory (absolute).
        to: PathBuf,
    },
}

impl Action {
    /// The command's name, as printed in plans and logs.
    pub fn verb(&self) -> &'static str {
        match self {
            Action::Link => "link",
            Action::Reflink => "reflink",
            Action::Symlink => "symlink",
            Action::Remove => "remove",
            Action::Move { .. } => "move",
        }
    }
}
