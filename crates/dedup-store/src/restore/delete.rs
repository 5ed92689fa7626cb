//! `--delete`: what a directory of the target holds that the snapshot's does not goes, unless
//! the filter leaves it out; each removal is a change the events hear of (and all a dry run
//! does).

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use super::levels::{lstat, State};

/// Why `--delete` left a directory: the repository being read is in it.
pub(crate) const HOLDS_REPOSITORY: &str =
    "not removed: it holds the repository restored from (its snapshots would go with it)";
/// Why `--delete` left a directory: the password file of the repository is in it.
pub(crate) const HOLDS_PASSWORD_FILE: &str =
    "not removed: it holds the password file of the repository restored from";
/// Why a restore left a file: it is the repository's password file, maybe its only copy.
pub(crate) const IS_PASSWORD_FILE: &str =
    "not removed nor replaced: it is the password file of the repository restored from";
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
                if let Some(why) = self.protection(&dir, &name) {
                    self.problem(&path, why);
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

    /// Why the entry `name` of `dir` must stay, when it is the repository restored from, its
    /// password file or a directory holding one ([`super::RestoreOptions::protected`]).
    pub(super) fn protection(&self, dir: &OwnedFd, name: &[u8]) -> Option<&'static str> {
        if self.options.protected.is_empty() {
            return None;
        }
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        let st = rustix::fs::statat(dir, OsStr::from_bytes(name), flags).ok()?;
        self.protected_why((st.st_dev, st.st_ino))
    }

    /// Why the entry `id` (device, inode) must stay, if it must.
    pub(super) fn protected_why(&self, id: (u64, u64)) -> Option<&'static str> {
        self.options.protected.iter().find(|p| p.id == id).map(|p| p.why)
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
