//! Carrying out a plan, phase by phase: our own temporary names of an interrupted run removed;
//! directories created or renamed (top-down); every directory's entries made right, directories
//! in parallel on a crew that grows with the I/O scheduler; hard links within the source;
//! deletions (never after a source read failed); entries that replace a deleted directory;
//! racily clean copies settled ([`racy`]); last, directories' metadata, deepest first, since
//! every change inside a directory changes its times. Where the plan found that the copies need
//! the room the deletions free (`Plan::delete_first`), moved files are renamed first, then the
//! deletions run, then the rest.

mod backup;
mod cleanup;
mod clones;
mod copy;
mod created;
mod dirs;
mod disk_order;
mod entries;
mod meta;
mod racy;
mod share;
mod write_back;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use dedup_core::{Problem, ProblemKind, Progress};
use dedup_fs::{open_dir_beneath, FsError, Reflink};
use dedup_scan::crew::{map_each, Staffing};
use dedup_scan::io::IoScheduler;
use dedup_scan::EntryKind;

use crate::change::{Change, Events};
use crate::compare::Rules;
use crate::options::DedupMode;
use crate::plan::{Action, Before, DirPlan, Op, Plan};
use crate::rel_path::{join, split, under};
use crate::summary::Tally;
use crate::tree::Walked;

pub use backup::Backups;
pub use clones::Refused;
pub use created::Created;
pub use racy::Pending;
pub use write_back::WriteBack;

/// Actions handed to one worker at a time: a large directory is shared among threads.
const ACTIONS_PER_TASK: usize = 64;

/// A plan of at most this much work (in actions, see [`BYTES_PER_ACTION`]) is carried out on
/// the calling thread: starting and waking a crew (a thread, its stack and heap, the hand-offs)
/// costs about as much CPU as ten small actions, so a plan of a few files stays here, while a
/// plan of about a hundred small files already finishes sooner on a crew, for a little more CPU
/// (docs/benchmarks/journal.md, "Sync fixed costs, 2026-11-26").
const WORK_FOR_ONE_THREAD: u64 = 32;

/// Bytes of file content that weigh as much as one action: an action costs about ten system
/// calls, which take about as long as copying this much in memory; a few large files are shared
/// out.
const BYTES_PER_ACTION: u64 = 64 * 1024;

/// The work in actions `list` of `d`: one per action, and more for the bytes a copy writes.
fn work(d: &DirPlan, list: &[usize]) -> u64 {
    list.iter()
        .map(|&a| {
            let action = &d.actions[a];
            let copies = matches!(action.op, Op::Create | Op::CloneFrom { .. })
                && action.src.kind == EntryKind::File;
            1 + if copies { action.src.meta.map_or(0, |m| m.size) / BYTES_PER_ACTION } else { 0 }
        })
        .sum()
}

/// Everything the phases share.
pub struct Exec<'a> {
    /// SRC as given and open.
    pub src: &'a Path,
    /// DST as given.
    pub dst: &'a Path,
    /// SRC's root directory, open.
    pub src_fd: OwnedFd,
    /// DST's root directory, open.
    pub dst_fd: OwnedFd,
    /// The `--link-dest` directory, open.
    pub link_dest_fd: Option<OwnedFd>,
    /// How metadata is compared and set.
    pub rules: &'a Rules<'a>,
    /// How content is copied.
    pub reflink: Reflink,
    /// Where changes and problems go.
    pub events: &'a dyn Events,
    /// Counts for the summary.
    pub tally: &'a Tally,
    /// Progress counters.
    pub progress: &'a Progress,
    /// Concurrency of reads per device.
    pub io: IoScheduler,
    /// Some source entry could not be read during the run: no deletions.
    pub src_failed: AtomicBool,
    /// Directories (below DST) whose entries changed: their times are set again at the end.
    pub touched: Mutex<HashSet<Vec<u8>>>,
    /// Device pairs that refused a clone for every file (`--reflink auto` asks once a pair).
    pub refused: Refused,
    /// Destination devices whose file system may report a failed write only at `close`.
    pub close_errors: dedup_fs::CloseErrors,
    /// What a file created in a destination directory starts with.
    pub created: Created,
    /// This process's effective user and group ids, which a new file gets.
    pub ids: (u32, u32),
    /// Copies finished within their source's racy window.
    pub racy: racy::Pending,
    /// Where what the run replaces or deletes is kept (`--backup`).
    pub backups: Option<Backups>,
    /// Whether file contents are copied in the order of the disk ([`disk_order`]).
    pub disk_order: crate::options::DiskOrder,
    /// The new copies, for their write-back at the end in an order the disk can follow
    /// ([`write_back`]).
    pub write_back: WriteBack,
}

impl Exec<'_> {
    /// Report a change made.
    pub fn done(&self, change: Change, entries: u64) {
        self.tally.count(&change, entries);
        self.events.change(&change);
    }

    /// Report an entry that could not be made right.
    pub fn failed(&self, rel: &[u8], e: FsError) {
        self.tally.failed();
        let kind = match e {
            FsError::Changed => ProblemKind::Changed,
            FsError::Io(e) => ProblemKind::Io(e),
            other => ProblemKind::Io(std::io::Error::other(other.to_string())),
        };
        self.events.problem(Problem::error(under(self.dst, rel), kind));
    }

    /// The source could not be read at `rel`.
    pub fn source_failed(&self, rel: &[u8], e: FsError) {
        self.src_failed.store(true, Ordering::Relaxed);
        self.tally.failed();
        let kind = match e {
            FsError::Changed => ProblemKind::Changed,
            FsError::Io(e) => ProblemKind::Io(e),
            other => ProblemKind::Io(std::io::Error::other(other.to_string())),
        };
        self.events.problem(Problem::error(under(self.src, rel), kind));
    }

    /// Remember that the entries of the directory holding `rel` changed.
    pub fn touch_parent(&self, rel: &[u8]) {
        self.touch(split(rel).0);
    }

    /// Entries of the destination directory `dir` changed (its times are set afterwards).
    pub fn touch(&self, dir: &[u8]) {
        let mut touched = self.touched.lock().unwrap_or_else(|e| e.into_inner());
        // Most directories are touched many times: their path is copied once.
        if !touched.contains(dir) {
            touched.insert(dir.to_vec());
        }
    }

    /// The destination directory at `rel`, opened without following symlinks.
    pub fn dst_dir(&self, rel: &[u8]) -> Result<OwnedFd, FsError> {
        open_dir_beneath(&self.dst_fd, rel)
    }

    /// The source directory at `rel`.
    pub fn src_dir(&self, rel: &[u8]) -> Result<OwnedFd, FsError> {
        open_dir_beneath(&self.src_fd, rel)
    }
}

/// The last name of a relative path, as an `OsStr`.
pub fn name_of(rel: &[u8]) -> &OsStr {
    OsStr::from_bytes(split(rel).1)
}

/// Carry out `plan`, and then start the write-back of the new copies in an order the
/// destination's disk can follow where that is wanted ([`write_back`]).
pub fn run(x: &Exec<'_>, plan: &Plan, walked: &Walked, dedup: Option<DedupMode>) {
    let setting = write_back::setting();
    if let Err(e) = &setting {
        let e = std::io::Error::other(format!("{e}; left as by default"));
        x.events.problem(Problem::warning(x.dst, ProblemKind::Io(e)));
    }
    let dst_dev = rustix::fs::fstat(&x.dst_fd).map_or(0, |st| st.st_dev);
    let wanted = write_back::wanted(setting, dedup_scan::layout::spins(dst_dev));
    if wanted {
        x.write_back.open();
    }
    phases(x, plan, walked, dedup);
    if wanted {
        write_back::send(x, plan);
    }
}

/// The phases of `run`, in order.
fn phases(x: &Exec<'_>, plan: &Plan, walked: &Walked, dedup: Option<DedupMode>) {
    cleanup::strays(x, &plan.strays);
    dirs::create(x, plan);
    let now = |a: &Action| a.before != Before::DeletedDir;
    if plan.delete_first {
        // Moved files are renamed out of the deleted directories first, then the deletions make
        // the room the copies need.
        let renamed = |a: &Action| now(a) && matches!(a.op, Op::Rename { .. });
        entries_phase(x, plan, &renamed);
        deletions(x, plan);
        entries_phase(x, plan, &|a| now(a) && !renamed(a));
    } else {
        entries_phase(x, plan, &now);
    }
    cleanup::links(x, &plan.links);
    if !plan.delete_first {
        deletions(x, plan);
    }
    if let Some(mode) = dedup {
        // Last of the content changes: every file this run makes is in place, and hard links
        // made here change their directories' times, which are set next.
        share::run(x, plan, walked, mode);
    }
    racy::settle(x);
    dirs::finish(x, plan);
}

/// The entries `which` picks, every directory's, on a crew when there is enough work.
fn entries_phase(x: &Exec<'_>, plan: &Plan, which: &(dyn Fn(&Action) -> bool + Sync)) {
    let mut tasks = Vec::new();
    for (i, d) in plan.dirs.iter().enumerate() {
        let picked: Vec<usize> = (0..d.actions.len()).filter(|&a| which(&d.actions[a])).collect();
        for chunk in picked.chunks(ACTIONS_PER_TASK) {
            tasks.push((i, chunk.to_vec()));
        }
    }
    let actions: usize = tasks.iter().map(|t| t.1.len()).sum();
    x.progress.start_phase(crate::COPY, actions as u64);
    let copies: Vec<disk_order::Copy> = tasks
        .iter()
        .flat_map(|(i, list)| list.iter().map(move |&a| (*i, a)))
        .filter(|&(i, a)| disk_order::reads_source(&plan.dirs[i].actions[a]))
        .collect();
    if disk_order::on(x, plan, &copies) {
        // Everything else first (it reads no content, and a rename out of a name goes before
        // the copy that takes the name), then the copies one at a time in the disk's order.
        for (i, list) in &mut tasks {
            list.retain(|&a| !disk_order::reads_source(&plan.dirs[*i].actions[a]));
        }
        tasks.retain(|(_, list)| !list.is_empty());
        run_tasks(x, plan, tasks);
        disk_order::copy_in_order(x, plan, copies);
    } else {
        run_tasks(x, plan, tasks);
    }
}

/// Carry out `tasks` (a directory's index and actions each), on a crew when there is enough
/// work.
fn run_tasks(x: &Exec<'_>, plan: &Plan, tasks: Vec<(usize, Vec<usize>)>) {
    let work: u64 = tasks.iter().map(|(i, list)| work(&plan.dirs[*i], list)).sum();
    if work <= WORK_FOR_ONE_THREAD {
        for (i, list) in tasks {
            entries::run_dir(x, i, &plan.dirs[i], &list);
        }
    } else {
        let staff = Staffing {
            most: x.io.threads(),
            wanted: &|| x.io.workers_wanted(),
            name: "dedup-sync",
        };
        map_each(tasks, staff, &|(i, list)| entries::run_dir(x, i, &plan.dirs[i], &list));
    }
}

/// The deletions, and then the entries that replace a deleted directory; none once a source
/// read failed during the run (the plan has none when the walk could not read everything).
fn deletions(x: &Exec<'_>, plan: &Plan) {
    x.progress.start_phase(crate::DELETE, 0);
    let later = |d: &DirPlan| -> Vec<usize> {
        (0..d.actions.len()).filter(|&a| d.actions[a].before == Before::DeletedDir).collect()
    };
    if x.src_failed.load(Ordering::Relaxed) {
        for d in &plan.dirs {
            for a in later(d) {
                let why = "not made: the directory in its way was not deleted, since a source \
                           entry could not be read";
                x.failed(
                    &join(&d.rel, d.actions[a].name()),
                    FsError::Io(std::io::Error::other(why)),
                );
            }
        }
        return;
    }
    cleanup::deletions(x, &plan.deletions);
    for (i, d) in plan.dirs.iter().enumerate() {
        let later = later(d);
        if !later.is_empty() {
            entries::run_dir(x, i, d, &later);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::DirState;
    use dedup_scan::{Entry, Metadata};

    fn entry(name: &str, kind: EntryKind, size: u64) -> Entry {
        let st = rustix::fs::stat(".").unwrap();
        let mut meta = Metadata::from_stat(&st).unwrap();
        (meta.kind, meta.size) = (kind, size);
        Entry {
            name: name.as_bytes().to_vec(),
            kind,
            followed: false,
            meta: Some(meta),
            target: None,
            xattrs: Vec::new(),
        }
    }

    fn dir_of(actions: Vec<(EntryKind, u64, Op)>) -> DirPlan {
        DirPlan {
            rel: Vec::new(),
            src: entry("d", EntryKind::Dir, 0),
            old: None,
            state: DirState::Exists,
            before: Before::Nothing,
            set_meta: false,
            listed: true,
            actions: actions
                .into_iter()
                .enumerate()
                .map(|(i, (kind, size, op))| Action {
                    src: entry(&format!("f{i}"), kind, size),
                    old: None,
                    op,
                    before: Before::Nothing,
                })
                .collect(),
        }
    }

    #[test]
    fn a_few_files_are_copied_on_one_thread_and_many_or_large_ones_are_shared_out() {
        // An incremental round of the seed's small tree: 10 files of up to 10 KB.
        let few = dir_of((0..10).map(|_| (EntryKind::File, 10_000, Op::Create)).collect());
        assert_eq!(work(&few, &(0..10).collect::<Vec<_>>()), 10);
        assert!(work(&few, &(0..10).collect::<Vec<_>>()) <= WORK_FOR_ONE_THREAD);
        // The small tree's first copy: 100 of them.
        let small = dir_of((0..100).map(|_| (EntryKind::File, 10_000, Op::Create)).collect());
        let all: Vec<usize> = (0..100).collect();
        assert_eq!(work(&small, &all), 100);
        assert!(work(&small, &all) > WORK_FOR_ONE_THREAD);
        // Ten files of 8 MiB: few actions, much content.
        let big = dir_of((0..10).map(|_| (EntryKind::File, 8 << 20, Op::Create)).collect());
        assert_eq!(work(&big, &(0..10).collect::<Vec<_>>()), 10 * (1 + 128));
        // Metadata-only updates weigh one each, whatever the file's size.
        let meta = dir_of((0..10).map(|_| (EntryKind::File, 8 << 20, Op::Meta)).collect());
        assert_eq!(work(&meta, &(0..10).collect::<Vec<_>>()), 10);
    }
}
