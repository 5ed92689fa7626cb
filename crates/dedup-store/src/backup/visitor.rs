//! The backup's visitor of the engine's walk: turns each listed entry into a tree node (reading
//! and storing files unless the parent snapshot has them unchanged), and stores each directory's
//! tree once the walk leaves it, handing its node up to its parent.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dedup_core::{Observer, Problem, ProblemKind};
use dedup_scan::{Entry, EntryKind, Listing, Metadata, RootVisit, Visitor};
use rustix::fs::{Mode, OFlags};

use super::file::{store_stream, StreamError};
use super::{bump, BackupProgress};
use crate::blob::BlobKind;
use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind, Summary, Tree};
use crate::id::Id;
use crate::repo::BlobSink;

/// Timestamps closer than this to the parent snapshot's start cannot prove a file unchanged: it
/// may have been written again within the same clock tick after the parent read it.
const RACY_NS: i64 = 1_000_000_000;

/// A directory from its listing until the walk leaves it.
pub struct DirState {
    node: Mutex<Node>,
    parent: Option<Arc<DirState>>,
    root: usize,
    parent_tree: Option<Id>,
    children: Mutex<Vec<Node>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The walk's visitor and observer during a backup.
pub struct BackupVisitor<'a, 'r> {
    sink: &'a BlobSink<'r>,
    observer: &'a dyn Observer,
    progress: &'a BackupProgress,
    parent_time: Option<i64>,
    parent_roots: Mutex<Vec<Option<Node>>>,
    found: Mutex<Vec<Option<Node>>>,
    fatal: Mutex<Option<Error>>,
    files_new: AtomicU64,
    files_changed: AtomicU64,
    files_unchanged: AtomicU64,
    dirs: AtomicU64,
    others: AtomicU64,
    errors: AtomicU64,
    bytes_total: AtomicU64,
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

/// The node of an entry, without content.
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
        xattrs: entry
            .map(|e| e.xattrs.iter().map(|x| (x.name.clone(), x.value.clone())).collect())
            .unwrap_or_default(),
        content: Content::None,
    }
}

impl<'a, 'r> BackupVisitor<'a, 'r> {
    pub fn new(
        sink: &'a BlobSink<'r>,
        observer: &'a dyn Observer,
        progress: &'a BackupProgress,
        parent_time: Option<i64>,
    ) -> Self {
        BackupVisitor {
            sink,
            observer,
            progress,
            parent_time,
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
        }
    }

    /// The node of each root path in the parent snapshot's tree, where it has one.
    pub fn parent_roots(
        &self,
        parent_root: Option<Id>,
        paths: &[std::path::PathBuf],
    ) -> Vec<Option<Node>> {
        let Some(root) = parent_root else { return vec![None; paths.len()] };
        paths
            .iter()
            .map(|path| {
                let mut node = crate::tree::root_node(root);
                for part in path
                    .as_os_str()
                    .as_encoded_bytes()
                    .split(|&b| b == b'/')
                    .filter(|p| !p.is_empty())
                {
                    let Content::Subtree(id) = node.content else { return None };
                    node = self.sink.read_tree(&id).ok()?.find(part)?.clone();
                }
                Some(node)
            })
            .collect()
    }

    pub fn set_parent_roots(&self, roots: Vec<Option<Node>>) {
        *lock(&self.found) = vec![None; roots.len()];
        *lock(&self.parent_roots) = roots;
    }

    fn failed(&self) -> bool {
        lock(&self.fatal).is_some()
    }

    fn fail(&self, err: Error) {
        lock(&self.fatal).get_or_insert(err);
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

    /// Whether `node` can take the parent's chunks without reading the file.
    fn unchanged(&self, node: &Node, before: Option<&Node>) -> Option<Vec<Id>> {
        let before = before?;
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

    /// Fills in a regular file's chunks: from the parent when unchanged, else by reading it.
    fn file(
        &self,
        node: &mut Node,
        before: Option<&Node>,
        open: impl FnOnce() -> io::Result<File>,
        shown: &std::path::Path,
    ) {
        // The repository refused a write: no snapshot will be written, so reading on is waste.
        if self.failed() {
            return;
        }
        bump(&self.bytes_total, node.size);
        bump(&self.progress.files, 1);
        bump(&self.progress.bytes_done, node.size);
        if let Some(chunks) = self.unchanged(node, before) {
            bump(&self.files_unchanged, 1);
            node.content = Content::Chunks(chunks);
            return;
        }
        bump(if before.is_some() { &self.files_changed } else { &self.files_new }, 1);
        let mut file = match open() {
            Ok(file) => file,
            Err(err) => {
                node.incomplete = true;
                node.content = Content::Chunks(Vec::new());
                return self.report(Problem::error(shown, ProblemKind::Io(err)));
            }
        };
        match store_stream(self.sink, &mut file, self.progress) {
            Ok((chunks, size)) => {
                let after = rustix::fs::fstat(&file).ok();
                let changed = after.as_ref().is_none_or(|st| {
                    st.st_size as u64 != size
                        || Metadata::from_stat(st)
                            .is_none_or(|m| m.mtime_ns != node.mtime || m.ctime_ns != node.ctime)
                });
                if changed {
                    self.observer.problem(Problem::warning(shown, ProblemKind::Changed));
                    if let Some(meta) = after.as_ref().and_then(Metadata::from_stat) {
                        node.mtime = meta.mtime_ns;
                        node.ctime = meta.ctime_ns;
                    }
                    // The content is what was read; its size is what was read.
                    node.size = size;
                }
                node.content = Content::Chunks(chunks);
            }
            Err(StreamError::Read(err)) => {
                node.incomplete = true;
                node.content = Content::Chunks(Vec::new());
                self.report(Problem::error(shown, ProblemKind::Io(err)));
            }
            Err(StreamError::Store(err)) => self.fail(err),
        }
    }

    fn deliver(&self, state: &DirState, node: Node) {
        match &state.parent {
            Some(parent) => lock(&parent.children).push(node),
            None => lock(&self.found)[state.root] = Some(node),
        }
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
        let before = lock(&self.parent_roots).get(index).cloned().flatten();
        let mut node = node_of(&last_name(root.path), meta, Some(entry));
        match node.kind {
            NodeKind::Dir => {
                bump(&self.dirs, 1);
                let parent_tree = match before.map(|b| b.content) {
                    Some(Content::Subtree(id)) => Some(id),
                    _ => None,
                };
                return Some(Arc::new(DirState {
                    node: Mutex::new(node),
                    parent: None,
                    root: index,
                    parent_tree,
                    children: Mutex::new(Vec::new()),
                }));
            }
            NodeKind::File => {
                self.file(&mut node, before.as_ref(), || File::open(root.path), root.path)
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
        {
            // The open directory's own stat is the fresher; its xattrs came with its entry.
            let mut own = lock(&dir.node);
            let old = std::mem::take(&mut *own);
            *own = node_of(&old.name, listing.meta, None);
            own.xattrs = old.xattrs;
        }
        let before =
            dir.parent_tree.and_then(|id| self.sink.read_tree(&id).ok()).unwrap_or_default();
        let mut subdirs = Vec::new();
        let mut nodes = Vec::new();
        for (i, entry) in listing.entries.iter().enumerate() {
            let Some(meta) = entry.meta.as_ref() else { continue };
            let mut node = node_of(&entry.name, meta, Some(entry));
            let previous = before.find(&entry.name);
            match node.kind {
                NodeKind::Dir => {
                    bump(&self.dirs, 1);
                    let parent_tree = match previous.map(|p| &p.content) {
                        Some(Content::Subtree(id)) => Some(*id),
                        _ => None,
                    };
                    let state = DirState {
                        node: Mutex::new(node),
                        parent: Some(Arc::clone(dir)),
                        root: dir.root,
                        parent_tree,
                        children: Mutex::new(Vec::new()),
                    };
                    subdirs.push((i, Arc::new(state)));
                    continue;
                }
                NodeKind::File => {
                    let shown = listing.path.join(
                        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&entry.name),
                    );
                    let open = || {
                        let fd = rustix::fs::openat(
                            listing.fd,
                            entry.name.as_slice(),
                            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                            Mode::empty(),
                        )?;
                        Ok(File::from(fd))
                    };
                    self.file(&mut node, previous, open, &shown);
                }
                _ => bump(&self.others, 1),
            }
            nodes.push(node);
        }
        lock(&dir.children).extend(nodes);
        subdirs
    }

    fn leave(&self, dir: Self::Dir) {
        if self.failed() {
            return;
        }
        let mut tree = Tree { nodes: std::mem::take(&mut *lock(&dir.children)) };
        tree.sort();
        let mut node = std::mem::take(&mut *lock(&dir.node));
        match self.sink.store(BlobKind::Tree, &tree.encode()) {
            Ok(id) => {
                node.content = Content::Subtree(id);
                self.deliver(&dir, node);
            }
            Err(err) => self.fail(err),
        }
    }
}
