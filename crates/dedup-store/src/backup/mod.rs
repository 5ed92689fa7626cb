//! `backup`: the engine's walker hands each directory's entries over as it lists them, in
//! parallel; files unchanged since the parent snapshot take its chunks without a read, the others
//! go through the pipeline's stages (read and chunk, then seal and pack); a directory's tree is
//! stored when it and everything below it are done; then the index, then the snapshot.

mod disk_order;
mod estimate;
mod file;
mod pipeline;
mod problems;
mod pseudo_fs;
mod queue;
mod roots;
mod select;
mod visitor;

pub use estimate::count_bytes;
pub use select::Selection;

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use dedup_core::Observer;
use dedup_scan::io::{Concurrency, IoScheduler};
use dedup_scan::{walk, Detail, WalkOptions};

use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind, Snapshot, Summary, Tree};
use crate::id::Id;
use crate::repo::{now_ns, BlobSink, Repository, WriterMarker};

/// What to back up and how.
#[derive(Debug, Clone, Default)]
pub struct BackupOptions {
    /// Paths to back up (made absolute, not resolved).
    pub paths: Vec<PathBuf>,
    /// Host name recorded.
    pub host: String,
    /// User name recorded.
    pub user: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Exclusion globs (matched against the path below each root and the name).
    pub excludes: Vec<String>,
    /// What is left out by size and by what a directory holds.
    pub selection: Selection,
    /// Stay on each root's file system.
    pub one_file_system: bool,
    /// Read and count, write nothing.
    pub dry_run: bool,
    /// The parent snapshot for the unchanged-file check.
    pub parent: Option<(Id, Snapshot)>,
    /// Program name and version recorded.
    pub program: String,
}

/// Counters a progress display may poll.
#[derive(Debug, Default)]
pub struct BackupProgress {
    /// Files done.
    pub files: AtomicU64,
    /// Bytes read.
    pub bytes_read: AtomicU64,
    /// Bytes of files done, read or not.
    pub bytes_done: AtomicU64,
    /// The file of the file stage (a large one) read most recently, while it is read.
    pub current: std::sync::Mutex<Option<PathBuf>>,
}

impl BackupProgress {
    /// The file being read now, if a large one is.
    pub fn current_file(&self) -> Option<PathBuf> {
        self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn start_reading(&self, file: &std::path::Path) {
        *self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(file.to_path_buf());
    }

    /// Read: no longer current, unless another file was started since.
    fn done_reading(&self, file: &std::path::Path) {
        let mut current = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.as_deref() == Some(file) {
            *current = None;
        }
    }
}

/// What a backup did.
#[derive(Debug, Clone)]
pub struct BackupOutcome {
    /// The snapshot's id (`None` on a dry run).
    pub id: Option<Id>,
    /// The snapshot.
    pub snapshot: Snapshot,
    /// Packs written.
    pub packs_written: u64,
    /// Packs of an interrupted backup adopted.
    pub packs_adopted: u64,
}

/// Backs up `options.paths`. Problems with single entries go to `observer` (the snapshot is then
/// marked incomplete); a repository error stops the backup with no snapshot written. A path that
/// does not exist is left out of the snapshot and of its paths (restic's rule), and makes it
/// incomplete; when no path exists, or none could be read at all, no snapshot is written.
pub fn backup(
    repo: &Repository,
    options: &BackupOptions,
    observer: &dyn Observer,
    progress: &BackupProgress,
) -> Result<BackupOutcome> {
    let start = now_ns();
    check_labels(options)?;
    let (paths, missing) = roots::present(&options.paths, observer)?;
    let session = Session::begin(repo, options)?;
    let mut walk_options = WalkOptions::default()
        .with_excludes(&options.excludes)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    walk_options.detail = Detail::Everything;
    // The visitor reads attributes itself, only for entries the parent snapshot cannot vouch for.
    walk_options.xattrs = false;
    walk_options.one_file_system = options.one_file_system;
    let parent_time = options.parent.as_ref().map(|(_, s)| s.time);
    let order = disk_order::Choice::from_env().map_err(|e| Error::Invalid(e.to_string()))?;
    walk_options.inode_order = order.walks_in_inode_order(&paths);
    let stages = pipeline::Stages::new().with_disk_order(order);
    let visitor = visitor::BackupVisitor::new(
        &session.sink,
        &stages,
        observer,
        progress,
        parent_time,
        options.one_file_system,
    )
    .with_selection(options.selection.clone());
    let parent_root = options.parent.as_ref().map(|(_, s)| (s.tree, s.status_tree));
    let roots = visitor.parent_roots(parent_root, &paths);
    visitor.set_parent_roots(roots);
    // Listing is metadata work: a few directories at once; reading has its own scheduler.
    let io = IoScheduler::new(Concurrency::Fixed(4));
    pipeline::run(&session.sink, &visitor, &stages, || {
        walk(&paths, &walk_options, &io, &visitor, &visitor);
    });
    let (found, mut counts) = visitor.finish()?;
    counts.errors += missing;
    roots::some_read(&paths, &found)?;
    let tree = roots::store_root(&session.sink, &paths, found)?;
    session.commit(options, &paths, tree, counts, start)
}

/// Refuses a host or tag with a control character: `snapshots` would print it raw, and a
/// newline in it could forge a line of output.
fn check_labels(options: &BackupOptions) -> Result<()> {
    let labels =
        std::iter::once(("host", &options.host)).chain(options.tags.iter().map(|tag| ("tag", tag)));
    for (what, label) in labels {
        if label.chars().any(char::is_control) {
            return Err(Error::Invalid(format!(
                "{what} {label:?}: control characters (newlines, tabs…) are not allowed"
            )));
        }
    }
    Ok(())
}

/// Backs up one stream as the file `name` at the top of the snapshot.
pub fn backup_stream(
    repo: &Repository,
    options: &BackupOptions,
    name: &[u8],
    reader: &mut dyn Read,
    progress: &BackupProgress,
) -> Result<BackupOutcome> {
    let start = now_ns();
    check_labels(options)?;
    if !crate::format::valid_name(name) {
        return Err(Error::Invalid(format!(
            "{:?}: not a valid file name",
            String::from_utf8_lossy(name)
        )));
    }
    let session = Session::begin(repo, options)?;
    let (chunks, size) =
        file::store_stream(&session.sink, reader, progress).map_err(|e| match e {
            file::StreamError::Read(err) => Error::io("standard input", err),
            file::StreamError::Store(err) => err,
        })?;
    let node = Node {
        name: name.to_vec(),
        kind: NodeKind::File,
        mode: 0o644,
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
        size,
        atime: start,
        mtime: start,
        ctime: start,
        nlink: 1,
        content: Content::Chunks(chunks),
        ..Node::default()
    };
    let tree = session.sink.store_tree(Tree { nodes: vec![node], ..Tree::default() })?;
    let counts =
        Summary { files_new: 1, bytes_read: size, bytes_total: size, ..Summary::default() };
    session.commit(options, &[], tree, counts, start)
}

/// A writing session: marker, sink over the index; committed by writing the snapshot.
struct Session<'r> {
    repo: &'r Repository,
    sink: BlobSink<'r>,
    marker: Option<WriterMarker>,
    /// The packs of deletion plans when the session began (left out of its index).
    planned: std::collections::HashSet<Id>,
}

impl<'r> Session<'r> {
    fn begin(repo: &'r Repository, options: &BackupOptions) -> Result<Self> {
        let marker =
            if options.dry_run { None } else { Some(WriterMarker::create(repo, &options.host)?) };
        // Read after the marker is written (§12): a prune that planned before then waits for
        // this session, one that plans after leaves out what this session will refer to.
        let planned = repo.planned_deletions()?;
        let loaded = repo.load_index_without(&planned)?;
        let sink = BlobSink::new(repo, loaded.index, options.dry_run);
        if let Some(marker) = &marker {
            adopt_what_killed_sessions_left(repo, &sink, &marker.name(), &planned)?;
        }
        Ok(Session { repo, sink, marker, planned })
    }

    /// Writes the snapshot of the root tree `tree` and its status tree, which holds `paths`.
    fn commit(
        mut self,
        options: &BackupOptions,
        paths: &[PathBuf],
        (tree, status_tree): (Id, Option<Id>),
        mut summary: Summary,
        start: i64,
    ) -> Result<BackupOutcome> {
        self.sink.flush()?;
        if !options.dry_run {
            self.sink.keep_indexed_what_a_prune_planned_since(&self.planned, tree, status_tree)?;
        }
        let stats = self.sink.stats();
        summary.bytes_added = stats.bytes_added;
        summary.blobs_added = stats.blobs_added;
        let snapshot = Snapshot {
            time: start,
            tree,
            status_tree,
            parent: options.parent.as_ref().map(|(id, _)| *id),
            host: options.host.clone(),
            user: options.user.clone(),
            paths: paths.iter().map(|p| p.as_os_str().as_encoded_bytes().to_vec()).collect(),
            tags: options.tags.clone(),
            incomplete: summary.errors > 0,
            summary,
            program: options.program.clone(),
            original: None,
        };
        let id = if options.dry_run { None } else { Some(self.repo.save_snapshot(&snapshot)?) };
        if let Some(marker) = self.marker.take() {
            marker.remove()?;
        }
        Ok(BackupOutcome {
            id,
            snapshot,
            packs_written: stats.packs_written,
            packs_adopted: stats.packs_adopted,
        })
    }
}

/// Lists `data/` only when a stale writer marker (§12) says that a session was killed and may
/// have left packs that no index lists: a session that ends, cleanly or on an error, indexes
/// every pack it stored before it withdraws its marker, so without a stale marker there is
/// nothing to adopt, and the listing (one request per 1,000 packs) is saved. The stale markers
/// are deleted once an index file lists what was adopted; a backup killed before then leaves
/// them for the next one.
fn adopt_what_killed_sessions_left(
    repo: &Repository,
    sink: &BlobSink<'_>,
    own_marker: &str,
    planned: &std::collections::HashSet<Id>,
) -> Result<()> {
    let stale = repo.stale_writers(Some(own_marker))?;
    if stale.is_empty() {
        return Ok(());
    }
    sink.adopt_unindexed_packs(planned)?;
    sink.index_stored()?;
    for name in stale {
        // A backup running alongside may have deleted it already, which the backends accept.
        // Append-only credentials may not delete it: it stays, and the next backup adopts
        // again (finding nothing) until a prune with full credentials removes it (§12).
        match repo.delete_object(&name) {
            Err(err) if err.is_refused() => {}
            deleted => deleted?,
        }
    }
    Ok(())
}

impl Drop for Session<'_> {
    /// A session that stops on an error (its marker not yet removed by `commit`) indexes the
    /// packs it stored, so that the next backup reuses them without listing `data/`, and then
    /// withdraws its marker; if even that fails, it leaves the marker, which the next backup
    /// finds stale and so looks for the packs.
    fn drop(&mut self) {
        if let Some(marker) = self.marker.take() {
            match self.sink.index_stored() {
                Ok(()) => drop(marker),
                Err(_) => marker.leave(),
            }
        }
    }
}

/// Adds `n` to a counter.
fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}
