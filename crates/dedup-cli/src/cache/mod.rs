//! `dedup cache stats|prune|clear`: inspect and maintain the persistent content cache.

pub mod args;

use std::io::Write;

use anyhow::{bail, Context, Result};
use dedup_cache::{Cache, Opened};
use dedup_core::text::Count;

use self::args::{CacheAction, CacheArgs};
use crate::config;
use crate::messages::quote_path;

/// Run `dedup cache`; `Ok(true)` on success.
pub fn run(args: CacheArgs) -> Result<bool> {
    let config = config::load()?;
    let dir = config::cache_dir(args.cache_dir.as_deref(), &config)?;
    let shown = quote_path(&dir);
    if args.action == CacheAction::Stats {
        let stats = dedup_cache::stats(&dir)
            .with_context(|| format!("cannot read the cache in {shown} (the next run with --cache will set it aside and rebuild it)"))?;
        for line in stats.lines(&shown) {
            say(&line)?;
        }
        return Ok(true);
    }
    if args.action == CacheAction::Clear && !dir.exists() {
        return Ok(true);
    }
    let mut cache =
        match Cache::open(&dir).with_context(|| format!("cannot open the cache in {shown}"))? {
            Opened::Ready { cache, damaged } => {
                if let Some(aside) = damaged {
                    eprintln!(
                        "dedup: warning: {}: cache file unusable ({}); moved aside",
                        quote_path(&aside.moved_to),
                        aside.reason
                    );
                }
                cache
            }
            Opened::Busy => {
                bail!("the cache in {shown} is in use by another dedup process; try again later")
            }
        };
    match args.action {
        CacheAction::Prune => {
            let before = cache.len();
            let dropped =
                cache.prune().with_context(|| format!("cannot write the cache in {shown}"))?;
            say(&format!("pruned {} of {} entries", Count(dropped), Count(before as u64)))?;
        }
        CacheAction::Clear => {
            cache.clear().with_context(|| format!("cannot clear the cache in {shown}"))?;
            say(&format!("cleared {shown}"))?;
        }
        CacheAction::Stats => unreachable!("handled above"),
    }
    Ok(true)
}

/// Writes one line on stdout; a full disk or a closed pipe is an error returned, not a panic.
fn say(text: &str) -> Result<()> {
    writeln!(std::io::stdout().lock(), "{text}").context("cannot write to standard output")
}
