//! `dedup sync SRC DST`: arguments to settings, the sync job (dedup-sync also words and logs the
//! changes), then the summary and the exit status: 0 when everything was read and made right, 1
//! when some entries could not be read or made right (each named with its reason) or the `--log`
//! file or the change lines on stdout could not be written whole, 2 for a usage error, an
//! unusable SRC or DST, or a refusal (`--max-delete`).

pub mod args;

use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use dedup_core::Progress;
use dedup_fs::Reflink;
use dedup_scan::io::Concurrency;
use dedup_sync::backup::BackupOptions;
use dedup_sync::list_files::{ListReader, RuleSource};
use dedup_sync::{sync, ChangeLog, DedupMode, DiskOrder, Show, SyncOptions, PHASES};

use self::args::{DedupArg, FilterArg, ReflinkArg, SyncArgs};
use crate::messages::Messages;
use crate::progress::Display;

/// Run `dedup sync`; `Ok(false)` when some entries failed.
pub fn run(args: SyncArgs) -> Result<bool> {
    let backups = args.backup || args.backup_dir.is_some();
    if args.suffix.is_some() && !backups {
        bail!("--suffix names the backups' suffix: it needs --backup or --backup-dir");
    }
    let mut stdin = std::io::stdin().lock();
    let reader = ListReader::new(&mut stdin);
    let sources: Vec<RuleSource> = args.filters.iter().map(rule_source).collect();
    let options = SyncOptions {
        delete: args.delete,
        max_delete: args.max_delete,
        dry_run: args.dry_run,
        checksum: args.checksum,
        filters: reader.rules(&sources, args.from0)?,
        files_from: match &args.files_from {
            Some(f) => Some(reader.files_from(f, args.from0, args.recursive)?),
            None => None,
        },
        delete_excluded: args.delete_excluded,
        backup: backups.then(|| BackupOptions {
            dir: args.backup_dir.clone(),
            suffix: match &args.suffix {
                Some(s) => s.as_bytes().to_vec(),
                None if args.backup_dir.is_some() => Vec::new(),
                None => b"~".to_vec(),
            },
        }),
        one_file_system: args.one_file_system,
        reflink: match args.reflink {
            ReflinkArg::Auto => Reflink::Auto,
            ReflinkArg::Always => Reflink::Always,
            ReflinkArg::Never => Reflink::Never,
        },
        link_dest: args.link_dest.clone(),
        dedup: args.dedup.map(|d| match d {
            DedupArg::Reflink => DedupMode::Reflink,
            DedupArg::Hardlink => DedupMode::Hardlink,
        }),
        io: match args.io_threads {
            Some(n) => Concurrency::Fixed(usize::from(n)),
            None => Concurrency::default(),
        },
        disk_order: DiskOrder::from_env()?,
        // The process ends once the summary is printed.
        exit_after: true,
    };
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

fn rule_source(arg: &FilterArg) -> RuleSource<'_> {
    match arg {
        FilterArg::Include(p) => RuleSource::Pattern { pattern: p.as_bytes(), include: true },
        FilterArg::Exclude(p) => RuleSource::Pattern { pattern: p.as_bytes(), include: false },
        FilterArg::IncludeFrom(path) => RuleSource::File { path, include: true },
        FilterArg::ExcludeFrom(path) => RuleSource::File { path, include: false },
    }
}
