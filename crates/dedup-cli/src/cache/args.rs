//! `dedup cache`'s arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `dedup cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// What to do with the cache.
    #[command(subcommand)]
    pub action: CacheAction,

    /// The cache directory [default: from dedup.toml, else $XDG_CACHE_HOME/dedup or
    /// ~/.cache/dedup]
    #[arg(long, value_name = "DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
}

/// What `dedup cache` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub enum CacheAction {
    /// Entries, size on disk, and the hit rate of the last run that used the cache.
    Stats,
    /// Drop entries of files no longer at their recorded path unchanged (deleted, modified, moved).
    Prune,
    /// Remove every entry.
    Clear,
}
