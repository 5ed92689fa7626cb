//! `dedup cache`'s arguments (under the `clap` feature): the command and the cache directory.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::settings::{self, SettingsError};
use crate::CacheCommand;

/// The help after `dedup cache`'s options: what the cache holds and how a run uses it.
pub const AFTER_HELP: &str = "\
`dedup find --cache` (and every action with --cache) remembers, per file (device and inode), what \
comparing it taught: a fingerprint of its start and, for content that has a copy, the BLAKE3 \
digest of all of it. A later run with --cache does not read again a file whose size, mtime and \
ctime are unchanged; `--verify` compares such groups byte for byte anyway, and the actions always \
compare each file just before changing it, so a stale cache cannot cost data. The cache holds \
digests and paths, never file contents. To use it on every run, write `[cache] enabled = true` \
in ~/.config/dedup/dedup.toml.

Examples:
  dedup find --cache ~/Photos    fills the cache; the next run skips reading unchanged files
  dedup cache stats              entries, size on disk, hit rate of the last run
  dedup cache prune              forget files deleted, changed or moved away since
  dedup cache clear              start afresh";

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

impl CacheArgs {
    /// The cache directory: `--cache-dir`, else dedup.toml's, else the default.
    pub fn dir(&self) -> Result<PathBuf, SettingsError> {
        settings::cache_dir(self.cache_dir.as_deref(), &settings::load()?)
    }
}

impl From<CacheAction> for CacheCommand {
    fn from(action: CacheAction) -> CacheCommand {
        match action {
            CacheAction::Stats => CacheCommand::Stats,
            CacheAction::Prune => CacheCommand::Prune,
            CacheAction::Clear => CacheCommand::Clear,
        }
    }
}
