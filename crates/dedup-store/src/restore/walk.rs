//! The walk of a restore: the snapshot's trees depth first, with a stack of the target's
//! directories open on the way ([`Level`], made as [`super::dirs`] says), each entry reached
//! from its parent's descriptor by one name with no symlink followed. Each name is looked at
//! (`lstat`) before anything is put there, and the overwrite policy decides
//! ([`conflict::decide`]); files go into the batch ([`super::file`]), other entries are made at
//! once.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dedup_core::{Problem, ProblemKind};
use dedup_fs::{FsError, Target};

use super::conflict::{self, Decision, Existing};
use super::file::Batch;
use super::levels::{lstat, Level, State};
use super::links::{LinkFirst, PendingLink};
use super::meta::{self, Owner};
use super::{
    Change, ChangeKind, Events, Pick, RestoreOptions, RestoreSummary, NOT_LISTED, NOT_READ_WHOLE,
};
use crate::error::{Error, Result};
use crate::format::{Content, Node, NodeKind};
use crate::index::Index;
use crate::repo::Repository;

pub(crate) struct Restorer<'a> {
    pub repo: &'a Repository,
    pub index: &'a Index,
    pub options: RestoreOptions<'a>,
    pub events: &'a dyn Events,
    pub target: PathBuf,
    pub levels: Vec<Level>,
    /// The path of the entry at hand below the target.
    pub rel: Vec<u8>,
    /// The target, once open.
    pub root: Option<Arc<OwnedFd>>,
    pub is_root: bool,
    pub warned_owner: AtomicBool,
    /// The first name restored of each hard-linked file, by its source's (device, inode).
    pub links: HashMap<(u64, u64), LinkFirst>,
    pub pending_links: Vec<PendingLink>,
    /// Files of the batch that are the first name of a link group: (file number, group).
    pub firsts: Vec<(usize, (u64, u64))>,
    pub summary: RestoreSummary,
    pub batch: Batch,
    /// Directories whose entries are all planned, waiting for their metadata.
    pub done_dirs: Vec<(Arc<OwnedFd>, Node, PathBuf)>,
    pub workers: usize,
    /// How many descriptors the batch and the finished directories may hold.
    pub open_budget: usize,
}

impl<'a> Restorer<'a> {
    pub fn new(
        repo: &'a Repository,
        index: &'a Index,
        target: &Path,
        options: RestoreOptions<'a>,
        events: &'a dyn Events,
    ) -> Restorer<'a> {
        Restorer {
            repo,
            index,
            options,
            events,
            target: target.to_path_buf(),
            levels: Vec::new(),
            rel: Vec::new(),
            root: None,
            is_root: rustix::process::geteuid().is_root(),
            warned_owner: AtomicBool::new(false),
            links: HashMap::new(),
            pending_links: Vec::new(),
            firsts: Vec::new(),
            summary: RestoreSummary::default(),
            batch: Batch::default(),
            done_dirs: Vec::new(),
            workers: std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 16),
            open_budget: open_budget(),
        }
    }

    /// Restores `node` (see [`super::restore`]).
    pub fn run(mut self, node: &Node) -> Result<RestoreSummary> {
        let selected = self.options.filter.is_none();
        let (root_node, selected) = match node.kind {
            NodeKind::Dir => (node.clone(), selected),
            // The target receives the entry; it is not the snapshot's, so its metadata stays.
            _ => (Node { kind: NodeKind::Dir, ..Node::default() }, false),
        };
        self.levels.push(Level {
            state: State::Pending,
            node: root_node,
            rel_len: 0,
            selected,
            created: false,
        });
        // Without a filter the target is made whatever the snapshot holds; a target that
        // cannot be made is the end of the restore.
        if (selected || node.kind != NodeKind::Dir) && !self.materialize(0) {
            return Err(Error::Invalid(format!(
                "{}: cannot restore into it",
                self.target.display()
            )));
        }
        if node.kind == NodeKind::Dir {
            self.dir_contents();
        } else {
            self.rel = node.name.clone();
            self.leaf(node);
            self.rel.clear();
        }
        self.leave_dir();
        self.run_batch();
        Ok(self.summary)
    }

    /// The path of `rel` (below the target) for messages.
    pub fn path_of(&self, rel: &[u8]) -> PathBuf {
        if rel.is_empty() {
            self.target.clone()
        } else {
            self.target.join(OsStr::from_bytes(rel))
        }
    }

    /// A problem with the entry at `path`: it is not (wholly) restored.
    pub fn problem(&mut self, path: &Path, err: impl std::fmt::Display) {
        self.summary.errors += 1;
        self.events
            .problem(Problem::error(path, ProblemKind::Io(io::Error::other(err.to_string()))));
    }

    pub fn change(&mut self, kind: ChangeKind, path: PathBuf) {
        match kind {
            ChangeKind::Replace => self.summary.replaced += 1,
            ChangeKind::Delete => self.summary.deleted += 1,
            ChangeKind::Keep => self.summary.kept += 1,
        }
        self.events.change(&Change { kind, path });
    }

    /// Restores the children of the directory at the top of the stack. A tree that cannot be
    /// read is a problem of that directory.
    fn dir_contents(&mut self) {
        let top = self.levels.last().expect("a directory is open");
        if top.node.incomplete {
            // Its subtree is empty and says nothing of what it held: nothing to restore into it,
            // and nothing of the target's there may be taken for an extra.
            if top.selected {
                let path = self.path_of(&self.rel);
                self.problem(&path, NOT_LISTED);
            }
            return;
        }
        let Content::Subtree(id) = top.node.content else { return };
        // The status tree gives the entries their atime (else their mtime stands in).
        let (status, selected) = (top.node.status_tree, top.selected);
        let tree = match self.repo.read_tree_with_status(self.index, &id, status.as_ref()) {
            Ok(tree) => tree,
            Err(err) => {
                let path = self.path_of(&self.rel);
                return self.problem(&path, err);
            }
        };
        if self.options.delete && selected {
            self.delete_extras(&tree.nodes);
        } else if selected {
            self.remove_strays(&tree.nodes);
        }
        for child in &tree.nodes {
            let len = self.rel.len();
            if len > 0 {
                self.rel.push(b'/');
            }
            self.rel.extend_from_slice(&child.name);
            let within = self.levels.last().is_some_and(|l| l.selected);
            let pick = match self.options.filter {
                Some(filter) => filter(&self.rel, child, within),
                None => Pick::Restore,
            };
            match (pick, child.kind) {
                (Pick::Skip, _) | (Pick::Enter, NodeKind::File | NodeKind::Symlink) => {}
                (Pick::Enter, NodeKind::Dir) => self.enter_dir(child, false),
                (Pick::Enter, _) => {}
                (Pick::Restore, NodeKind::Dir) => self.enter_dir(child, true),
                (Pick::Restore, _) => self.leaf(child),
            }
            self.rel.truncate(len);
        }
    }

    /// Walks into the directory `node` (at `rel`); a picked one is made even when nothing is
    /// restored below it.
    fn enter_dir(&mut self, node: &Node, selected: bool) {
        let selected = selected || self.levels.last().is_some_and(|l| l.selected);
        self.levels.push(Level {
            state: State::Pending,
            node: node.clone(),
            rel_len: self.rel.len(),
            selected,
            created: false,
        });
        let top = self.levels.len() - 1;
        let going = if selected { self.materialize(top) } else { true };
        if going {
            self.dir_contents();
        }
        self.leave_dir();
    }

    /// Pops the directory at the top of the stack; once all its entries are in place it gets
    /// the snapshot's metadata if this restore made it, or restored it (not only passed through
    /// it) and may change what was there.
    fn leave_dir(&mut self) {
        let level = self.levels.pop().expect("a directory is open");
        let State::Open(fd) = level.state else { return };
        let ours = !level.node.name.is_empty() || level.rel_len > 0;
        let overwrite = self.options.overwrite != conflict::Overwrite::Never;
        if ours && (level.created || (level.selected && overwrite)) {
            let path = self.path_of(&self.rel[..level.rel_len.min(self.rel.len())]);
            self.done_dirs.push((fd, level.node, path));
            if self.done_dirs.len() >= self.open_budget / 6 {
                self.run_batch();
            }
        }
    }

    /// The overwrite policy's decision for `node` at its name in `dir`.
    pub(super) fn decide(
        &self,
        node: &Node,
        existing: Option<&Existing>,
        dir: &OwnedFd,
    ) -> Decision {
        let name = OsStr::from_bytes(&node.name);
        let text = || dedup_fs::read_link_at(dir, name).ok();
        conflict::decide(self.options.overwrite, self.options.delete, node, existing, text)
    }

    /// Restores an entry other than a directory at `rel`, in the directory at the top of the
    /// stack.
    fn leaf(&mut self, node: &Node) {
        let top = self.levels.len() - 1;
        if !self.materialize(top) {
            return;
        }
        let path = self.path_of(&self.rel);
        if node.kind == NodeKind::File && node.incomplete {
            return self.problem(&path, NOT_READ_WHOLE);
        }
        if node.kind == NodeKind::Socket {
            return;
        }
        let dir = match &self.levels[top].state {
            State::Open(fd) => Some(Arc::clone(fd)),
            _ => None,
        };
        let name = OsStr::from_bytes(&node.name);
        // A directory this restore made holds nothing of anyone else's: its names are free (a
        // race is caught by creating exclusively).
        let fresh = self.levels[top].created;
        let dir_to_look = dir.as_deref().filter(|_| !fresh);
        let existing = match dir_to_look.map(|d| lstat(d, name)).transpose() {
            Ok(existing) => existing.flatten(),
            Err(err) => return self.problem(&path, err),
        };
        let decision = match &dir {
            Some(dir) => self.decide(node, existing.as_ref(), dir),
            None => Decision::Create,
        };
        let replace = match decision {
            Decision::Create => false,
            Decision::Replace => {
                if let Some(why) = existing.as_ref().and_then(|e| self.protected_why(e.id)) {
                    return self.problem(&path, why);
                }
                true
            }
            Decision::ReplaceDir => {
                if let Some(why) = dir.as_deref().and_then(|d| self.protection(d, name.as_bytes()))
                {
                    return self.problem(&path, why);
                }
                if let (false, Some(dir)) = (self.options.dry_run, &dir) {
                    if let Err(err) = dedup_fs::remove_tree_within_fs(&**dir, name) {
                        return self.problem(&path, not_removed(err));
                    }
                }
                self.change(ChangeKind::Replace, path.clone());
                false
            }
            Decision::Keep => return self.change(ChangeKind::Keep, path),
            Decision::InTheWay => {
                return self.problem(
                    &path,
                    "not restored: a directory is in the way (restore with --delete to replace it)",
                )
            }
            Decision::Merge => return,
        };
        match dir {
            Some(dir) if !self.options.dry_run => self.create(node, dir, path, replace),
            _ => self.count_dry(node, path, replace),
        }
    }

    /// A dry run's account of an entry it would create.
    fn count_dry(&mut self, node: &Node, path: PathBuf, replace: bool) {
        if replace {
            self.change(ChangeKind::Replace, path);
        }
        match node.kind {
            NodeKind::File if node.nlink > 1 && self.links.contains_key(&(node.dev, node.ino)) => {
                self.summary.links += 1
            }
            NodeKind::File => {
                if node.nlink > 1 {
                    self.links.insert((node.dev, node.ino), LinkFirst::new(None, Vec::new()));
                }
                self.summary.files += 1;
            }
            _ => self.summary.others += 1,
        }
    }

    /// Creates `node` in `dir` at `rel` (files go into the batch), replacing what is there when
    /// `replace`.
    fn create(&mut self, node: &Node, dir: Arc<OwnedFd>, path: PathBuf, replace: bool) {
        let name = OsStr::from_bytes(&node.name);
        if node.kind == NodeKind::File {
            let key = (node.dev, node.ino);
            if node.nlink > 1 {
                if let Some(first) = self.links.get(&key) {
                    let first = first.clone();
                    let name = node.name.clone();
                    self.pending_links.push(PendingLink { first, key, dir, name, path, replace });
                    return self.run_batch_if_full();
                }
                let first = LinkFirst::new(Some(&dir), self.rel.clone());
                self.links.insert(key, first);
                self.firsts.push((self.batch.files.len(), key));
            }
            self.batch.add(self.index, node, dir, &node.name, path, replace);
            return self.run_batch_if_full();
        }
        let made = match (node.kind, meta::special_kind(node)) {
            (NodeKind::Symlink, _) => {
                let text = OsStr::from_bytes(&node.target);
                let make = |at: &OsStr| dedup_fs::create_symlink_at(&*dir, at, text);
                if replace {
                    dedup_fs::replace_at(&*dir, name, make)
                } else {
                    make(name)
                }
            }
            (_, Some(kind)) => {
                let make = |at: &OsStr| dedup_fs::create_special_at(&*dir, at, kind, 0o600);
                let made =
                    if replace { dedup_fs::replace_at(&*dir, name, make) } else { make(name) };
                made.map_err(|e| FsError::Io(io::Error::other(meta::special_error(node, &e))))
            }
            _ => return,
        };
        match made {
            Ok(()) => {}
            Err(FsError::Exists) => {
                return self.problem(
                    &path,
                    "not restored: an entry appeared at its name during the restore",
                )
            }
            Err(err) => return self.problem(&path, err),
        }
        if replace {
            self.change(ChangeKind::Replace, path.clone());
        }
        self.summary.others += 1;
        let owner = Owner { is_root: self.is_root, warned: &self.warned_owner };
        let problems = meta::apply(node, Target::At(dir.as_fd(), name), &path, &owner);
        self.report(problems);
    }

    /// Runs the batch once it holds enough: each file and each later name of a hard-linked file
    /// holds descriptors (the file, its directory) until the batch is done, so a third of what
    /// the process may open is theirs, a sixth the finished directories', the rest the walk's.
    fn run_batch_if_full(&mut self) {
        let most = self.open_budget / 3;
        if self.batch.full(most) || self.batch.files.len() + self.pending_links.len() >= most {
            self.run_batch();
        }
    }

    /// Hands problems to the observer, counting those that leave the restore incomplete.
    pub fn report(&mut self, problems: Vec<Problem>) {
        for problem in problems {
            if problem.incomplete {
                self.summary.errors += 1;
            }
            self.events.problem(problem);
        }
    }
}

/// Why a directory of the target could not be removed.
pub(super) fn not_removed(err: FsError) -> String {
    match err {
        FsError::CrossDevice => "not removed whole: a file system is mounted below it (it, and \
                                 the directories above it, are left)"
            .into(),
        other => format!("cannot remove it: {other}"),
    }
}

/// How many descriptors a restore lets its batch and its finished directories hold: what the
/// process may open, less a reserve for the walk's stack, the repository and the workers.
fn open_budget() -> usize {
    let limit =
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current.unwrap_or(1 << 20);
    usize::try_from(limit).unwrap_or(usize::MAX).saturating_sub(256).clamp(64, 1 << 17)
}
