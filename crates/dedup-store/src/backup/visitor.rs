//! The backup's visitor of the engine's walk: turns each listed entry into a tree node, takes
//! the parent snapshot's chunks for files unchanged since (a `stat`, no read), and queues the
//! other files for the file stage, or reads small ones on the walk's own thread. A directory's
//! tree is stored once the walk has left it and every file and subdirectory below it is done,
//! whichever thread finishes last; its node then goes up to its parent.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dedup_core::{Observer, Problem};
use dedup_scan::{Entry, EntryKind, Listing, Metadata, RootVisit, Visitor};

use super::pipeline::{FileStage, Stages};
use super::problems;
use super::pseudo_fs::PseudoDevices;
use super::select::Selection;
use super::{bump, BackupProgress};
use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind, Summary, Tree};
use crate::id::Id;
use crate::repo::BlobSink;

mod dir_state;
mod read;
mod xattrs;

pub use dir_state::{DirState, Home};

/// Timestamps closer than this to the parent snapshot's start cannot prove a file unchanged: it
/// may have been written again within the same clock tick after the parent read it.
const RACY_NS: i64 = 1_000_000_000;

/// Files smaller than this are read, chunked and hashed on the walk thread that listed them, in
/// a buffer of this size: handing each over to a file worker cost more than reading it (two
/// queue operations, and a `futex` wake and a context switch whenever a side waited; a 2nd write
/// of 55k files spent ~15 % of its CPU there). Larger files go to the file stage, so that a
/// walk thread is never held long by one file. 256 KiB is above 99 % of the files of scenario A
/// and one buffer per walk thread.
const SMALL_FILE: u64 = 256 << 10;

thread_local! {
    /// The walk thread's window for small files, kept from one file to the next.
    static SMALL_FILE_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A file for the file stage: its node, to be given its chunks, and where the node goes.
pub struct FileJob {
    node: Node,
    file: File,
    home: Home,
    shown: PathBuf,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The walk's visitor and observer during a backup.
pub struct BackupVisitor<'a, 'r> {
    sink: &'a BlobSink<'r>,
    stages: &'a Stages<FileJob>,
    observer: &'a dyn Observer,
    progress: &'a BackupProgress,
    parent_time: Option<i64>,
    one_file_system: bool,
    /// Which devices are pseudo file systems, read up to a limit rather than to their size.
    pseudo: PseudoDevices,
    /// Each root's node in the parent snapshot, and whether its status (inode, ctime) is known.
    parent_roots: Mutex<Vec<Option<(Node, bool)>>>,
    found: Mutex<Vec<Option<Node>>>,
    fatal: Mutex<Option<Error>>,
    files_new: AtomicU64,
    files_changed: AtomicU64,
    files_unchanged: AtomicU64,
    dirs: AtomicU64,
    others: AtomicU64,
    errors: AtomicU64,
    bytes_total: AtomicU64,
    selection: Selection,
}

fn kind_of(kind: EntryKind) -> NodeKind {
    match kind {
        EntryKind::File => NodeKind::File,
        EntryKind::Dir => NodeKind::Dir,
        EntryKind::Symlink => NodeKind::Symlink,
        EntryKind::Fifo => NodeKind::Fifo,
        EntryKind::Socket => NodeKind::Socket,
        EntryKind::CharDevice => NodeKind::CharDevice,
        EntryKind::BlockDevice => NodeKind::BlockDevice,
    }
}

/// The node of an entry, without content or extended attributes: the backup walks without
/// reading attributes, and the visitor fills them in, from the parent snapshot or read.
pub fn node_of(name: &[u8], meta: &Metadata, entry: Option<&Entry>) -> Node {
    Node {
        name: name.to_vec(),
        kind: kind_of(meta.kind),
        incomplete: false,
        mode: meta.mode,
        uid: meta.uid,
        gid: meta.gid,
        size: meta.size,
        atime: meta.atime_ns,
        mtime: meta.mtime_ns,
        ctime: meta.ctime_ns,
        dev: meta.dev,
        ino: meta.ino,
        nlink: meta.nlink,
        rdev: meta.rdev,
        target: entry.and_then(|e| e.target.clone()).unwrap_or_default(),
        xattrs: Vec::new(),
        content: Content::None,
        status_tree: None,
    }
}

impl<'a, 'r> BackupVisitor<'a, 'r> {
    /// Leave out, besides the walk's exclusion globs, what `selection` leaves out.
    pub fn with_selection(mut self, selection: Selection) -> Self {
        self.selection = selection;
        self
    }

    pub fn new(
        sink: &'a BlobSink<'r>,
        stages: &'a Stages<FileJob>,
        observer: &'a dyn Observer,
        progress: &'a BackupProgress,
        parent_time: Option<i64>,
        one_file_system: bool,
    ) -> Self {
        BackupVisitor {
            sink,
            stages,
            observer,
            progress,
            parent_time,
            one_file_system,
            pseudo: PseudoDevices::default(),
            parent_roots: Mutex::new(Vec::new()),
            found: Mutex::new(Vec::new()),
            fatal: Mutex::new(None),
            files_new: AtomicU64::new(0),
            files_changed: AtomicU64::new(0),
            files_unchanged: AtomicU64::new(0),
            dirs: AtomicU64::new(0),
            others: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            bytes_total: AtomicU64::new(0),
            selection: Selection::default(),
        }
    }

    /// The node of each root path in the parent snapshot's tree (rooted at the tree and status
    /// tree `parent_root`), where it has one, and whether its status is known.
    pub fn parent_roots(
        &self,
        parent_root: Option<(Id, Option<Id>)>,
        paths: &[std::path::PathBuf],
    ) -> Vec<Option<(Node, bool)>> {
        let Some((root, status)) = parent_root else { return vec![None; paths.len()] };
        paths
            .iter()
            .map(|path| {
                let mut node = crate::tree_walk::root_node(root);
                node.status_tree = status;
                let mut known = true;
                for part in path
                    .as_os_str()
                    .as_encoded_bytes()
                    .split(|&b| b == b'/')
                    .filter(|p| !p.is_empty())
                {
                    let Content::Subtree(id) = node.content else { return None };
                    let tree =
                        self.sink.read_tree_with_status(&id, node.status_tree.as_ref()).ok()?;
                    known = tree.status_known();
                    node = tree.find(part)?.clone();
                }
                Some((node, known))
            })
            .collect()
    }

    pub fn set_parent_roots(&self, roots: Vec<Option<(Node, bool)>>) {
        *lock(&self.found) = vec![None; roots.len()];
        *lock(&self.parent_roots) = roots;
    }

    fn report(&self, problem: Problem) {
        self.problem(problem);
    }

    /// The found root nodes (by root index) and the counts; or the error that stopped the backup.
    pub fn finish(self) -> Result<(Vec<Option<Node>>, Summary)> {
        if let Some(err) = self.fatal.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(err);
        }
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let summary = Summary {
            files_new: load(&self.files_new),
            files_changed: load(&self.files_changed),
            files_unchanged: load(&self.files_unchanged),
            dirs: load(&self.dirs),
            others: load(&self.others),
            errors: load(&self.errors),
            bytes_read: self.progress.bytes_read.load(Ordering::Relaxed),
            bytes_total: load(&self.bytes_total),
            ..Summary::default()
        };
        Ok((self.found.into_inner().unwrap_or_else(PoisonError::into_inner), summary))
    }

    /// Whether `node` can take the parent's chunks without reading the file; `known`: whether
    /// `before`'s status (inode, ctime) is known, without which nothing is proven.
    fn unchanged(&self, node: &Node, before: Option<&Node>, known: bool) -> Option<Vec<Id>> {
        let before = before.filter(|_| known)?;
        let parent_time = self.parent_time?;
        let Content::Chunks(chunks) = &before.content else { return None };
        let same = before.kind == NodeKind::File
            && !before.incomplete
            && before.size == node.size
            && before.mtime == node.mtime
            && before.ctime == node.ctime
            && before.ino == node.ino
            && node.mtime.max(node.ctime) + RACY_NS <= parent_time;
        (same && chunks.iter().all(|id| self.sink.contains(id, BlobKind::Data)))
            .then(|| chunks.clone())
    }

    /// Takes a regular file's chunks from the parent when unchanged, else reads a small one here
    /// and queues a larger one for the file stage (its directory's tree then waits for it).
    /// With `xattrs_by_fd`, the node's attributes are still to be read: through the descriptor
    /// once the file is open (no second name lookup), with that function when it is taken
    /// unopened from the parent, and not at all when it cannot be opened (its one message says
    /// why, and it is stored without content).
    #[allow(clippy::too_many_arguments)]
    fn file(
        &self,
        mut node: Node,
        before: Option<&Node>,
        known: bool,
        open: impl FnOnce() -> io::Result<File>,
        shown: impl Fn() -> PathBuf,
        home: Home,
        xattrs_by_fd: Option<&dyn Fn() -> io::Result<Vec<dedup_scan::Xattr>>>,
    ) {
        // The repository refused a write: no snapshot will be written, so reading on is waste.
        if self.failed() {
            return;
        }
        bump(&self.bytes_total, node.size);
        bump(&self.progress.files, 1);
        bump(&self.progress.bytes_done, node.size);
        if let Some(chunks) = self.unchanged(&node, before, known) {
            // (Attributes not proven unchanged mean contents not proven unchanged either.)
            if let Some(read) = xattrs_by_fd {
                node.xattrs = self.read_xattrs(read, &shown);
            }
            bump(&self.files_unchanged, 1);
            node.content = Content::Chunks(chunks);
            return self.deliver(home, node);
        }
        let file = match open() {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                // Removed since it was listed: the snapshot shows the directory without it, as
                // a listing taken a moment later would have. One message, nothing stored.
                return self.report(problems::vanished(shown()));
            }
            Err(err) => {
                // One message for the file: its attributes are not read by path either.
                bump(if before.is_some() { &self.files_changed } else { &self.files_new }, 1);
                node.incomplete = true;
                node.content = Content::Chunks(Vec::new());
                self.report(problems::unreadable(shown(), &err));
                return self.deliver(home, node);
            }
        };
        bump(if before.is_some() { &self.files_changed } else { &self.files_new }, 1);
        if xattrs_by_fd.is_some() {
            let read = || dedup_scan::read_xattrs_fd(std::os::fd::AsFd::as_fd(&file));
            node.xattrs = self.read_xattrs(read, &shown);
        }
        if node.size < SMALL_FILE {
            SMALL_FILE_BUFFER.with_borrow_mut(|buf| {
                self.read_file(&mut node, &file, shown, buf, SMALL_FILE as usize);
            });
            return self.deliver(home, node);
        }
        if let Home::Dir(dir) = &home {
            dir.pending.fetch_add(1, Ordering::AcqRel);
        }
        let shown = shown();
        if let Err(job) = self.stages.jobs.push(FileJob { node, file, home, shown }) {
            // The pipeline stopped on a repository error; the node only completes its tree.
            self.deliver(job.home.clone(), job.node);
            if let Home::Dir(dir) = job.home {
                self.release(dir);
            }
        }
    }

    /// Puts a finished node where it belongs.
    fn deliver(&self, home: Home, node: Node) {
        match home {
            Home::Dir(dir) => lock(&dir.children).push(node),
            Home::Root(index) => lock(&self.found)[index] = Some(node),
        }
    }

    /// One thing `dir` waited for is done; the last one stores its tree and releases its
    /// parent in turn.
    pub fn release(&self, dir: Arc<DirState>) {
        let mut dir = dir;
        loop {
            if dir.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            let node = self.store_dir(&dir);
            match &dir.home {
                Home::Root(index) => {
                    if let Some(node) = node {
                        lock(&self.found)[*index] = Some(node);
                    }
                    return;
                }
                Home::Dir(parent) => {
                    if let Some(node) = node {
                        lock(&parent.children).push(node);
                    }
                    let parent = Arc::clone(parent);
                    dir = parent;
                }
            }
        }
    }

    /// Stores `dir`'s tree; its node, or `None` when the backup already failed.
    fn store_dir(&self, dir: &DirState) -> Option<Node> {
        if self.failed() {
            return None;
        }
        let tree = Tree { nodes: std::mem::take(&mut *lock(&dir.children)), ..Tree::default() };
        let mut node = std::mem::take(&mut *lock(&dir.node));
        if !dir.listed.load(Ordering::Acquire) && !dir.skipped_on_purpose(&node) {
            // The walk could not open it and said why: stored as it is known, flagged, rather
            // than as an empty directory.
            node.incomplete = true;
        }
        match self.sink.store_tree(tree) {
            Ok((id, status)) => {
                (node.content, node.status_tree) = (Content::Subtree(id), status);
                Some(node)
            }
            Err(err) => {
                self.fail(err);
                None
            }
        }
    }
}

impl FileStage<FileJob> for BackupVisitor<'_, '_> {
    fn run_file(&self, job: FileJob, buf: &mut Vec<u8>) {
        self.run_queued_file(job, buf);
    }

    /// Whether a repository error stopped the backup.
    fn failed(&self) -> bool {
        lock(&self.fatal).is_some()
    }

    /// Stops the backup with `err` (the first error is kept).
    fn fail(&self, err: Error) {
        lock(&self.fatal).get_or_insert(err);
    }
}

impl Observer for BackupVisitor<'_, '_> {
    fn problem(&self, problem: Problem) {
        if problem.incomplete {
            bump(&self.errors, 1);
        }
        self.observer.problem(problem);
    }
}

fn last_name(path: &std::path::Path) -> Vec<u8> {
    path.file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default()
}

impl Visitor for BackupVisitor<'_, '_> {
    type Dir = Arc<DirState>;

    fn root(&self, root: &RootVisit<'_>) -> Option<Self::Dir> {
        let entry = root.entry?;
        let meta = entry.meta.as_ref()?;
        let index = root.index as usize;
        let parent = lock(&self.parent_roots).get(index).cloned().flatten();
        let (before, known) = match &parent {
            Some((node, known)) => (Some(node), *known),
            None => (None, false),
        };
        let mut node = node_of(&last_name(root.path), meta, Some(entry));
        let read = || dedup_scan::read_xattrs(root.path, true);
        node.xattrs = self.xattrs(&node, before, known, read, || root.path.to_path_buf());
        match node.kind {
            NodeKind::Dir => {
                bump(&self.dirs, 1);
                let root_dev = self.one_file_system.then_some(meta.dev);
                let state = DirState::new(node, Home::Root(index), before, root_dev);
                return Some(Arc::new(state));
            }
            NodeKind::File => {
                let open = || File::open(root.path);
                let shown = || root.path.to_path_buf();
                self.file(node, before, known, open, shown, Home::Root(index), None);
                return None;
            }
            _ => bump(&self.others, 1),
        }
        lock(&self.found)[index] = Some(node);
        None
    }

    fn dir(&self, dir: &Self::Dir, listing: &Listing<'_>) -> Vec<(usize, Self::Dir)> {
        if self.failed() {
            return Vec::new();
        }
        dir.listed.store(true, Ordering::Release);
        {
            // The open directory's own stat is the fresher; its xattrs came with its entry.
            let mut own = lock(&dir.node);
            let old = std::mem::take(&mut *own);
            *own = node_of(&old.name, listing.meta, None);
            own.xattrs = old.xattrs;
        }
        // A parent tree of version 2 whose status tree is missing or damaged proves nothing
        // unchanged: its files are read again (safe), and the backup goes on.
        let before = dir
            .parent_tree
            .and_then(|id| self.sink.read_tree_with_status(&id, dir.parent_status.as_ref()).ok())
            .unwrap_or_default();
        let known = before.status_known();
        let mut subdirs = Vec::new();
        let mut nodes = Vec::new();
        let tags = self.selection.tags(listing.fd, listing.entries);
        for (i, entry) in listing.entries.iter().enumerate() {
            if self.selection.leaves_out(entry, &tags) {
                continue;
            }
            let Some(meta) = entry.meta.as_ref() else { continue };
            let mut node = node_of(&entry.name, meta, Some(entry));
            let previous = before.find(&entry.name);
            let path = || listing.path.join(OsStr::from_bytes(&entry.name));
            let read = || match std::ffi::CString::new(entry.name.as_slice()) {
                Ok(name) => dedup_scan::read_xattrs_at(listing.fd, &name, path, entry.followed),
                Err(_) => dedup_scan::read_xattrs(&path(), entry.followed),
            };
            let kept = self.kept_xattrs(&node, previous, known);
            // A regular file to be read: its attributes are read through its descriptor.
            let by_fd = kept.is_none() && node.kind == NodeKind::File && !entry.followed;
            node.xattrs = match kept {
                Some(kept) => kept,
                None if by_fd => Vec::new(),
                None => self.read_xattrs(read, path),
            };
            match node.kind {
                NodeKind::Dir => {
                    bump(&self.dirs, 1);
                    let home = Home::Dir(Arc::clone(dir));
                    let state = DirState::new(node, home, previous, dir.root_dev);
                    subdirs.push((i, Arc::new(state)));
                    continue;
                }
                NodeKind::File => {
                    let shown = path;
                    let open =
                        || dedup_scan::open_content_at(listing.fd, OsStr::from_bytes(&entry.name));
                    let home = Home::Dir(Arc::clone(dir));
                    let fallback: &dyn Fn() -> io::Result<Vec<dedup_scan::Xattr>> = &read;
                    self.file(node, previous, known, open, shown, home, by_fd.then_some(fallback));
                    continue;
                }
                _ => bump(&self.others, 1),
            }
            nodes.push(node);
        }
        lock(&dir.children).extend(nodes);
        subdirs
    }

    fn leave(&self, dir: Self::Dir) {
        self.release(dir);
    }
}

#[cfg(test)]
mod tests;
