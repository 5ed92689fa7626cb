//! Restoring a snapshot (or a path in it) into a target directory: regular files (sparse where
//! chunks are all zero), directories (their metadata set after their children), symlinks, hard
//! links, FIFOs and devices, with mode, owner, times in ns and xattrs. Problems with single
//! entries go to the observer and the restore carries on. The trees are walked on the calling
//! thread, which creates every entry; file content is written in batches, in pack order, by
//! several threads ([`file`]); directories get their metadata last, deepest first.

mod file;
mod meta;

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use dedup_core::{Observer, Problem, ProblemKind};

use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind};
use crate::index::Index;
use crate::repo::Repository;

/// Which entries to restore: called with each entry's path below the restored node; a directory
/// refused is skipped with everything below it.
pub type Filter<'a> = &'a (dyn Fn(&[u8], &Node) -> bool + Sync);

/// What a restore did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RestoreSummary {
    /// Regular files written.
    pub files: u64,
    /// Directories.
    pub dirs: u64,
    /// Hard links made.
    pub links: u64,
    /// Symlinks, FIFOs, devices.
    pub others: u64,
    /// Bytes of file content written (holes excluded).
    pub bytes: u64,
    /// Entries that could not be restored.
    pub errors: u64,
}

struct Restorer<'a> {
    repo: &'a Repository,
    index: &'a Index,
    observer: &'a dyn Observer,
    filter: Option<Filter<'a>>,
    is_root: bool,
    warned_owner: AtomicBool,
    links: HashMap<(u64, u64), PathBuf>,
    summary: RestoreSummary,
    batch: file::Batch,
    dirs: Vec<(Node, PathBuf)>,
    pending_links: Vec<(PathBuf, PathBuf)>,
    workers: usize,
}

/// Restores `node` into `target`: a directory's entries go into `target` (created if need be),
/// any other node becomes `target/<name>`.
pub fn restore(
    repo: &Repository,
    index: &Index,
    node: &Node,
    target: &Path,
    filter: Option<Filter<'_>>,
    observer: &dyn Observer,
) -> Result<RestoreSummary> {
    let mut restorer = Restorer {
        repo,
        index,
        observer,
        filter,
        is_root: rustix::process::geteuid().is_root(),
        warned_owner: AtomicBool::new(false),
        links: HashMap::new(),
        summary: RestoreSummary::default(),
        batch: file::Batch::default(),
        dirs: Vec::new(),
        pending_links: Vec::new(),
        workers: std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 16),
    };
    match node.kind {
        NodeKind::Dir => {
            fs::create_dir_all(target).map_err(|e| Error::io(target.display().to_string(), e))?;
            let mut rel = Vec::new();
            restorer.dir_contents(node, target, &mut rel)?;
            if !node.name.is_empty() {
                restorer.dirs.push((node.clone(), target.to_path_buf()));
            }
        }
        _ => {
            fs::create_dir_all(target).map_err(|e| Error::io(target.display().to_string(), e))?;
            let path = target.join(std::ffi::OsStr::from_bytes(&node.name));
            let mut rel = node.name.clone();
            restorer.entry(node, &path, &mut rel);
        }
    }
    restorer.run_batch();
    // Pushed as each directory's contents were done: children before their parent.
    for (node, path) in std::mem::take(&mut restorer.dirs).iter() {
        restorer.set_meta(node, path);
    }
    Ok(restorer.summary)
}

impl Restorer<'_> {
    fn problem(&mut self, path: &Path, err: impl std::fmt::Display) {
        self.summary.errors += 1;
        self.observer
            .problem(Problem::error(path, ProblemKind::Io(io::Error::other(err.to_string()))));
    }

    /// Restores the children of directory `node` into `dir`; `rel` is `dir`'s path below the
    /// restored node. A subtree that cannot be read is a problem of `dir`, not fatal.
    fn dir_contents(&mut self, node: &Node, dir: &Path, rel: &mut Vec<u8>) -> Result<()> {
        let Content::Subtree(id) = node.content else { return Ok(()) };
        // The status tree gives the entries their atime (else their mtime stands in).
        let status = node.status_tree.as_ref();
        let tree = match self.repo.read_tree_with_status(self.index, &id, status) {
            Ok(tree) => tree,
            Err(err) => {
                self.problem(dir, err);
                return Ok(());
            }
        };
        for child in &tree.nodes {
            let len = rel.len();
            if len > 0 {
                rel.push(b'/');
            }
            rel.extend_from_slice(&child.name);
            if self.filter.is_none_or(|f| f(rel, child)) {
                let path = dir.join(std::ffi::OsStr::from_bytes(&child.name));
                self.entry(child, &path, rel);
            }
            rel.truncate(len);
        }
        Ok(())
    }

    fn entry(&mut self, node: &Node, path: &Path, rel: &mut Vec<u8>) {
        if node.kind != NodeKind::Dir {
            if let Err(err) = clear_place(path) {
                return self.problem(path, err);
            }
        }
        if node.kind == NodeKind::File && node.nlink > 1 {
            if let Some(first) = self.links.get(&(node.dev, node.ino)) {
                // Made once the batch has created the first name.
                self.pending_links.push((first.clone(), path.to_path_buf()));
                return;
            }
        }
        let made = match node.kind {
            NodeKind::Dir => match fs::create_dir(path) {
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
                other => other.map_err(|e| e.to_string()),
            },
            NodeKind::File => self.batch.add(self.index, node, path.to_path_buf()),
            NodeKind::Symlink => rustix::fs::symlinkat(
                std::ffi::OsStr::from_bytes(&node.target),
                rustix::fs::CWD,
                path,
            )
            .map_err(|e| e.to_string()),
            NodeKind::Fifo | NodeKind::CharDevice | NodeKind::BlockDevice => {
                meta::make_node(node, path)
            }
            NodeKind::Socket => return,
        };
        if let Err(err) = made {
            return self.problem(path, err);
        }
        match node.kind {
            NodeKind::Dir => {
                self.summary.dirs += 1;
                if let Err(err) = self.dir_contents(node, path, rel) {
                    self.problem(path, err);
                }
                self.dirs.push((node.clone(), path.to_path_buf()));
                return;
            }
            NodeKind::File => {
                self.summary.files += 1;
                if node.nlink > 1 {
                    self.links.insert((node.dev, node.ino), path.to_path_buf());
                }
                if self.batch.full() {
                    self.run_batch();
                }
                // Its metadata is set once its content is written.
                return;
            }
            _ => self.summary.others += 1,
        }
        self.set_meta(node, path);
    }

    /// Writes the content of the batch's files, then sets their metadata (several threads).
    fn run_batch(&mut self) {
        self.summary.bytes += self.batch.execute(self.repo, self.workers);
        for (first, path) in std::mem::take(&mut self.pending_links) {
            match fs::hard_link(&first, &path) {
                Ok(()) => self.summary.links += 1,
                Err(err) => self.problem(&path, err),
            }
        }
        let files = std::mem::take(&mut self.batch.files);
        let problems = Mutex::new(Vec::new());
        let per = files.len().div_ceil(self.workers).max(1);
        std::thread::scope(|scope| {
            for part in files.chunks(per) {
                let (problems, warned, is_root) = (&problems, &self.warned_owner, self.is_root);
                scope.spawn(move || {
                    let mut found = Vec::new();
                    for pending in part {
                        if let Some(err) = &pending.error {
                            // Its times and mode are not set: a file with holes where data was
                            // lost must not pass for the original (size and mtime) with a
                            // later backup, rsync or make.
                            let err = format!(
                                "{err}; the file is incomplete (holes where data is lost) and \
                                 keeps the time of the restore"
                            );
                            found.push(Err((pending.path.clone(), err)));
                            continue;
                        }
                        let owner = meta::Owner { is_root, warned };
                        found.extend(
                            meta::apply(&pending.node, &pending.path, owner).into_iter().map(Ok),
                        );
                    }
                    problems.lock().unwrap_or_else(|e| e.into_inner()).extend(found);
                });
            }
        });
        for found in problems.into_inner().unwrap_or_else(|e| e.into_inner()) {
            match found {
                Ok(problem) => {
                    if problem.incomplete {
                        self.summary.errors += 1;
                    }
                    self.observer.problem(problem);
                }
                Err((path, err)) => self.problem(&path, err),
            }
        }
    }

    fn set_meta(&mut self, node: &Node, path: &Path) {
        let owner = meta::Owner { is_root: self.is_root, warned: &self.warned_owner };
        for problem in meta::apply(node, path, owner) {
            if problem.incomplete {
                self.summary.errors += 1;
            }
            self.observer.problem(problem);
        }
    }
}

/// Removes a non-directory at `path` so that the entry can be created there.
fn clear_place(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}
