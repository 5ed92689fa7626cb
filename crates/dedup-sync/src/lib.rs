//! `dedup sync SRC DST`: a one-way mirror. Both trees are walked at once by the engine's walker
//! ([`tree`]); every change is planned before any is made ([`plan`]: the up-to-date test in
//! [`compare`], renamed directories and moved files recognised so they are renamed instead of
//! copied); then the plan is carried out with the safe file operations: new content under a
//! temporary name renamed over with its metadata already set, directories' metadata after their
//! contents, deletions last (first where the copies need the room they free) and
//! never after a source read failed: a part of SRC that could not be read ([`unread`]) blocks
//! every deletion and rename, and the run reports itself incomplete. `--dry-run` reports the
//! same plan without carrying it out ([`dry_run`]).
//!
//! Libraries never print: changes and problems go to the caller's [`Events`].

#[cfg(feature = "clap")]
pub mod args;
pub mod backup;
pub mod change;
mod change_log;
pub mod compare;
mod disk_order_env;
pub mod dry_run;
mod execute;
pub mod files_from;
pub mod filter;
pub mod item;
mod lines;
pub mod list_files;
pub mod options;
pub mod plan;
mod precision;
mod readable;
mod rel_path;
mod roots;
mod select;
mod show;
mod space;
pub mod summary;
pub mod tree;
mod unmounted;
pub mod unread;
pub mod verify;
mod xattrs;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use dedup_core::{Observer, Phase, Problem, ProblemKind, Progress, Shows};
use dedup_scan::io::{Concurrency, IoScheduler};
use dedup_scan::{open_dir, Detail, WalkOptions};
use plan::LinkDest;

pub use change::{Change, ChangeKind, Events};
pub use change_log::ChangeLog;
pub use options::DiskOrder;
pub use options::{DedupMode, SyncOptions};
pub use show::Show;
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
    /// SRC could not be listed at all; nothing was changed.
    #[error("{0}: could not be listed; nothing changed")]
    SourceUnlisted(PathBuf),
    /// DST exists and is not a directory.
    #[error("{0}: exists and is not a directory")]
    DestNotDir(PathBuf),
    /// DST, or a directory on its way, is a symlink to nothing.
    #[error("{0}: a symlink to {1:?}, which does not exist; nothing made")]
    DestDanglingLink(PathBuf, PathBuf),
    /// One tree lies inside the other.
    #[error(
        "{0} and {1} overlap: one lies inside the other (compared by device and inode, so a bind \
         mount or a symlink is seen through)"
    )]
    Overlap(PathBuf, PathBuf),
    /// One tree holds the other through a mount below its root; nothing was changed.
    #[error(
        "{0} and {1} overlap: {2} is the other tree (a mount or bind mount of it); nothing \
         changed"
    )]
    MountedInside(PathBuf, PathBuf, PathBuf),
    /// More deletions than `--max-delete` allows; nothing was changed.
    #[error("{planned} entries would be deleted, more than --max-delete {limit}; nothing changed")]
    TooManyDeletions {
        /// Entries the run would delete.
        planned: u64,
        /// The limit.
        limit: u64,
    },
    /// `--delete` would empty DST because SRC is an empty directory; nothing was changed.
    #[error(
        "{0} is empty, and --delete would delete all {1} entries of the mirror: is a disk not \
         mounted there? Nothing changed (--allow-empty-source mirrors an empty SRC)"
    )]
    EmptySource(PathBuf, u64),
    /// `--delete` would empty DST because every entry of SRC is excluded; nothing was changed.
    #[error(
        "{0} has nothing to mirror (each of its {1} entries is excluded), and --delete would \
         delete all {2} entries of the mirror: is the right disk mounted there? Nothing changed \
         (--allow-empty-source mirrors it)"
    )]
    AllExcluded(PathBuf, usize, u64),
    /// `--backup-dir` or `--suffix` cannot be used as given.
    #[error("{0}")]
    Backup(String),
    /// A bad include or exclude pattern.
    #[error(transparent)]
    Pattern(#[from] filter::PatternError),
    /// SRC or DST could not be examined or created.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// The path of the existing entry `path` below the directory `dst` (both resolved; the last
/// component of `path` is not followed), if it lies there.
fn below(dst: &Path, path: &Path) -> Option<Vec<u8>> {
    let (parent, name) = (path.parent()?, path.file_name()?);
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    let full = std::fs::canonicalize(parent).ok()?.join(name);
    let rel = full.strip_prefix(std::fs::canonicalize(dst).ok()?).ok()?;
    (!rel.as_os_str().is_empty()).then(|| rel.as_os_str().as_bytes().to_vec())
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
    let mut dst_exists = roots::check(src, dst)?.dst_exists;
    let backup = match &options.backup {
        Some(b) => Some(backup::Backup::resolve(b, src, dst)?),
        None => None,
    };
    let backup_dir = backup.as_ref().and_then(backup::Backup::dir_in_dst);
    let files = options.files_from.as_ref().map(files_from::FileList::new);
    // The log being written and the tree linked against are no part of the mirror.
    let log = options.log.as_deref().and_then(|log| below(dst, log));
    let link =
        options.link_dest.as_deref().map(|l| if l.is_relative() { dst.join(l) } else { l.into() });
    let kept = log.into_iter().chain(link.and_then(|l| below(dst, &l))).collect();
    let selection =
        select::Selection::new(&options.filters, backup_dir, kept, files)?.map(Arc::new);
    let mut walk_options = WalkOptions::default();
    walk_options.filter = selection.clone().map(|s| s as Arc<dyn dedup_scan::EntryFilter>);
    let created = !dst_exists && !options.dry_run;
    if created {
        std::fs::create_dir_all(dst).map_err(|e| SyncError::Io(dst.to_path_buf(), e))?;
        dst_exists = true;
    }
    let link_dest = open_link_dest(options, dst, events);
    walk_options.detail = Detail::Everything;
    walk_options.xattrs = options.checksum;
    walk_options.one_file_system = options.one_file_system;
    // Not the finder's listing start (`for_listing`): a mirror mostly runs over a warm tree,
    // where four walkers on a small one cost more in threads than they gain
    // (docs/benchmarks/journal.md, "Sync benchmark (issue 27)"); a cold or fast device still
    // climbs.
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
    let scope = tree::Scope { is_temp: &is_temp, selection: selection.as_deref() };
    let mut walked = tree::walk_both(
        src,
        dst_exists.then_some(dst),
        &walk_options,
        &scope,
        &io,
        events,
        progress,
    );
    if walked.src.dir(b"").is_none() {
        // The walk reported why. DST, if this run made it, is still empty: it goes again.
        if created {
            let _ = std::fs::remove_dir(dst);
        }
        return Err(SyncError::SourceUnlisted(src.to_path_buf()));
    }
    if let Some(inner) = roots::mounted_inside(&walked, src, dst) {
        if created {
            let _ = std::fs::remove_dir(dst);
        }
        return Err(SyncError::MountedInside(src.to_path_buf(), dst.to_path_buf(), inner));
    }
    let files = selection.as_deref().and_then(select::Selection::files);
    if let Some(list) = files {
        list.report_missing(&mut walked, src, events);
    }
    if options.delete && !options.allow_empty_source {
        hold_back_unmounted(&mut walked, src, events);
    }
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
        xattrs::fill(&mut walked, src, dst, defer, events);
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
    let mut cx = plan::Context {
        src_root: src,
        dst_root: dst,
        options,
        deleting: options.delete && walked.unread.is_empty(),
        rules: &rules,
        observer: events,
        link_dest: link_dest.as_ref(),
        backup: backup.as_ref(),
        files,
    };
    let mut plan = plan::plan(&cx, &walked);
    // Root reads every file: asked only of an unprivileged run.
    let unreadable = if privileged { Vec::new() } else { readable::unreadable(&plan, src) };
    if !unreadable.is_empty() {
        // Files the plan would copy but cannot read are parts of SRC not read: planned again
        // with them, as for what the walk could not read.
        let mut paths = walked.unread.paths().to_vec();
        for (rel, e) in unreadable {
            events.problem(Problem::error(rel_path::under(src, &rel), ProblemKind::Io(e)));
            walked.src_errors += 1;
            paths.push(rel);
        }
        walked.unread = unread::Unread::new(paths);
        cx.deleting = false;
        plan = plan::plan(&cx, &walked);
    }
    // Nothing to mirror is as much a sign of a disk not mounted (or another disk mounted, its
    // `lost+found` excluded) as nothing at all: either way `--delete` would empty the mirror.
    let src_top = walked.src.dir(b"");
    let nothing_mirrored = src_top.is_some_and(|d| d.entries.is_empty());
    if nothing_mirrored && options.delete && !options.allow_empty_source {
        let planned = plan.deletion_count();
        let excluded = src_top.map_or(0, |d| d.excluded.len());
        if planned > 0 && excluded == 0 {
            return Err(SyncError::EmptySource(src.to_path_buf(), planned));
        }
        if planned > 0 {
            return Err(SyncError::AllExcluded(src.to_path_buf(), excluded, planned));
        }
    }
    if let Some(limit) = options.max_delete {
        let planned = plan.deletion_count();
        if planned > limit {
            return Err(SyncError::TooManyDeletions { planned, limit });
        }
    }
    // Deletions moved into the backups free no room on DST's file system.
    plan.delete_first = dst_exists && !plan.backup && space::deletions_make_room(&plan, dst);
    for r in &plan.refused {
        let e = std::io::Error::other(r.reason);
        events.problem(Problem::error(rel_path::under(dst, &r.rel), ProblemKind::Io(e)));
    }
    let tally = summary::Tally::default();
    if created {
        // Made before the walk, so that the walk and the run see it: report it as made.
        plan.dirs[0].state = plan::DirState::Create;
        let item = item::Item::of_dir(&plan.dirs[0], &rules);
        let change = Change::new(ChangeKind::Mkdir, dry_run::path(b""), None, item);
        tally.count(&change, 1);
        events.change(&change);
    }
    let summary = if options.dry_run {
        for (change, entries) in dry_run::changes(&plan, &rules) {
            tally.count(&change, entries);
            events.change(&change);
        }
        finish(src, &plan, &walked, &tally, started, false, events)
    } else if plan.is_empty() {
        finish(src, &plan, &walked, &tally, started, false, events)
    } else {
        let exec = execute::Exec {
            src,
            dst,
            src_fd: open_dir(src, true).map_err(|e| SyncError::Io(src.to_path_buf(), e))?,
            dst_fd: open_dir(dst, true).map_err(|e| SyncError::Io(dst.to_path_buf(), e))?,
            link_dest_fd: link_dest.as_ref().and_then(|l| open_dir(l.path(), true).ok()),
            rules: &rules,
            reflink: options.reflink,
            events,
            tally: &tally,
            progress,
            io: IoScheduler::following(&io, options.io),
            src_failed: AtomicBool::new(false),
            touched: Mutex::default(),
            refused: execute::Refused::default(),
            close_errors: dedup_fs::CloseErrors::default(),
            created: execute::Created::default(),
            ids: (euid.as_raw(), rustix::process::getegid().as_raw()),
            racy: execute::Pending::default(),
            backups: backup.clone().map(execute::Backups::new),
            disk_order: options.disk_order,
            write_back: execute::WriteBack::default(),
        };
        execute::run(&exec, &plan, &walked, options.dedup);
        let failed_now = exec.src_failed.load(Ordering::Relaxed);
        finish(src, &plan, &walked, &tally, started, failed_now, events)
    };
    if options.exit_after {
        // Freeing every entry, name and action one by one is work the process's exit does at
        // once (docs/benchmarks/journal.md, "Sync fixed costs (issue 27)").
        std::mem::forget(plan);
        std::mem::forget(walked);
    }
    Ok(summary)
}

/// The `--link-dest` directory, resolved against DST when relative (as rsync does), open; a
/// warning when it cannot be used (files are then copied).
fn open_link_dest(options: &SyncOptions, dst: &Path, events: &dyn Events) -> Option<LinkDest> {
    let given = options.link_dest.as_deref()?;
    let path = if given.is_relative() { dst.join(given) } else { given.to_path_buf() };
    match LinkDest::open_root(&path) {
        Ok(l) => Some(l),
        Err(e) => {
            let e = std::io::Error::new(
                e.kind(),
                format!("--link-dest: {e}; files are copied instead of linked"),
            );
            events.problem(Problem::warning(path, ProblemKind::Io(e)));
            None
        }
    }
}

/// The summary, and a warning when deletions were skipped for a source read failure.
fn finish(
    src: &Path,
    plan: &plan::Plan,
    walked: &tree::Walked,
    tally: &summary::Tally,
    started: Instant,
    failed_during_run: bool,
    events: &dyn Events,
) -> Summary {
    let mut summary = tally.summary(plan.checked, started.elapsed());
    summary.failed += plan.refused.len() as u64;
    summary.unread = walked.src_errors + walked.dst_errors;
    let skipped_now = failed_during_run && !plan.deletions.is_empty();
    summary.deletions_skipped = plan.deletions_skipped || skipped_now;
    if summary.deletions_skipped {
        let why = "some source entries could not be read: nothing was deleted or renamed away";
        let e = std::io::Error::other(why);
        events.problem(Problem::warning(src, ProblemKind::Io(e)));
    }
    summary
}

/// Treats each mount point below SRC with nothing mounted on it ([`unmounted`]) as a part of SRC
/// not read: named, counted, and no deletion made.
fn hold_back_unmounted(walked: &mut tree::Walked, src: &Path, events: &dyn Observer) {
    let found = unmounted::below(src, walked);
    if found.is_empty() {
        return;
    }
    let mut paths = walked.unread.paths().to_vec();
    for rel in found {
        let why = std::io::Error::other(
            "a mount point in /etc/fstab with nothing mounted on it (a disk not mounted?): \
             nothing is deleted; mount it, or give --allow-empty-source to mirror it as it is",
        );
        events.problem(Problem::error(rel_path::under(src, &rel), ProblemKind::Io(why)));
        walked.src_errors += 1;
        paths.push(rel);
    }
    walked.unread = unread::Unread::new(paths);
}
