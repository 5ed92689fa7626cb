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

#[cfg(test)]
mod tests {
    use dedup_core::KeptLines;

    use super::*;

    fn run(dir: &Path, command: CacheCommand) -> (Result<(), CommandError>, String) {
        let mut out = Vec::new();
        let result = run_command(dir, command, &mut out, &KeptLines::default());
        (result, String::from_utf8(out).unwrap())
    }

    #[test]
    fn clearing_a_missing_cache_creates_nothing_and_each_command_says_what_it_did() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache");
        let (result, out) = run(&dir, CacheCommand::Clear);
        assert!(result.is_ok() && out.is_empty() && !dir.exists());
        let (result, out) = run(&dir, CacheCommand::Prune);
        assert!(result.is_ok());
        assert_eq!(out, "pruned 0 of 0 entries\n");
        let (result, out) = run(&dir, CacheCommand::Stats);
        assert!(result.is_ok());
        assert!(out.starts_with(&format!("cache: {}\nentries: 0\n", dir.display())), "{out}");
        let (result, out) = run(&dir, CacheCommand::Clear);
        assert!(result.is_ok());
        assert_eq!(out, format!("cleared {}\n", dir.display()));
    }

    #[test]
    fn a_cache_in_use_is_refused_by_name_and_a_full_output_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let held = Cache::open(tmp.path()).unwrap();
        let (result, _) = run(tmp.path(), CacheCommand::Prune);
        let err = result.unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "the cache in {} is in use by another dedup process; try again later",
                tmp.path().display()
            )
        );
        drop(held);
        let mut full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let result = run_command(tmp.path(), CacheCommand::Stats, &mut full, &KeptLines::default());
        assert!(matches!(result, Err(CommandError::Output(_))), "{result:?}");
    }
}
