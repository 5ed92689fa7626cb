//! Moving a destination entry into the backups just before the change that replaces or deletes
//! it (`--backup`, `--backup-dir`): one rename, never a copy, so at any moment the old entry is
//! at its place or in the backups. Into a backup directory, at the entry's path below it (the
//! directories on the way made with the modes of DST's, so a backup exposes nothing its place in
//! DST did not), a file's name with the suffix; beside the entry, its name with the suffix. A
//! directory takes everything in it along; where a directory of that name is already in the
//! backups (an earlier run's), its entries are moved into it one by one, and so they are when a
//! suffix must be given to each file inside. An older backup of a file at the same name is
//! replaced, as rsync does.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::DirBuilderExt;
use std::sync::OnceLock;

use dedup_fs::{
    create_dir_at, open_dir_at, open_dir_beneath, rename_at, set_mode, FsError, Target,
};
use dedup_scan::EntryKind;
use rustix::fs::{fstat, statat, unlinkat, AtFlags, FileType, RawDir};
use rustix::io::Errno;

use super::Exec;
use crate::backup::{Backup, Place};
use crate::change::{Change, ChangeKind, Item};
use crate::dry_run::path;
use crate::rel_path::split;

/// Mode of a directory of the backups made while the run has no better one to give it.
const PRIVATE_DIR: u32 = 0o700;

/// The backups of a run.
pub struct Backups {
    backup: Backup,
    /// The backup directory, open (made on first need: a run with nothing to keep makes none).
    root: OnceLock<Result<OwnedFd, String>>,
}

impl Backups {
    /// The backups `backup` describes.
    pub fn new(backup: Backup) -> Backups {
        Backups { backup, root: OnceLock::new() }
    }

    /// The backup directory, made (with its missing parents, private) and opened once.
    fn root(&self, x: &Exec<'_>) -> Result<&OwnedFd, FsError> {
        let made = self.root.get_or_init(|| {
            let opened = match &self.backup.place {
                Place::InDst(rel) => dirs_beneath(&x.dst_fd, rel, &|_| PRIVATE_DIR),
                Place::Outside(dir) => std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(PRIVATE_DIR)
                    .create(dir)
                    .and_then(|()| dedup_scan::open_dir(dir, true))
                    .map_err(FsError::Io),
                Place::Beside => Err(FsError::Io(std::io::Error::other("no backup directory"))),
            };
            opened.map_err(|e| format!("the backup directory: {e}"))
        });
        made.as_ref().map_err(|e| FsError::Io(std::io::Error::other(e.clone())))
    }
}

impl Exec<'_> {
    /// Move the destination entry at `rel` into the backups, when backups are kept and something
    /// stands there (then true); reports the change. Nothing is changed when it fails.
    pub fn back_up(&self, rel: &[u8]) -> Result<bool, FsError> {
        let Some(b) = &self.backups else { return Ok(false) };
        let (parent, name) = split(rel);
        let (dir, name) = (self.dst_dir(parent)?, OsStr::from_bytes(name));
        let st = match statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let kind = EntryKind::from_file_type(FileType::from_raw_mode(st.st_mode));
        let is_dir = kind == Some(EntryKind::Dir);
        let suffix = &b.backup.suffix;
        match &b.backup.place {
            Place::Beside => {
                let to = with_suffix(name, suffix);
                move_entry(&dir, name, &dir, &to, is_dir, None)?;
            }
            Place::InDst(_) | Place::Outside(_) => {
                let root = b.root(self)?;
                let mode_at = |rel: &[u8]| {
                    self.dst_dir(rel).and_then(|d| Ok(fstat(&d)?.st_mode)).unwrap_or(PRIVATE_DIR)
                };
                let to_dir = dirs_beneath(root, parent, &|upto| mode_at(&parent[..upto]))?;
                let to = if is_dir { name.to_os_string() } else { with_suffix(name, suffix) };
                let each = (!suffix.is_empty()).then_some(suffix.as_slice());
                move_entry(&dir, name, &to_dir, &to, is_dir, each)?;
            }
        }
        self.touch(parent);
        let change = Change::new(ChangeKind::Backup, path(rel), None, Item::of_kind(kind, false));
        self.done(change, 1);
        Ok(true)
    }
}

/// `name` with `suffix` appended.
fn with_suffix(name: &OsStr, suffix: &[u8]) -> OsString {
    let mut n = name.as_bytes().to_vec();
    n.extend_from_slice(suffix);
    OsString::from_vec(n)
}

/// The directory at `rel` below `root`, each missing one on the way made with the mode
/// `mode_of(length of its path in rel)` gives, none followed if it is a symlink.
fn dirs_beneath(
    root: &OwnedFd,
    rel: &[u8],
    mode_of: &dyn Fn(usize) -> u32,
) -> Result<OwnedFd, FsError> {
    let mut dir = open_dir_beneath(root, b"")?;
    let mut end = 0;
    for part in rel.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
        end += part.len() + usize::from(end > 0);
        let name = OsStr::from_bytes(part);
        dir = match open_dir_at(&dir, name) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => {
                match create_dir_at(&dir, name, PRIVATE_DIR) {
                    Ok(()) | Err(FsError::Exists) => {}
                    Err(e) => return Err(e),
                }
                let made = open_dir_at(&dir, name)?;
                set_mode(Target::Fd(made.as_fd()), mode_of(end) & 0o7777)?;
                made
            }
            Err(e) => return Err(e),
        };
    }
    Ok(dir)
}

/// Move `name` in `dir` to `to` in `to_dir`; a directory whose place is taken by a directory,
/// or whose files must each be given `each_suffix`, has its entries moved one by one into it.
fn move_entry(
    dir: &OwnedFd,
    name: &OsStr,
    to_dir: &OwnedFd,
    to: &OsStr,
    is_dir: bool,
    each_suffix: Option<&[u8]>,
) -> Result<(), FsError> {
    if !(is_dir && each_suffix.is_some()) {
        match rename_at(dir, name, to_dir, to) {
            Err(e) if is_dir && matches!(e.raw_os_error(), Some(c) if taken(c)) => {}
            other => return other,
        }
    }
    let from = open_dir_at(dir, name)?;
    match create_dir_at(to_dir, to, PRIVATE_DIR) {
        Ok(()) => set_mode(Target::At(to_dir.as_fd(), to), fstat(&from)?.st_mode & 0o7777)?,
        Err(FsError::Exists) => {}
        Err(e) => return Err(e),
    }
    let into = open_dir_at(to_dir, to)?;
    for child in names(&from)? {
        let child = OsStr::from_bytes(&child);
        let st = statat(&from, child, AtFlags::SYMLINK_NOFOLLOW)?;
        let child_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
        let target = match each_suffix {
            Some(suffix) if !child_dir => with_suffix(child, suffix),
            _ => child.to_os_string(),
        };
        move_entry(&from, child, &into, &target, child_dir, each_suffix)?;
    }
    Ok(unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// A rename of a directory failed because a non-empty directory holds the name.
fn taken(errno: i32) -> bool {
    errno == Errno::NOTEMPTY.raw_os_error() || errno == Errno::EXIST.raw_os_error()
}

/// The names in an open directory, `.` and `..` left out.
fn names(dir: &OwnedFd) -> Result<Vec<Vec<u8>>, FsError> {
    let mut out = Vec::new();
    let mut buf = Vec::with_capacity(8 << 10);
    let mut raw = RawDir::new(dir, buf.spare_capacity_mut());
    while let Some(entry) = raw.next() {
        let name = entry?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            out.push(name);
        }
    }
    Ok(out)
}
