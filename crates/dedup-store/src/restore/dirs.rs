//! The target's directories during a restore: each made (mode 0700 until its own metadata is
//! set) or opened in its parent by one name with no symlink followed, only when something is
//! restored in it, after the overwrite policy looked at what stands at its name.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use dedup_fs::FsError;
use rustix::fs::AtFlags;

use super::conflict::Decision;
use super::levels::{lstat, State};
use super::walk::Restorer;
use super::ChangeKind;

impl Restorer<'_> {
    /// Makes sure the directory at `i` of the stack exists (and every one above it); false when
    /// nothing can be restored in it.
    pub fn materialize(&mut self, i: usize) -> bool {
        match self.levels[i].state {
            State::Open(_) | State::Virtual => return true,
            State::Blocked => return false,
            State::Pending => {}
        }
        let (mut state, created) = if i == 0 {
            self.make_root()
        } else if !self.materialize(i - 1) {
            (State::Blocked, false)
        } else {
            self.make_dir(i)
        };
        // The repository restored from, met as a directory of the snapshot: nothing is written
        // into it, nor removed from it.
        if let State::Open(fd) = &state {
            let own = self.options.repository;
            if own.is_some_and(|own| {
                rustix::fs::fstat(&**fd).is_ok_and(|st| (st.st_dev, st.st_ino) == own)
            }) {
                let path = self.path_of(&self.rel[..self.levels[i].rel_len.min(self.rel.len())]);
                self.problem(&path, "not restored into: it is the repository restored from");
                state = State::Blocked;
            }
        }
        if i > 0 && matches!(state, State::Open(_) | State::Virtual) {
            self.summary.dirs += 1;
        }
        let level = &mut self.levels[i];
        level.created = created;
        level.state = state;
        matches!(level.state, State::Open(_) | State::Virtual)
    }

    /// The target itself: made with its parents if need be and opened, a symlink at its path
    /// followed (the user named it).
    fn make_root(&mut self) -> (State, bool) {
        let target = self.target.clone();
        let existed = std::fs::symlink_metadata(&target).is_ok();
        if !existed && self.options.dry_run {
            return (State::Virtual, true);
        }
        if !existed {
            if let Err(err) = std::fs::create_dir_all(&target) {
                self.problem(&target, err);
                return (State::Blocked, false);
            }
        }
        match dedup_scan::open_dir(&target, true) {
            Ok(fd) => {
                let fd = Arc::new(fd);
                self.root = Some(Arc::clone(&fd));
                (State::Open(fd), !existed)
            }
            Err(err) => {
                self.problem(&target, err);
                (State::Blocked, false)
            }
        }
    }

    /// The directory at `i` of the stack, in its parent (made or opened already).
    fn make_dir(&mut self, i: usize) -> (State, bool) {
        let rel_len = self.levels[i].rel_len;
        let path = self.path_of(&self.rel[..rel_len]);
        let node = self.levels[i].node.clone();
        let parent = match &self.levels[i - 1].state {
            State::Open(fd) => Arc::clone(fd),
            _ => return (State::Virtual, true),
        };
        let name = OsStr::from_bytes(&node.name);
        // A directory this restore made held nothing but what the restore put there.
        let fresh = self.levels[i - 1].created;
        let existing = match if fresh { Ok(None) } else { lstat(&parent, name) } {
            Ok(existing) => existing,
            Err(err) => {
                self.problem(&path, err);
                return (State::Blocked, false);
            }
        };
        let decision = self.decide(&node, existing.as_ref(), &parent);
        let dry = self.options.dry_run;
        let mut created = match decision {
            Decision::Merge => false,
            Decision::Create if dry => return (State::Virtual, true),
            Decision::Create => true,
            Decision::Replace => {
                self.change(ChangeKind::Replace, path.clone());
                if dry {
                    return (State::Virtual, true);
                }
                if let Err(err) = rustix::fs::unlinkat(&*parent, name, AtFlags::empty()) {
                    self.problem(&path, err);
                    return (State::Blocked, false);
                }
                true
            }
            Decision::Keep => {
                self.change(ChangeKind::Keep, path);
                return (State::Blocked, false);
            }
            Decision::ReplaceDir | Decision::InTheWay => return (State::Blocked, false),
        };
        if created {
            // Private until its entries are in and its own mode is set.
            match dedup_fs::create_dir_at(&*parent, name, 0o700) {
                Ok(()) => {}
                // Made by someone else meanwhile: opened below without following, and merged.
                Err(FsError::Exists) => created = false,
                Err(err) => {
                    self.problem(&path, err);
                    return (State::Blocked, false);
                }
            }
        }
        match dedup_fs::open_dir_at(&*parent, name) {
            Ok(fd) => (State::Open(Arc::new(fd)), created),
            Err(err) => {
                self.problem(&path, format!("cannot open the directory: {err}"));
                (State::Blocked, false)
            }
        }
    }
}
