//! The end of each batch of a restore, in the order that keeps every step from undoing another:
//! the files' content is written, each file gets its metadata and is renamed into place, the
//! hard links to them are made, and then the directories whose entries are all in place get
//! their own metadata (their times last of all, since every new name changes them).

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use dedup_core::Problem;
use dedup_fs::{FsError, Target};

use super::file::{finish, Finished};
use super::links::PendingLink;
use super::meta::{self, Owner};
use super::walk::Restorer;
use super::ChangeKind;

impl Restorer<'_> {
    /// Writes the content of the batch's files and puts them in place, makes the hard links,
    /// then sets the metadata of the directories done (several threads for the files).
    pub fn run_batch(&mut self) {
        if self.options.dry_run {
            self.done_dirs.clear();
            return;
        }
        self.summary.bytes += self.batch.execute(self.repo, self.workers);
        let mut files = std::mem::take(&mut self.batch.files);
        let per = files.len().div_ceil(self.workers).max(1);
        let owner = Owner { is_root: self.is_root, warned: &self.warned_owner };
        let outcomes: Vec<Option<(Finished, Vec<Problem>)>> = std::thread::scope(|scope| {
            let owner = &owner;
            let parts: Vec<_> = files
                .chunks_mut(per)
                .map(|part| {
                    let len = part.len();
                    let done = scope.spawn(move || {
                        part.iter_mut().map(|p| Some(finish(p, owner))).collect::<Vec<_>>()
                    });
                    (len, done)
                })
                .collect();
            let joined = parts
                .into_iter()
                .map(|(len, h)| h.join().unwrap_or_else(|_| (0..len).map(|_| None).collect()));
            joined.flatten().collect()
        });
        let firsts = std::mem::take(&mut self.firsts);
        for (number, outcome) in outcomes.into_iter().enumerate() {
            // A worker that died leaves its files' outcomes unknown: none counts as restored.
            let (finished, problems) = outcome.unwrap_or_else(|| {
                let why = "not restored: the thread putting it in place failed";
                let problem = Problem::error(
                    &files[number].path,
                    dedup_core::ProblemKind::Io(std::io::Error::other(why)),
                );
                (Finished::NotRestored, vec![problem])
            });
            self.report(problems);
            match finished {
                Finished::Restored { replaced } => {
                    self.summary.files += 1;
                    if replaced {
                        self.change(ChangeKind::Replace, files[number].path.clone());
                    }
                }
                Finished::Damaged => self.summary.files += 1,
                Finished::NotRestored => {
                    // The next name of its group becomes the first.
                    if let Some((_, key)) = firsts.iter().find(|(n, _)| *n == number) {
                        self.links.remove(key);
                    }
                }
            }
        }
        drop(files);
        for link in std::mem::take(&mut self.pending_links) {
            self.make_link(link);
        }
        let owner = Owner { is_root: self.is_root, warned: &self.warned_owner };
        let mut problems = Vec::new();
        for (fd, node, path) in std::mem::take(&mut self.done_dirs) {
            problems.extend(meta::apply(&node, Target::Fd(fd.as_fd()), &path, &owner));
        }
        self.report(problems);
        self.events.progress(&self.summary);
    }

    /// Makes a later name of a hard-linked file.
    fn make_link(&mut self, link: PendingLink) {
        if !self.links.contains_key(&link.key) {
            let msg = "not restored: the file it is a hard link of could not be restored";
            return self.problem(&link.path, msg);
        }
        let first_dir = match link.first.dir.upgrade() {
            Some(dir) => Ok(dir),
            None => self.open_below_root(parent_of(&link.first.rel)),
        };
        let from = OsStr::from_bytes(link.first.name());
        let name = OsStr::from_bytes(&link.name);
        let made = first_dir.and_then(|first_dir| {
            let make = |at: &OsStr| dedup_fs::hard_link_at(&*first_dir, from, &*link.dir, at);
            if link.replace {
                dedup_fs::replace_at(&*link.dir, name, make)
            } else {
                make(name)
            }
        });
        match made {
            Ok(()) => {
                self.summary.links += 1;
                if link.replace {
                    self.change(ChangeKind::Replace, link.path);
                }
            }
            Err(FsError::Exists) => self.problem(
                &link.path,
                "not restored: an entry appeared at its name during the restore",
            ),
            Err(err) => {
                let first = self.path_of(&link.first.rel);
                self.problem(&link.path, format!("cannot link it to {}: {err}", first.display()))
            }
        }
    }

    /// The directory at `rel` below the target, reached one name at a time with no symlink
    /// followed.
    fn open_below_root(&self, rel: &[u8]) -> Result<Arc<OwnedFd>, FsError> {
        let root = self.root.as_ref().ok_or_else(|| {
            FsError::Io(std::io::Error::other("the target directory is not open"))
        })?;
        let mut dir = Arc::clone(root);
        for part in rel.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
            dir = Arc::new(dedup_fs::open_dir_at(&*dir, OsStr::from_bytes(part))?);
        }
        Ok(dir)
    }
}

/// The directory part of a path below the target (empty for a name in the target itself).
fn parent_of(rel: &[u8]) -> &[u8] {
    rel.iter().rposition(|&b| b == b'/').map_or(&[][..], |cut| &rel[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::links::LinkFirst;

    #[test]
    fn a_first_name_splits_into_its_directory_and_name() {
        let first = LinkFirst::new(None, b"a/b/c".to_vec());
        assert_eq!(first.name(), b"c");
        assert_eq!(parent_of(b"a/b/c"), b"a/b");
        assert_eq!(parent_of(b"c"), b"");
        assert_eq!(LinkFirst::new(None, b"c".to_vec()).name(), b"c");
    }
}
