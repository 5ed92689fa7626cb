//! `dedup store backup`: choose the parent, run the backup beside its progress line, print the
//! summary.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use dedup_store::backup::{backup, backup_stream, count_bytes, BackupOptions, BackupProgress};
use indicatif::{HumanBytes, HumanCount};

use super::args::{BackupArgs, CommonArgs};
use super::backup_progress::{self, Expected};
use super::json_progress::{self, JsonProblems};
use crate::messages::Messages;

/// Run `dedup store backup`; `Ok(false)` when some entries could not be read.
pub fn run(common: &CommonArgs, args: BackupArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let host = args.host.clone().unwrap_or_else(super::hostname);
    let roots = super::backup_select::paths(&args)?;
    let excludes = super::backup_select::excludes(&args)?;
    let paths: Vec<Vec<u8>> = roots.iter().map(|p| super::absolute_bytes(p)).collect();
    let parent = dedup_store::commands::choose_parent(
        &repo,
        args.parent.as_deref(),
        &host,
        &paths,
        args.stdin,
    )?;
    let options = BackupOptions {
        paths: roots,
        host,
        user: super::username(),
        tags: args.tags.clone(),
        excludes,
        selection: super::backup_select::selection(&args),
        one_file_system: args.one_file_system,
        dry_run: args.dry_run,
        parent,
        program: format!("dedup {}", env!("CARGO_PKG_VERSION")),
    };
    let problems =
        JsonProblems::new(Messages { verbose: common.verbose > 0, bar: None }, "archival");
    let progress = BackupProgress::default();
    let started = Instant::now();
    let outcome = if args.stdin {
        let name = args.stdin_filename.clone().unwrap_or_default();
        backup_stream(&repo, &options, name.as_bytes(), &mut std::io::stdin().lock(), &progress)
    } else {
        let show = !common.quiet && !args.json && std::io::stderr().is_terminal();
        let json_status = if args.json { json_progress::status_interval() } else { None };
        let expected = Expected::default();
        if let Some((_, parent)) = &options.parent {
            expected.total.store(parent.summary.bytes_total, Ordering::Relaxed);
            expected.known.store(true, Ordering::Relaxed);
        }
        let finished = AtomicBool::new(false);
        std::thread::scope(|scope| {
            if (show || json_status.is_some()) && options.parent.is_none() {
                scope.spawn(|| {
                    if count_bytes(&options, &expected.total, &finished).is_ok() {
                        expected.known.store(!finished.load(Ordering::Relaxed), Ordering::Relaxed);
                    }
                });
            }
            if show {
                scope.spawn(|| backup_progress::tick(&progress, &expected, &finished));
            }
            if let Some(interval) = json_status {
                let parent_files = options.parent.as_ref().map(|(_, p)| {
                    let s = &p.summary;
                    s.files_new + s.files_changed + s.files_unchanged
                });
                let (progress, expected, errors) = (&progress, &expected, &problems.errors);
                let status = move |elapsed| {
                    backup_progress::json_status(
                        progress,
                        expected,
                        parent_files,
                        errors.load(Ordering::Relaxed),
                        elapsed,
                    )
                };
                let finished = &finished;
                scope.spawn(move || json_progress::tick(interval, finished, status));
            }
            let result = backup(&repo, &options, &problems, &progress);
            finished.store(true, Ordering::Relaxed);
            result
        })
    };
    let outcome = outcome.with_context(|| {
        format!(
            "backup into {} failed, no snapshot written",
            super::location(common).unwrap_or_default().display()
        )
    })?;
    let s = &outcome.snapshot.summary;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let files_processed = s.files_new + s.files_changed + s.files_unchanged;
        // restic's summary fields, then the ones dedup printed before them (kept for scripts).
        let json = serde_json::json!({
            "message_type": "summary",
            "snapshot_id": outcome.id.map(|id| id.to_hex()),
            "files_unmodified": s.files_unchanged,
            "data_added": s.bytes_added,
            "total_files_processed": files_processed,
            "total_bytes_processed": s.bytes_total,
            "total_duration": seconds,
            "snapshot": outcome.id.map(|id| id.to_hex()),
            "dry_run": args.dry_run,
            "incomplete": outcome.snapshot.incomplete,
            "files_new": s.files_new, "files_changed": s.files_changed, "files_unchanged": s.files_unchanged,
            "dirs": s.dirs, "others": s.others, "errors": s.errors,
            "bytes_read": s.bytes_read, "bytes_total": s.bytes_total, "bytes_added": s.bytes_added,
            "blobs_added": s.blobs_added, "packs_written": outcome.packs_written,
            "packs_adopted": outcome.packs_adopted, "seconds": seconds,
        });
        json_progress::print(&json);
    } else if !common.quiet {
        println!(
            "files: {} new, {} changed, {} unchanged; {} dirs, {} other entries",
            HumanCount(s.files_new),
            HumanCount(s.files_changed),
            HumanCount(s.files_unchanged),
            HumanCount(s.dirs),
            HumanCount(s.others)
        );
        println!(
            "read {} of {}; added {} to the repository ({} blobs, {} packs) in {seconds:.2} s",
            HumanBytes(s.bytes_read),
            HumanBytes(s.bytes_total),
            HumanBytes(s.bytes_added),
            HumanCount(s.blobs_added),
            HumanCount(outcome.packs_written)
        );
        match outcome.id {
            Some(id) if outcome.snapshot.incomplete => {
                println!(
                    "snapshot {} saved, INCOMPLETE: {} entries or paths could not be read whole \
                     (each is named above with what the snapshot holds of it)",
                    id.short(8),
                    s.errors
                )
            }
            Some(id) => println!("snapshot {} saved", id.short(8)),
            None => println!("dry run: nothing written"),
        }
    }
    Ok(!outcome.snapshot.incomplete)
}
