//! `--link-dest DIR`: a file the run would copy that DIR holds unchanged (same kind, size,
//! modification time and metadata, by the same test as an up-to-date destination; with
//! `--checksum`, or where the stamps cannot settle it, the same bytes) becomes a hard link to
//! DIR's copy: rsync's idiom for snapshots that share unchanged files. DIR is reached like DST,
//! from its open root without following a symlink. A destination file that already is DIR's
//! copy (linked by an earlier run) is up to date when that copy is.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use dedup_fs::{open_dir_beneath, open_file_at};
use dedup_scan::{open_dir, open_for_read, Entry, EntryKind, Metadata};
use rustix::fs::{statat, AtFlags};

use super::merge::Merged;
use super::{Context, Op};
use crate::compare::Verdict;
use crate::rel_path::{join, split, under};
use crate::verify::{Comparer, Depth};

/// The `--link-dest` directory, open, with the directories below it opened so far.
pub struct LinkDest {
    path: PathBuf,
    root: OwnedFd,
    dirs: RefCell<HashMap<Vec<u8>, Option<OwnedFd>>>,
}

impl LinkDest {
    /// Open `path` (already resolved against DST when relative).
    pub fn open_root(path: &Path) -> std::io::Result<LinkDest> {
        let root = open_dir(path, true)?;
        Ok(LinkDest { path: path.to_path_buf(), root, dirs: RefCell::default() })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The metadata of the regular file at `rel` below the directory, if there is one.
    pub fn file(&self, rel: &[u8]) -> Option<Metadata> {
        let (parent, name) = split(rel);
        self.in_dir(parent, |dir| {
            let st = statat(dir, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW).ok()?;
            Metadata::from_stat(&st).filter(|m| m.kind == EntryKind::File)
        })
    }

    /// The regular file at `rel` below the directory, open for reading.
    fn open(&self, rel: &[u8]) -> Option<File> {
        let (parent, name) = split(rel);
        self.in_dir(parent, |dir| open_file_at(dir, OsStr::from_bytes(name)).ok())
    }

    fn in_dir<T>(&self, parent: &[u8], f: impl FnOnce(&OwnedFd) -> Option<T>) -> Option<T> {
        let mut dirs = self.dirs.borrow_mut();
        let dir = dirs
            .entry(parent.to_vec())
            .or_insert_with(|| open_dir_beneath(&self.root, parent).ok())
            .as_ref()?;
        f(dir)
    }
}

/// Turn copies into links where DIR's copy is unchanged.
pub fn settle(cx: &Context<'_>, m: &mut Merged) {
    let Some(base) = cx.link_dest else { return };
    let mut comparer = Comparer::default();
    for dir in &mut m.plan.dirs {
        for action in &mut dir.actions {
            let Some(meta) = action.src.meta else { continue };
            if action.op != Op::Create || meta.kind != EntryKind::File || meta.nlink > 1 {
                continue;
            }
            let rel = join(&dir.rel, action.name());
            let Some(theirs) = base.file(&rel) else { continue };
            let entry = Entry {
                name: action.name().to_vec(),
                kind: EntryKind::File,
                followed: false,
                meta: Some(theirs),
                target: None,
                xattrs: Vec::new(),
            };
            // Its extended attributes are not read: a source file with some is copied.
            let same = match cx.rules.compare(&action.src, &entry) {
                Verdict::Same => true,
                Verdict::Verify { meta: false } => base.open(&rel).is_some_and(|theirs| {
                    let src = under(cx.src_root, &rel);
                    open_for_read(&src, false)
                        .and_then(|src| comparer.same_files(&src, &theirs, meta.size, Depth::Whole))
                        .unwrap_or(false)
                }),
                _ => false,
            };
            if same {
                action.op = Op::LinkDest { from: rel };
            }
        }
    }
}
