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
pub mod options;
pub mod plan;
pub mod summary;
pub mod tree;
pub mod verify;

use std::path::{Path, PathBuf};
use std::time::Instant;

use dedup_core::{Phase, Progress, Shows};
use dedup_scan::io::IoScheduler;
use dedup_scan::{Detail, WalkOptions, WalkOptionsError};

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
    let dst_exists = check_roots(src, dst)?;
    let mut walk_options = WalkOptions::default().with_excludes(&options.excludes)?;
    walk_options.detail = Detail::Everything;
    walk_options.xattrs = true;
    walk_options.one_file_system = options.one_file_system;
    let io = IoScheduler::new(options.io.for_listing());
    progress.start_phase(WALK, 0);
    let is_temp = |name: &[u8]| is_temp_name(name);
    let walked = tree::walk_both(
        src,
        dst_exists.then_some(dst),
        &walk_options,
        &is_temp,
        &io,
        events,
        progress,
    );
    progress.start_phase(PLAN, 0);
    let privileged = rustix::process::geteuid().is_root();
    let grain = || 1;
    let rules = compare::Rules {
        owner: privileged,
        all_xattrs: privileged,
        checksum: options.checksum,
        precision: &grain,
    };
    let cx =
        plan::Context { src_root: src, dst_root: dst, options, rules: &rules, observer: events };
    let plan = plan::plan(&cx, &walked);
    if let Some(limit) = options.max_delete {
        let planned = plan.deletion_count();
        if planned > limit {
            return Err(SyncError::TooManyDeletions { planned, limit });
        }
    }
    let tally = summary::Tally::default();
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
    let mut summary = tally.summary(plan.checked, started.elapsed());
    summary.failed += plan.refused.len() as u64;
    summary.deletions_skipped = walked.src_failed && !plan.deletions.is_empty();
    Ok(summary)
}

/// Our own temporary names (`.dedup-new.<hex>`, `.dedup-tmp.<hex>`).
fn is_temp_name(name: &[u8]) -> bool {
    let hex = |rest: &[u8]| {
        rest.len() == 16 && rest.iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    };
    [&b".dedup-new."[..], b".dedup-tmp."]
        .iter()
        .any(|p| name.starts_with(p) && hex(&name[p.len()..]))
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
