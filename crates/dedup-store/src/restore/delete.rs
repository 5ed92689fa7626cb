//! `--delete`: what a directory of the target holds that the snapshot's does not goes, unless
//! the filter leaves it out; each removal is a change the events hear of (and all a dry run
//! does).

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use super::levels::{lstat, State};

/// Why `--delete` left a directory: the repository being read is in it.
pub(super) const HOLDS_REPOSITORY: &str =
    "not removed: it holds the repository restored from (its snapshots would go with it)";
use super::walk::{not_removed, Restorer};
use super::{ChangeKind, Pick};
use crate::format::{Node, NodeKind};

impl Restorer<'_> {
    /// With `delete`: removes what the directory at the top of the stack holds that `nodes`
    /// (the snapshot's entries) do not, unless the filter leaves it out.
    pub(super) fn delete_extras(&mut self, nodes: &[Node]) {
        let Some(level) = self.levels.last().filter(|l| !l.created) else { return };
        let State::Open(dir) = &level.state else { return };
        let dir = Arc::clone(dir);
        let mut names = match dedup_fs::entry_names(&dir) {
            Ok(names) => names,
            Err(err) => {
                let path = self.path_of(&self.rel);
                return self
                    .problem(&path, format!("cannot list it to delete extra entries: {err}"));
            }
        };
        names.sort();
        for name in names {
            if nodes.binary_search_by(|n| n.name.as_slice().cmp(&name)).is_ok() {
                continue;
            }
            let len = self.rel.len();
            if len > 0 {
                self.rel.push(b'/');
            }
            self.rel.extend_from_slice(&name);
            if self.wanted_extra(&dir, &name) {
                let path = self.path_of(&self.rel);
                if self.holds_repository(&dir, &name) {
                    self.problem(&path, HOLDS_REPOSITORY);
                    self.rel.truncate(len);
                    continue;
                }
                let removed = match self.options.dry_run {
                    true => Ok(0),
                    false => dedup_fs::remove_tree_within_fs(&*dir, OsStr::from_bytes(&name)),
                };
                match removed {
                    Ok(_) => self.change(ChangeKind::Delete, path),
                    Err(err) => self.problem(&path, not_removed(err)),
                }
            }
            self.rel.truncate(len);
        }
    }

    /// Whether the entry `name` of `dir` is the repository restored from or a directory
    /// holding it ([`super::RestoreOptions::protected`]).
    pub(super) fn holds_repository(&self, dir: &OwnedFd, name: &[u8]) -> bool {
        if self.options.protected.is_empty() {
            return false;
        }
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        rustix::fs::statat(dir, OsStr::from_bytes(name), flags)
            .is_ok_and(|st| self.options.protected.contains(&(st.st_dev, st.st_ino)))
    }

    /// Whether the filter lets `--delete` remove the extra entry `name` (at `rel`).
    fn wanted_extra(&self, dir: &OwnedFd, name: &[u8]) -> bool {
        let Some(filter) = self.options.filter else { return true };
        let is_dir = lstat(dir, OsStr::from_bytes(name)).ok().flatten().is_some_and(|e| e.is_dir());
        let kind = if is_dir { NodeKind::Dir } else { NodeKind::File };
        let node = Node { name: name.to_vec(), kind, ..Node::default() };
        filter(&self.rel, &node, true) != Pick::Skip
    }
}
