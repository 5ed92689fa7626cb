//! `find`: walk, then the stages in order, then the report. The walk and the content stages
//! start threads as their schedulers allow (`dedup_scan::crew`): one per listing or read in
//! flight. A large report and cache file are built on rayon's pool (one thread per core): that
//! work is computing, not waiting for a device.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use dedup_core::{Observer, Problem, Progress};
use dedup_report::{Group, Report, ReportFile, Summary, REPORT_VERSION};
use dedup_scan::io::{Concurrency, DeviceChoice, IoScheduler};
use dedup_scan::read::Reader;

use crate::selection::Selection;
use crate::tree::{walk_tree, Tree};
use rayon::prelude::*;

use crate::analysis::{analyse, Analysis, Recorder};
use crate::cache::{CacheOptions, CacheRun, CacheUse, Learned};
use crate::group_order::sort_groups;
use crate::phases::{DONE, GROUP, WALK};
use crate::stages::candidates::{size_classes, Class, SizeClasses};
use crate::stages::exact::compare_classes;
use crate::stages::reading::Reading;
use crate::stages::sample::{split_by_samples, Sampled};
use crate::stages::whole_read::WholeRead;
use crate::tuning::Tuning;
use crate::PARALLEL_FROM;

/// What to find.
#[derive(Debug, Clone, Default)]
pub struct FindOptions {
    /// Which files take part.
    pub selection: Selection,
    /// Count hard-linked paths as duplicates of each other (jdupes `-H`).
    pub hardlinks: bool,
    /// How many directories are listed and files read at once, per device.
    pub concurrency: Concurrency,
    /// Sample-stage sizes (defaults chosen by measurement).
    pub tuning: Tuning,
    /// Duplicated directories, files by copies, per-directory summary (`crate::analysis`).
    pub analysis: Analysis,
    /// The persistent content cache to use and refresh, if any.
    pub cache: Option<CacheOptions>,
}

/// How many files each stage let through: the funnel that explains where a run spent its reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Funnel {
    /// Regular-file paths walked and selected.
    pub files: u64,
    /// Distinct files (inodes) sharing their size with another.
    pub same_size: u64,
    /// Of those, files still possibly equal after the samples.
    pub after_samples: u64,
    /// Files in the final groups.
    pub grouped: u64,
}

/// A finished scan: the report, and how the I/O scheduler chose concurrency (for `-v`).
#[derive(Debug)]
pub struct Run {
    /// The groups found.
    pub report: Report,
    /// Concurrency chosen per device while walking.
    pub walk_io: Vec<DeviceChoice>,
    /// Concurrency chosen per device while reading content.
    pub read_io: Vec<DeviceChoice>,
    /// Devices measured slow enough to read more files whole instead of sampling them.
    pub whole_reads: Vec<WholeRead>,
    /// Files through each stage.
    pub funnel: Funnel,
    /// What the content cache did, when one was used.
    pub cache: Option<CacheUse>,
}

/// Counts the problems that leave files out, on their way to the caller's observer.
struct Counting<'a> {
    inner: &'a dyn Observer,
    errors: AtomicU64,
}

impl Observer for Counting<'_> {
    fn problem(&self, problem: Problem) {
        if problem.incomplete {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.problem(problem);
    }
}

/// Scan `roots` and return the groups of identical files. `progress` counts in the finder's
/// phases: made with `Progress::new(PHASES)`, it can name and time them ([`crate::PHASES`]).
pub fn find(
    roots: &[PathBuf],
    options: &FindOptions,
    observer: &dyn Observer,
    progress: &Progress,
) -> Report {
    find_run(roots, options, observer, progress).report
}

/// [`find`], also telling how the I/O scheduler chose concurrency.
pub fn find_run(
    roots: &[PathBuf],
    options: &FindOptions,
    observer: &dyn Observer,
    progress: &Progress,
) -> Run {
    // Listing directories and reading content load a device differently: measure each apart.
    let walk_io = IoScheduler::new(options.concurrency.for_listing());
    let recorder = Recorder::new(observer, &options.analysis);
    let counting = Counting { inner: &recorder, errors: AtomicU64::new(0) };
    let (mut tree, mut cache) = walk_and_load(roots, options, &walk_io, &counting, progress);
    let read_io = IoScheduler::following(&walk_io, options.concurrency);
    let Found { groups, funnel, learned, whole_reads } =
        find_groups(&mut tree, cache.as_mut(), options, &counting, &read_io, progress);
    let cached_groups = groups.iter().filter(|g| g.cached).count() as u64;
    let summary = Summary { files_scanned: funnel.files, ..Summary::default() };
    // And it is written while the report is built.
    let (cache, mut report) = std::thread::scope(|scope| {
        let saving = cache.map(|c| scope.spawn(|| c.save(&tree, learned, &counting)));
        let report = build_report(&tree, &groups, options.hardlinks, summary);
        let cache = saving.map(|s| CacheUse { cached_groups, ..joined(s) });
        (cache, report)
    });
    progress.start_phase(DONE, 0);
    report.summary.errors = counting.errors.into_inner();
    let (hardlinks, depth) = (options.hardlinks, options.selection.walk.max_depth);
    let findings =
        analyse(&tree, &groups, hardlinks, depth, &options.analysis, recorder.into_paths());
    findings.apply(&mut report);
    let (walk_io, read_io) = (walk_io.choices(), read_io.choices());
    Run { report, walk_io, read_io, whole_reads, funnel, cache }
}

/// Walk the tree; meanwhile the cache file loads (a large cache takes a while to parse). The
/// walk starts its own threads as its scheduler allows.
fn walk_and_load(
    roots: &[PathBuf],
    options: &FindOptions,
    walk_io: &IoScheduler,
    counting: &Counting,
    progress: &Progress,
) -> (Tree, Option<CacheRun>) {
    std::thread::scope(|scope| {
        let loading = options.cache.as_ref().map(|c| scope.spawn(|| CacheRun::open(c, counting)));
        progress.start_phase(WALK, 0);
        let order = options.tuning.physical_order;
        let tree = walk_tree(roots, &options.selection, order, walk_io, counting, progress);
        (tree, loading.and_then(joined))
    })
}

/// What the stages after the walk found.
struct Found {
    /// The groups of identical files.
    groups: Vec<Class>,
    /// How many files each stage let through.
    funnel: Funnel,
    /// What the cache may learn.
    learned: Vec<Learned>,
    /// The sample stage's measured switch to whole reads.
    whole_reads: Vec<WholeRead>,
}

/// Size classes, then the content stages.
fn find_groups(
    tree: &mut Tree,
    cache: Option<&mut CacheRun>,
    options: &FindOptions,
    observer: &Counting,
    io: &IoScheduler,
    progress: &Progress,
) -> Found {
    progress.start_phase(GROUP, tree.files.len() as u64);
    let SizeClasses { classes, repeated_entries } = size_classes(tree, options.hardlinks);
    let tree = &*tree;
    let follow_links = options.selection.walk.follow_links;
    let reader = Reader { observer, progress, io };
    let ctx = Reading::new(tree, reader, follow_links);
    let same_size = inodes(&classes);
    let mut found = content_stages(classes, &ctx, options, cache, tree);
    found.funnel.files = tree.files.len() as u64 - repeated_entries;
    found.funnel.same_size = same_size;
    found.funnel.grouped = inodes(&found.groups);
    found
}

/// Files in a list of classes (inodes, not paths).
fn inodes(classes: &[Class]) -> u64 {
    classes.iter().map(|c| c.inodes.len() as u64).sum()
}

/// From size classes to groups: the cache's shortcut when there is a cache, then the samples
/// and the exact comparison. Of the funnel, only the files left after the samples are known
/// here.
fn content_stages(
    classes: Vec<Class>,
    ctx: &Reading,
    options: &FindOptions,
    mut cache: Option<&mut CacheRun>,
    tree: &Tree,
) -> Found {
    let (hardlinks, tuning) = (options.hardlinks, options.tuning);
    let (classes, cached_groups) = match cache.as_deref_mut() {
        Some(cache) => {
            let (mut to_read, mut groups, mixed) = cache.shortcut(classes, tree, hardlinks, tuning);
            let (more, settled) = cache.resolve(mixed, ctx, hardlinks);
            to_read.extend(more);
            groups.extend(settled);
            (to_read, groups)
        }
        None => (classes, Vec::new()),
    };
    let learn = cache.is_some();
    let Sampled { classes, learned: sampled, mut whole_reads } =
        split_by_samples(classes, ctx, hardlinks, tuning, learn);
    let after_samples = inodes(&classes);
    let (mut groups, mut learned) =
        compare_classes(classes, ctx, hardlinks, learn, tuning, &mut whole_reads);
    learned.extend(sampled);
    if let Some(cache) = cache {
        cache.expand(&mut groups, |inode| inode.meta(tree).size);
    }
    groups.extend(cached_groups);
    let funnel = Funnel { after_samples, ..Funnel::default() };
    Found { groups, funnel, learned, whole_reads }
}

/// The result of a helper thread; its panic, if any, goes on in this one.
fn joined<T>(handle: std::thread::ScopedJoinHandle<T>) -> T {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The report of the groups found; many groups are built in parallel (tens of thousands of
/// groups take tens of milliseconds on one thread).
fn build_report(tree: &Tree, classes: &[Class], hardlinks: bool, summary: Summary) -> Report {
    let mut summary = Summary { groups: classes.len() as u64, ..summary };
    for class in classes {
        let copies = if hardlinks { class.path_count() } else { class.inodes.len() } as u64;
        summary.redundant_files += copies - 1;
        summary.redundant_bytes += (copies - 1) * class.size;
    }
    let groups = if classes.len() < PARALLEL_FROM {
        classes.iter().map(|class| group_of(tree, class)).collect()
    } else {
        classes.par_iter().map(|class| group_of(tree, class)).collect()
    };
    let mut report = Report {
        version: REPORT_VERSION,
        tool: format!("dedup {}", env!("CARGO_PKG_VERSION")),
        roots: tree.roots.iter().map(|r| r.path.clone()).collect(),
        groups,
        summary,
        dirs: None,
        unique: None,
        dir_summary: None,
    };
    sort_groups(&mut report.groups);
    report
}

/// One group of the report: every path of every member, in the order of the root they were
/// found under, then by bytes.
fn group_of(tree: &Tree, class: &Class) -> Group {
    let mut files = Vec::with_capacity(class.path_count());
    for inode in &class.inodes {
        let meta = inode.meta(tree);
        for i in inode.paths() {
            let entry = &tree.files[i];
            let file = ReportFile {
                path: tree.arena.path(entry.node),
                dev: meta.id.dev,
                ino: meta.id.ino,
                mtime_ns: meta.mtime_ns,
                ctime_ns: Some(meta.ctime_ns),
            };
            files.push((entry.root, file));
        }
    }
    files.sort_by(|a, b| {
        (a.0, a.1.path.as_os_str().as_bytes()).cmp(&(b.0, b.1.path.as_os_str().as_bytes()))
    });
    let files = files.into_iter().map(|(_, f)| f).collect();
    Group { size: class.size, files, cached: class.cached }
}

/// What happens to files that change between the walk and their reads: the walk runs, the test
/// changes the tree, then the content stages run.
#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;
    use std::sync::Mutex;
    use std::time::{Duration, SystemTime};

    use dedup_core::ProblemKind;

    use super::*;

    #[derive(Default)]
    struct Problems(Mutex<Vec<Problem>>);

    impl Observer for Problems {
        fn problem(&self, problem: Problem) {
            self.0.lock().unwrap().push(problem);
        }
    }

    /// The groups (paths below `root`, sorted) and the problems (path below `root`, kind) of a
    /// run over `root` in which `change` runs between the walk and the reads.
    fn find_changed(
        root: &Path,
        change: impl FnOnce(),
    ) -> (Vec<Vec<String>>, Vec<(String, String)>) {
        let problems = Problems::default();
        let counting = Counting { inner: &problems, errors: AtomicU64::new(0) };
        let options = FindOptions::default();
        let progress = Progress::default();
        let walk_io = IoScheduler::new(options.concurrency.for_listing());
        let roots = [root.to_owned()];
        let (mut tree, _) = walk_and_load(&roots, &options, &walk_io, &counting, &progress);
        change();
        let read_io = IoScheduler::following(&walk_io, options.concurrency);
        let found = find_groups(&mut tree, None, &options, &counting, &read_io, &progress);
        let below = |path: PathBuf| path.strip_prefix(root).unwrap().display().to_string();
        let mut groups: Vec<Vec<String>> = found
            .groups
            .iter()
            .map(|class| {
                let paths = class.inodes.iter().flat_map(|inode| inode.paths());
                let mut paths: Vec<String> =
                    paths.map(|i| below(tree.arena.path(tree.files[i].node))).collect();
                paths.sort();
                paths
            })
            .collect();
        groups.sort();
        let problems = problems.0.into_inner().unwrap();
        let problems = problems.into_iter().map(|p| (below(p.path), format!("{:?}", p.kind)));
        (groups, problems.collect())
    }

    /// Three copies of `size` bytes: `a`, `b` and `d/c`.
    fn copies(size: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        fs::create_dir(dir.path().join("d")).unwrap();
        for name in ["a", "b", "d/c"] {
            fs::write(dir.path().join(name), &bytes).unwrap();
        }
        dir
    }

    fn pair() -> Vec<Vec<String>> {
        vec![vec!["a".to_string(), "b".to_string()]]
    }

    /// Another file renamed over a walked one is not read as if it were the one walked, though
    /// its bytes are the same: small files (read whole in one request, then checked) and
    /// sampled ones alike.
    #[test]
    fn a_file_replaced_after_the_walk_is_left_out_as_replaced() {
        for size in [100, 200_000] {
            let dir = copies(size);
            let c = dir.path().join("d/c");
            let (groups, problems) = find_changed(dir.path(), || {
                fs::copy(&c, dir.path().join("new")).unwrap();
                fs::rename(dir.path().join("new"), &c).unwrap();
            });
            assert_eq!(groups, pair(), "size {size}");
            assert_eq!(problems, [("d/c".to_string(), format!("{:?}", ProblemKind::Replaced))]);
        }
    }

    /// A FIFO put where a walked file was is opened (without blocking) but nothing is taken
    /// from it: the bytes a writer left in it are still there, and the file is reported
    /// replaced.
    #[test]
    fn a_fifo_put_in_a_files_place_keeps_its_bytes_and_is_reported_replaced() {
        let dir = copies(100);
        let c = dir.path().join("d/c");
        let mut fifo = None;
        let (groups, problems) = find_changed(dir.path(), || {
            fs::remove_file(&c).unwrap();
            let mode = rustix::fs::Mode::from_raw_mode(0o600);
            rustix::fs::mknodat(rustix::fs::CWD, &c, rustix::fs::FileType::Fifo, mode, 0).unwrap();
            let mut writer = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(&c)
                .unwrap();
            std::io::Write::write_all(&mut writer, &[7u8; 100]).unwrap();
            fifo = Some(writer);
        });
        assert_eq!(groups, pair());
        assert_eq!(problems, [("d/c".to_string(), format!("{:?}", ProblemKind::Replaced))]);
        let mut left = [0u8; 200];
        let n = std::io::Read::read(&mut fifo.unwrap(), &mut left).unwrap();
        assert_eq!(n, 100, "the FIFO's bytes were taken");
    }

    /// A file rewritten in place with the same bytes but a new modification time is left out
    /// as changed.
    #[test]
    fn a_file_rewritten_after_the_walk_is_left_out_as_changed() {
        let dir = copies(100);
        let c = dir.path().join("d/c");
        let (groups, problems) = find_changed(dir.path(), || {
            let file = fs::OpenOptions::new().write(true).open(&c).unwrap();
            let later = SystemTime::now() + Duration::from_secs(3600);
            file.set_modified(later).unwrap();
        });
        assert_eq!(groups, pair());
        assert_eq!(problems, [("d/c".to_string(), format!("{:?}", ProblemKind::Changed))]);
    }
}
