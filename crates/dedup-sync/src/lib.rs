//! `dedup sync SRC DST`: a one-way mirror. Both trees are walked at once by the engine's walker
//! ([`tree`]); every change is planned before any is made ([`plan`]: the up-to-date test in
//! [`compare`], renamed directories and moved files recognised so they are renamed instead of
//! copied); then the plan is carried out with the safe file operations: new content under a
//! temporary name renamed over with its metadata already set, directories' metadata after their
//! contents, deletions last and never after a source read failed. `--dry-run` reports the same
//! plan without carrying it out ([`dry_run`]).
//!
//! Libraries never print: changes and problems go to the caller's [`Events`].

pub mod change;
pub mod compare;
pub mod dry_run;
mod execute;
pub mod options;
pub mod plan;
mod precision;
mod share;
pub mod summary;
pub mod tree;
pub mod verify;
mod xattrs;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use dedup_core::{Phase, Problem, ProblemKind, Progress, Shows};
use dedup_scan::io::{Concurrency, IoScheduler};
use dedup_scan::{open_dir, Detail, WalkOptions, WalkOptionsError};

pub use change::{Change, ChangeKind, Events};
pub use options::{DedupMode, SyncOptions};
pub use summary::Summary;

/// Listing both trees.
pub const WALK: usize = 0;
/// Deciding what to change.
pub const PLAN: usize = 1;
/// Copying and updating.
pub const COPY: usize = 2;
/// Deleting.
pub const DELETE: usize = 3;

/// The phases of a sync, for its `Progress`.
pub static PHASES: &[Phase] = &[
    Phase { name: "walk", label: "scanning:", shows: Shows::Found { unit: "entries" } },
    Phase { name: "plan", label: "comparing", shows: Shows::Label },
    Phase { name: "copy", label: "copying:", shows: Shows::Items { unit: Some("entries") } },
    Phase { name: "delete", label: "deleting", shows: Shows::Label },
];

/// Why a sync could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// SRC is not a directory.
    #[error("{0}: not a directory")]
    SourceNotDir(PathBuf),
    /// DST exists and is not a directory.
    #[error("{0}: exists and is not a directory")]
    DestNotDir(PathBuf),
    /// One tree lies inside the other.
    #[error("{0} and {1} overlap: one lies inside the other")]
    Overlap(PathBuf, PathBuf),
    /// More deletions than `--max-delete` allows; nothing was changed.
    #[error("{planned} entries would be deleted, more than --max-delete {limit}; nothing changed")]
    TooManyDeletions {
        /// Entries the run would delete.
        planned: u64,
        /// The limit.
        limit: u64,
    },
    /// A bad exclusion glob.
    #[error(transparent)]
    Exclude(#[from] WalkOptionsError),
    /// SRC or DST could not be examined or created.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Mirror `src` into `dst` as `options` say; changes and problems go to `events` as they
/// happen, progress to `progress` (made from [`PHASES`]).
pub fn sync(
    src: &Path,
    dst: &Path,
    options: &SyncOptions,
    events: &dyn Events,
    progress: &Progress,
) -> Result<Summary, SyncError> {
    let started = Instant::now();
    let mut dst_exists = check_roots(src, dst)?;
    let created = !dst_exists && !options.dry_run;
    if created {
        std::fs::create_dir_all(dst).map_err(|e| SyncError::Io(dst.to_path_buf(), e))?;
        dst_exists = true;
    }
    let mut walk_options = WalkOptions::default().with_excludes(&options.excludes)?;
    walk_options.detail = Detail::Everything;
    walk_options.xattrs = options.checksum;
    walk_options.one_file_system = options.one_file_system;
    // Not the finder's listing start (`for_listing`, 4): a mirror mostly runs over a warm tree,
    // where four walkers on a small one cost more in threads than they gain
    // (docs/benchmarks/journal.md, "Sync benchmark"); a cold or fast device still climbs from 2.
    // And not at 2 either: a second walker thread costs its start and the hand-offs (futex
    // waits) on every run, and a warm tree of up to thousands of entries is walked faster by one
    // (docs/benchmarks/journal.md, "Sync benchmark (issue 27), second run"); a tree that takes longer
    // than the tuner's first windows climbs as before.
    let io = IoScheduler::new(match options.io {
        Concurrency::Adaptive { max, .. } => Concurrency::Adaptive { start: 1, max },
        fixed => fixed,
    });
    progress.start_phase(WALK, 0);
    let is_temp = |name: &[u8]| dedup_fs::is_temp_name(std::ffi::OsStr::from_bytes(name));
    let walked = tree::walk_both(
        src,
        dst_exists.then_some(dst),
        &walk_options,
        &is_temp,
        &io,
        events,
        progress,
    );
    let mut walked = walked;
    if !options.checksum {
        // `--link-dest` and `--dedup` compare a source file's attributes with another copy's
        // before deciding to copy it; renamed directories (`--delete`) pair files across paths.
        let defer = if options.link_dest.is_some() || options.dedup.is_some() {
            xattrs::Defer::Never
        } else if options.delete {
            xattrs::Defer::WhereListed
        } else {
            xattrs::Defer::Copied
        };
        xattrs::fill(&mut walked, src, dst, defer);
    }
    progress.start_phase(PLAN, 0);
    let euid = rustix::process::geteuid();
    let privileged = euid.is_root();
    let probe =
        precision::Probe::new(dst_exists.then_some(dst), walked.dst.dir(b"").map(|d| d.meta));
    let grain = || probe.grain();
    let rules = compare::Rules {
        owner: privileged,
        all_xattrs: privileged,
        checksum: options.checksum,
        precision: &grain,
    };
    let cx =
        plan::Context { src_root: src, dst_root: dst, options, rules: &rules, observer: events };
    let mut plan = plan::plan(&cx, &walked);
    if let Some(limit) = options.max_delete {
        let planned = plan.deletion_count();
        if planned > limit {
            return Err(SyncError::TooManyDeletions { planned, limit });
        }
    }
    for r in &plan.refused {
        let e = std::io::Error::other(r.reason);
        events.problem(Problem::error(tree::under(dst, &r.rel), ProblemKind::Io(e)));
    }
    let tally = summary::Tally::default();
    if created {
        // Made before the walk, so that the walk and the run see it: report it as made.
        plan.dirs[0].state = plan::DirState::Create;
        let change =
            Change { kind: ChangeKind::Mkdir, path: dry_run::path(b""), from: None, bytes: 0 };
        tally.count(&change, 1);
        events.change(&change);
    }
    let deletions_allowed = options.delete && !walked.src_failed;
    let summary = if options.dry_run {
        for change in dry_run::changes(&plan) {
            let entries = match change.kind {
                ChangeKind::Delete => plan
                    .deletions
                    .iter()
                    .find(|d| dry_run::path(&d.rel) == change.path)
                    .map_or(1, |d| d.entries),
                _ => 1,
            };
            tally.count(&change, entries);
            events.change(&change);
        }
        finish(&plan, &tally, started, walked.src_failed, events)
    } else if plan.is_empty() {
        finish(&plan, &tally, started, walked.src_failed, events)
    } else {
        let exec = execute::Exec {
            src,
            dst,
            src_fd: open_dir(src, true).map_err(|e| SyncError::Io(src.to_path_buf(), e))?,
            dst_fd: open_dir(dst, true).map_err(|e| SyncError::Io(dst.to_path_buf(), e))?,
            link_dest_fd: options.link_dest.as_deref().and_then(|p| open_dir(p, true).ok()),
            rules: &rules,
            reflink: options.reflink,
            events,
            tally: &tally,
            progress,
            io: IoScheduler::following(&io, options.io),
            src_failed: AtomicBool::new(false),
            touched: Mutex::default(),
            refused: execute::Refused::default(),
            ids: (euid.as_raw(), rustix::process::getegid().as_raw()),
        };
        execute::run(&exec, &plan, &walked, options.dedup, deletions_allowed);
        let src_failed = walked.src_failed || exec.src_failed.load(Ordering::Relaxed);
        finish(&plan, &tally, started, src_failed, events)
    };
    if options.exit_after {
        // Freeing every entry, name and action one by one is work the process's exit does at
        // once (docs/benchmarks/journal.md, "Sync fixed costs (issue 27)").
        std::mem::forget(plan);
        std::mem::forget(walked);
    }
    Ok(summary)
}

/// The summary, and a warning when deletions were skipped for a source read failure.
fn finish(
    plan: &plan::Plan,
    tally: &summary::Tally,
    started: Instant,
    src_failed: bool,
    events: &dyn Events,
) -> Summary {
    let mut summary = tally.summary(plan.checked, started.elapsed());
    summary.failed += plan.refused.len() as u64;
    summary.deletions_skipped = src_failed && !plan.deletions.is_empty();
    if summary.deletions_skipped {
        let why = "some source entries could not be read: nothing was deleted";
        let e = std::io::Error::other(why);
        events.problem(Problem::warning(PathBuf::from("."), ProblemKind::Io(e)));
    }
    summary
}

/// Check SRC is a directory and DST a directory or missing (true when it exists), and that
/// neither lies inside the other.
fn check_roots(src: &Path, dst: &Path) -> Result<bool, SyncError> {
    let io_err = |p: &Path, e| SyncError::Io(p.to_path_buf(), e);
    let s = std::fs::metadata(src).map_err(|e| io_err(src, e))?;
    if !s.is_dir() {
        return Err(SyncError::SourceNotDir(src.to_path_buf()));
    }
    let exists = match std::fs::metadata(dst) {
        Ok(m) if m.is_dir() => true,
        Ok(_) => return Err(SyncError::DestNotDir(dst.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io_err(dst, e)),
    };
    let canon_src = std::fs::canonicalize(src).map_err(|e| io_err(src, e))?;
    let canon_dst = if exists {
        std::fs::canonicalize(dst).map_err(|e| io_err(dst, e))?
    } else {
        let parent = dst.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let parent = std::fs::canonicalize(parent).map_err(|e| io_err(dst, e))?;
        parent.join(dst.file_name().unwrap_or_default())
    };
    if canon_dst.starts_with(&canon_src) || canon_src.starts_with(&canon_dst) {
        return Err(SyncError::Overlap(src.to_path_buf(), dst.to_path_buf()));
    }
    Ok(exists)
}
