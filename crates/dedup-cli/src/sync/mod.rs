//! `dedup sync SRC DST`: the sync job (settings from dedup-sync's arguments; dedup-sync also
//! words and logs the changes), then the summary and the exit status: 0 when everything was read
//! and made right, 1 when some entries could not be read or made right (each named with its
//! reason) or the `--log` file or the change lines on stdout could not be written whole, 2 for a
//! usage error, an unusable SRC or DST, or a refusal (`--max-delete`).

use std::sync::Arc;

use anyhow::{Context, Result};
use dedup_core::Progress;
use dedup_sync::args::SyncArgs;
use dedup_sync::{sync, ChangeLog, Show, SyncOptions, PHASES};

use crate::messages::Messages;
use crate::progress::Display;

/// Run `dedup sync`; `Ok(false)` when some entries failed.
pub fn run(args: SyncArgs) -> Result<bool> {
    // The process ends once the summary is printed.
    let options = SyncOptions { exit_after: true, ..args.options(&mut std::io::stdin().lock())? };
    let log = match &args.log {
        Some(path) => Some(ChangeLog::create(path).with_context(|| format!("{}", path.display()))?),
        None => None,
    };
    let progress = Arc::new(Progress::new(PHASES));
    let display = Display::start(progress.clone(), args.quiet || args.dry_run);
    let messages = Messages { verbose: args.verbose, bar: display.as_ref().map(Display::bar) };
    let print = args.dry_run || args.verbose || args.itemize_changes;
    let show = Show::new(&messages, print, args.itemize_changes, log);
    let result = sync(&args.src, &args.dst, &options, &show, &progress);
    if let Some(d) = display {
        d.finish();
    }
    let output_whole = show.finish();
    let summary = result?;
    if !args.quiet {
        eprintln!("{}", summary.line(args.dry_run));
    }
    Ok(output_whole && summary.failed == 0 && summary.unread == 0 && !summary.deletions_skipped)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use clap::Parser;
    use dedup_sync::args::parse_alone;

    use crate::cli::{Cli, Command};

    fn both(args: &[&str]) -> (Option<String>, Option<String>) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let alone = parse_alone(args.clone()).map(|a| format!("{a:?}"));
        let whole = match Cli::try_parse_from(args) {
            Ok(Cli { command: Command::Sync(a) }) => Some(format!("{a:?}")),
            _ => None,
        };
        (alone, whole)
    }

    #[test]
    fn the_sync_parser_alone_reads_what_the_whole_one_reads() {
        for args in [
            &["dedup", "sync", "a", "b"][..],
            &["dedup", "sync", "-q", "--delete", "--max-delete", "3", "a", "b"],
            &["dedup", "sync", "-nc", "--exclude", "*.o", "--exclude=x", "--", "-a", "b"],
            &["dedup", "sync", "--dedup", "a", "b", "--reflink", "never", "--io-threads=2"],
            &["dedup", "sync", "--dedup=hardlink", "--link-dest", "l", "-x", "-v", "a", "b"],
            &["dedup", "sync", "--include=*/", "--exclude-from", "f", "--exclude", "*", "a", "b"],
        ] {
            let (alone, whole) = both(args);
            assert!(alone.is_some(), "{args:?}");
            assert_eq!(alone, whole, "{args:?}");
        }
    }
}
