//! `dedup cache stats|prune|clear`: inspect and maintain the persistent content cache
//! (dedup-cache runs the command).

use anyhow::Result;
use dedup_cache::args::CacheArgs;
use dedup_cache::run_command;

use crate::messages::Messages;

/// Run `dedup cache`; `Ok(true)` on success.
pub fn run(args: CacheArgs) -> Result<bool> {
    let dir = args.dir()?;
    let messages = Messages { verbose: false, bar: None };
    run_command(&dir, args.action.into(), &mut std::io::stdout().lock(), &messages)?;
    Ok(true)
}
