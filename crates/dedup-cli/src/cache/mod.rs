//! `dedup cache stats|prune|clear`: inspect and maintain the persistent content cache
//! (dedup-cache runs the command).

pub mod args;

use anyhow::Result;
use dedup_cache::{run_command, settings, CacheCommand};

use self::args::{CacheAction, CacheArgs};
use crate::messages::Messages;

/// Run `dedup cache`; `Ok(true)` on success.
pub fn run(args: CacheArgs) -> Result<bool> {
    let dir = settings::cache_dir(args.cache_dir.as_deref(), &settings::load()?)?;
    let command = match args.action {
        CacheAction::Stats => CacheCommand::Stats,
        CacheAction::Prune => CacheCommand::Prune,
        CacheAction::Clear => CacheCommand::Clear,
    };
    let messages = Messages { verbose: false, bar: None };
    run_command(&dir, command, &mut std::io::stdout().lock(), &messages)?;
    Ok(true)
}
