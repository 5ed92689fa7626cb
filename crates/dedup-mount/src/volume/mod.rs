//! A writable volume (`dedup store mount --writable NAME`): a live tree in a repository that
//! deduplicates as it is written. Written bytes are cut by the repository's chunker; each chunk
//! is looked up in the index held in memory (a known chunk costs a hash and a lookup) and only
//! new ones are compressed, sealed and packed. The volume's state is committed as an ordinary
//! snapshot of the store (docs/store-format.md §14) at an interval, at `fsync`/`fsyncdir` and
//! at unmount (not at `syncfs`: Linux sends FUSE_SYNCFS only to virtiofs, so `sync -f` reaches
//! the mount as written pages and nothing more): packs, then index, then snapshot, so what a commit acknowledged survives a kill or a
//! power cut and what was not committed is lost back to the last commit, never half-applied.
//! One writable mount of a volume at a time, by a lock in the repository that a killed mount
//! does not leave held ([`dedup_store::volume_lock`]).

mod content;
mod fs;
mod piece_map;
mod place;
mod seal_pool;
mod snapshot;
mod store;
mod table;
#[cfg(test)]
mod table_memory;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use dedup_store::format::{NodeKind, Snapshot, Summary};
use dedup_store::repo::{now_ns, BlobSink, Repository, WriterMarker};
use dedup_store::volume_lock::VolumeLock;
use dedup_store::{Error, Id};
use rustix::io::Errno;

pub use fs::VolumeFs;
pub use snapshot::{volume_path, volume_tag};

use crate::events::{Doing, MountEvents, MountProblem};
use content::Content;
use seal_pool::FileSealing;
use table::{Ino, Inode, Table};

/// How a volume is mounted and committed.
#[derive(Debug, Clone)]
pub struct VolumeOptions {
    /// The volume's name.
    pub name: String,
    /// Host recorded in its commits.
    pub host: String,
    /// User recorded in its commits.
    pub user: String,
    /// Tags added to its commits (besides `volume:NAME`).
    pub tags: Vec<String>,
    /// Program name and version recorded.
    pub program: String,
    /// Time between commits while something changed.
    pub commit_interval: Duration,
    /// A directory on the repository's file system, for `statfs` (a local repository).
    pub space: Option<PathBuf>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An open file: its inode and whether it appends.
type Handle = (Ino, bool);

/// A mounted volume's state, shared by the FUSE threads and the commit timer.
pub struct Volume {
    options: VolumeOptions,
    store: store::VolumeStore,
    table: Mutex<Table>,
    handles: Mutex<HashMap<u64, Handle>>,
    next_handle: AtomicU64,
    /// Changes made; a commit records how many it includes.
    changes: AtomicU64,
    committed: AtomicU64,
    /// Held by a commit: the last commit's snapshot id.
    last: Mutex<Option<Id>>,
    /// An error a background commit met, for the next `close` or `fsync` to report.
    failed: Mutex<Option<Errno>>,
    events: Box<dyn MountEvents>,
    /// The deletions prunes had planned when the mount began (its index was loaded without
    /// them): each commit indexes again what a prune planned since and the commit reaches.
    planned: HashSet<Id>,
    _marker: WriterMarker,
    _lock: VolumeLock,
}

/// The errno a store error stands for.
pub fn errno_of(err: &Error) -> Errno {
    match err {
        Error::Io { cause, .. } => match cause.raw_os_error() {
            Some(code) => Errno::from_raw_os_error(code),
            None if cause.kind() == std::io::ErrorKind::StorageFull => Errno::NOSPC,
            None => Errno::IO,
        },
        _ => Errno::IO,
    }
}

/// Opens volume `options.name` of `repo` (created empty when it has no commit yet), owned by
/// `uid`/`gid` when new. The repository then lives as long as the program: the volume's session
/// borrows it for the whole mount (a mount is the program's life).
pub fn open(
    repo: Arc<Repository>,
    options: VolumeOptions,
    (uid, gid): (u32, u32),
    events: Box<dyn MountEvents>,
) -> Result<Arc<Volume>, Error> {
    let shared = Arc::clone(&repo);
    let repo: &'static Repository = Box::leak(Box::new(repo));
    if !dedup_store::format::valid_name(options.name.as_bytes()) {
        return Err(Error::Invalid(format!("{:?}: not a valid volume name", options.name)));
    }
    let volume_lock = VolumeLock::acquire(repo, &options.name)?;
    let marker = WriterMarker::create(repo, &options.host)?;
    // Read after the marker is written, as a backup does (§12).
    let planned = repo.planned_deletions()?;
    let loaded = repo.load_index_without(&planned)?;
    let sink = BlobSink::new(repo, loaded.index, false);
    if !repo.stale_writers(Some(&marker.name()))?.is_empty() {
        // A killed mount or backup may have left packs no index lists: reuse them.
        sink.adopt_unindexed_packs(&planned)?;
        sink.index_stored()?;
    }
    let store = store::VolumeStore::new(repo, shared, sink);
    let latest = snapshot::latest_commit(&store, &options.name)?;
    let table = match &latest {
        Some((_, snapshot)) => snapshot::load(&store, &options.name, snapshot)?,
        None => Table::with_root(Inode::new(NodeKind::Dir, 0o755, uid, gid, now_ns())),
    };
    let new = latest.is_none();
    let volume = Arc::new(Volume {
        options,
        store,
        table: Mutex::new(table),
        handles: Mutex::new(HashMap::new()),
        next_handle: AtomicU64::new(1),
        changes: AtomicU64::new(u64::from(new)),
        committed: AtomicU64::new(0),
        last: Mutex::new(latest.map(|(id, _)| id)),
        failed: Mutex::new(None),
        events,
        planned,
        _marker: marker,
        _lock: volume_lock,
    });
    // A new volume exists from its first mount on: it shows in `snapshots` at once.
    volume.commit()?;
    Ok(volume)
}

impl Volume {
    /// The FUSE file system serving this volume.
    pub fn filesystem(self: &Arc<Self>) -> VolumeFs {
        VolumeFs::new(Arc::clone(self))
    }

    pub(crate) fn table(&self) -> MutexGuard<'_, Table> {
        lock(&self.table)
    }

    fn store(&self) -> &store::VolumeStore {
        &self.store
    }

    fn handles(&self) -> MutexGuard<'_, HashMap<u64, Handle>> {
        lock(&self.handles)
    }

    /// Notes a change, for the next commit.
    fn changed(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    /// A store error met while storing what was written: told to the caller's events, its
    /// errno returned.
    fn failure(&self, err: Error) -> fuser::Errno {
        self.problem(Doing::Writing, 0, err)
    }

    /// A store error met `doing` something to `ino` (0: to the volume): told to the caller's
    /// events, its errno returned.
    fn problem(&self, doing: Doing, ino: Ino, err: Error) -> fuser::Errno {
        let code = errno_of(&err);
        // The caller may hold a file's lock, which a thread holding the table may wait for:
        // the path is looked up only when the table is free, never waited for.
        let place = match (ino, self.table.try_lock()) {
            (0, _) | (_, Err(_)) => None,
            (_, Ok(table)) => place::place_of(&table, ino),
        };
        self.events.problem(MountProblem { doing, ino, place, error: err });
        fuser::Errno::from_i32(code.raw_os_error())
    }

    /// Cuts the written bytes of `content` into stored chunks (`all`: every one); those queued
    /// for a sealing thread count in the file's sealing, for its `close`.
    fn cut(&self, content: &mut Content, all: bool) -> Result<(), fuser::Errno> {
        let chunker = self.store.repo().chunker();
        let mut sealing = content.sealing.take();
        let cut = content.settle(chunker, all, &mut |bytes| self.store.store(bytes, &mut sealing));
        content.sealing = sealing;
        cut.map_err(|e| self.failure(e))
    }

    /// Opens a handle on `ino` with open(2) `flags`.
    fn open_handle(&self, ino: Ino, flags: i32) -> Result<u64, Errno> {
        let mut table = self.table();
        let inode = table.get_mut(ino)?;
        if inode.damaged.is_some() {
            return Err(Errno::IO);
        }
        if inode.dir.is_some() && flags & libc_flags::ACCMODE != libc_flags::RDONLY {
            return Err(Errno::ISDIR);
        }
        inode.open += 1;
        let file = inode.file.clone();
        drop(table);
        if flags & libc_flags::TRUNC != 0 {
            if let Some(file) = file {
                let mut content = lock(&file);
                content.set_size(0, &mut |id| self.store.fetch(id)).map_err(|e| errno_of(&e))?;
                self.changed();
            }
        }
        let fh = self.next_handle.fetch_add(1, Ordering::Relaxed);
        self.handles().insert(fh, (ino, flags & libc_flags::APPEND != 0));
        Ok(fh)
    }

    /// Closes handle `fh` (an unlinked file goes when the kernel forgets it: [`Self::forget`]).
    fn close_handle(&self, fh: u64) {
        let Some((ino, _)) = self.handles().remove(&fh) else { return };
        if let Ok(inode) = self.table().get_mut(ino) {
            inode.open = inode.open.saturating_sub(1);
        }
    }

    /// The kernel forgot inode `ino`: an unlinked file or directory goes, unless still open.
    fn forget(&self, ino: Ino) {
        self.table().forget_if_unused(ino);
    }

    /// The error a background commit met since the last report, once.
    fn take_failure(&self) -> Result<(), fuser::Errno> {
        match lock(&self.failed).take() {
            Some(code) => Err(fuser::Errno::from_i32(code.raw_os_error())),
            None => Ok(()),
        }
    }

    /// At `close`, after the file's written bytes were cut: waits until the sealing threads
    /// stored the chunks queued for `file` (its sealing, taken from its content), not those of
    /// other files; what they met, or an error a job of no file met, is the caller's.
    fn settled(&self, file: Option<&FileSealing>) -> Result<(), fuser::Errno> {
        self.store.settled(file).map_err(|e| self.failure(e))
    }

    /// A commit for `fsync`: its error, or one a background commit met, is the caller's.
    fn commit_for_caller(&self) -> Result<(), fuser::Errno> {
        let committed = self.commit().map(|_| ());
        let _ = lock(&self.failed).take();
        committed.map_err(|e| self.failure(e))
    }

    /// `(blocks, free, available, block size)` for statfs: the repository's file system where
    /// it is local; else the volume's logical size with nothing free reported as unknown.
    fn space(&self) -> (u64, u64, u64, u32) {
        if let Some(stat) = self.options.space.as_ref().and_then(|p| rustix::fs::statvfs(p).ok()) {
            let bsize = u32::try_from(stat.f_frsize).unwrap_or(4096);
            return (stat.f_blocks, stat.f_bfree, stat.f_bavail, bsize);
        }
        let free = u64::MAX / 4096 / 4;
        (free, free, free, 4096)
    }

    /// Commits the volume as a snapshot if anything changed since the last commit: every file's
    /// written bytes are cut and stored, the packs written and indexed, the trees stored, and
    /// then the snapshot written (§14). Returns the new snapshot's id.
    pub fn commit(&self) -> Result<Option<Id>, Error> {
        let mut last = lock(&self.last);
        let seen = self.changes.load(Ordering::SeqCst);
        if seen == self.committed.load(Ordering::SeqCst) {
            return Ok(None);
        }
        // A commit after a failed one stores again the chunks the failure lost that its files
        // name (the sink forgot them with their pack; a failed commit gives up every open
        // pack, freeing the space they took), so that a mount goes on after a full disk or a
        // storage error once they pass.
        let lost = self.store.lost_chunks();
        let committed = self.commit_changes(&mut last, seen);
        let committed = committed.inspect_err(|_| self.store.sink().abandon_open_packs())?;
        self.store.forget_lost(&lost);
        Ok(committed)
    }

    /// The body of [`Volume::commit`], under the lock of `last`.
    fn commit_changes(&self, last: &mut Option<Id>, seen: u64) -> Result<Option<Id>, Error> {
        let failures = self.store.failures();
        let chunker = self.store.repo().chunker();
        let files = self.table().files();
        // Cut outside the table's lock, so that the volume serves meanwhile; what is written
        // since is cut under it, below.
        for file in files {
            lock(&file).settle(chunker, true, &mut |bytes| self.store.store(bytes, &mut None))?;
        }
        let stats_before = self.store.sink().stats();
        let table = self.table();
        for file in table.files() {
            lock(&file).settle(chunker, true, &mut |bytes| self.store.store(bytes, &mut None))?;
        }
        let mut summary = Summary::default();
        let (tree, status_tree) =
            snapshot::store_trees(&self.store, &table, &self.options.name, &mut summary)?;
        drop(table);
        self.store.flush()?;
        if self.store.failures() != failures {
            // A write that failed meanwhile may have given up packs holding chunks the trees
            // name: this commit is not written; the next stores them again.
            return Err(Error::Invalid(
                "not committed: a write to the repository failed while the commit ran".into(),
            ));
        }
        let planned = &self.planned;
        self.store.sink().keep_indexed_what_a_prune_planned_since(planned, tree, status_tree)?;
        let stats = self.store.sink().stats();
        let options = &self.options;
        let mut tags = vec![volume_tag(&options.name)];
        tags.extend(options.tags.iter().cloned());
        let snapshot = Snapshot {
            time: now_ns(),
            tree,
            status_tree,
            parent: *last,
            host: options.host.clone(),
            user: options.user.clone(),
            paths: vec![volume_path(&options.name)],
            tags,
            incomplete: false,
            summary: Summary {
                bytes_added: stats.bytes_added.saturating_sub(stats_before.bytes_added),
                blobs_added: stats.blobs_added.saturating_sub(stats_before.blobs_added),
                ..summary
            },
            program: options.program.clone(),
            original: None,
        };
        let id = self.store.repo().save_snapshot(&snapshot)?;
        *last = Some(id);
        self.committed.store(seen, Ordering::SeqCst);
        Ok(Some(id))
    }

    /// Commits every `interval` while the returned timer lives; an error is told to the events
    /// and kept for the next `close` or `fsync`.
    pub fn commit_every(self: &Arc<Self>, interval: Duration) -> CommitTimer {
        let (stop, stopped) = mpsc::channel::<()>();
        let volume = Arc::clone(self);
        let thread = std::thread::Builder::new()
            .name("volume-commit".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    if let Err(err) = volume.commit() {
                        *lock(&volume.failed) = Some(errno_of(&err));
                        let problem = MountProblem {
                            doing: Doing::Committing,
                            ino: 0,
                            place: None,
                            error: err,
                        };
                        volume.events.problem(problem);
                    }
                }
            })
            .ok();
        CommitTimer { stop: Some(stop), thread }
    }

    /// The volume's name.
    pub fn name(&self) -> &str {
        &self.options.name
    }

    /// The last commit's snapshot id.
    pub fn last_commit(&self) -> Option<Id> {
        *lock(&self.last)
    }
}

/// Commits a volume at an interval until dropped.
pub struct CommitTimer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for CommitTimer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// open(2) flags.
mod libc_flags {
    pub const ACCMODE: i32 = 0o3;
    pub const RDONLY: i32 = 0;
    pub const TRUNC: i32 = 0o1000;
    pub const APPEND: i32 = 0o2000;
}
