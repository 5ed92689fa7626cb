//! `dedup cache stats|prune|clear`: inspect and maintain the cache in a directory. The figures
//! and confirmations go to the output handed in, a damaged file set aside to the terminal.

use std::io::{self, Write};
use std::path::Path;

use dedup_core::text::{quote_path, Count};
use dedup_core::Terminal;

use crate::{stats, Cache, CacheError, Damaged, Opened};

/// What to do with the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheCommand {
    /// Entries, size on disk, last run's hit rate.
    Stats,
    /// Drop the entries of files that are gone or changed.
    Prune,
    /// Drop every entry.
    Clear,
}

/// Why a cache command failed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The cache file cannot be read for its figures.
    #[error(
        "cannot read the cache in {0} (the next run with --cache will set it aside and rebuild it)"
    )]
    Stats(String, #[source] Damaged),
    /// The cache cannot be opened.
    #[error("cannot open the cache in {0}")]
    Open(String, #[source] CacheError),
    /// Another process holds it.
    #[error("the cache in {0} is in use by another dedup process; try again later")]
    Busy(String),
    /// The pruned cache cannot be written.
    #[error("cannot write the cache in {0}")]
    Prune(String, #[source] CacheError),
    /// The cache cannot be cleared.
    #[error("cannot clear the cache in {0}")]
    Clear(String, #[source] CacheError),
    /// The output cannot be written.
    #[error("cannot write to standard output")]
    Output(#[source] io::Error),
}

/// Run `command` on the cache in `dir`.
pub fn run_command(
    dir: &Path,
    command: CacheCommand,
    out: &mut dyn Write,
    terminal: &dyn Terminal,
) -> Result<(), CommandError> {
    let shown = quote_path(dir);
    let mut say = |text: &str| writeln!(out, "{text}").map_err(CommandError::Output);
    if command == CacheCommand::Stats {
        let stats = stats(dir).map_err(|e| CommandError::Stats(shown.clone(), e))?;
        for line in stats.lines(&shown) {
            say(&line)?;
        }
        return Ok(());
    }
    if command == CacheCommand::Clear && !dir.exists() {
        return Ok(());
    }
    let mut cache = match Cache::open(dir).map_err(|e| CommandError::Open(shown.clone(), e))? {
        Opened::Ready { cache, damaged } => {
            if let Some(aside) = damaged {
                terminal.line(&format!(
                    "dedup: warning: {}: cache file unusable ({}); moved aside",
                    quote_path(&aside.moved_to),
                    aside.reason
                ));
            }
            cache
        }
        Opened::Busy => return Err(CommandError::Busy(shown)),
    };
    if command == CacheCommand::Prune {
        let before = cache.len();
        let dropped = cache.prune().map_err(|e| CommandError::Prune(shown.clone(), e))?;
        say(&format!("pruned {} of {} entries", Count(dropped), Count(before as u64)))
    } else {
        cache.clear().map_err(|e| CommandError::Clear(shown.clone(), e))?;
        say(&format!("cleared {shown}"))
    }
}
