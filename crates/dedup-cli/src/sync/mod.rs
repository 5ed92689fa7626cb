//! `dedup sync SRC DST`: arguments to settings, the sync job, then what the user sees (changes,
//! problems, the summary) and the exit status: 0 when everything was read and made right, 1 when
//! some entries could not be read or made right (each named with its reason) or the `--log` file
//! or the change lines on stdout could not be written whole, 2 for a usage error, an unusable
//! SRC or DST, or a refusal (`--max-delete`).

pub mod args;
mod lists;
mod render;

use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use dedup_core::Progress;
use dedup_fs::Reflink;
use dedup_scan::io::Concurrency;
use dedup_sync::backup::BackupOptions;
use dedup_sync::files_from::FilesFromOptions;
use dedup_sync::filter::entries;
use dedup_sync::{sync, DedupMode, SyncOptions, PHASES};
use std::os::unix::ffi::OsStrExt;

use self::args::{DedupArg, ReflinkArg, SyncArgs};
use self::render::{Log, Render};
use crate::messages::Messages;
use crate::progress::Display;

/// Run `dedup sync`; `Ok(false)` when some entries failed.
pub fn run(args: SyncArgs) -> Result<bool> {
    let backups = args.backup || args.backup_dir.is_some();
    if args.suffix.is_some() && !backups {
        bail!("--suffix names the backups' suffix: it needs --backup or --backup-dir");
    }
    let reader = lists::Reader::default();
    let options = SyncOptions {
        delete: args.delete,
        max_delete: args.max_delete,
        dry_run: args.dry_run,
        checksum: args.checksum,
        filters: lists::rules(&args.filters, args.from0, &reader)?,
        files_from: match &args.files_from {
            Some(f) => Some(FilesFromOptions {
                paths: entries(&reader.read("--files-from", f)?, args.from0)
                    .map(<[u8]>::to_vec)
                    .collect(),
                recursive: args.recursive,
            }),
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
        disk_order: crate::tuning::sync_disk_order()?,
        // The process ends once the summary is printed.
        exit_after: true,
    };
    let log = match &args.log {
        Some(path) => Some(Log::create(path).with_context(|| format!("{}", path.display()))?),
        None => None,
    };
    let progress = Arc::new(Progress::new(PHASES));
    let display = Display::start(progress.clone(), args.quiet || args.dry_run);
    let render = Render {
        messages: Messages { verbose: args.verbose, bar: display.as_ref().map(Display::bar) },
        print: args.dry_run || args.verbose || args.itemize_changes,
        itemize: args.itemize_changes,
        log,
        out: Mutex::default(),
    };
    let result = sync(&args.src, &args.dst, &options, &render, &progress);
    if let Some(d) = display {
        d.finish();
    }
    let output_whole = render.finish();
    let summary = result?;
    if !args.quiet {
        eprintln!("{}", summary.line(args.dry_run));
    }
    Ok(output_whole && summary.failed == 0 && summary.unread == 0 && !summary.deletions_skipped)
}
