//! SRC and DST checked before anything is made: SRC a directory this process can open, DST a
//! directory or missing (then created with any missing parents), and neither inside the other.
//! Inside is decided by identity, not by path: the device and inode of each root and of every
//! directory above it (reached through `..`, as the kernel resolves it), so that a bind mount or
//! a symlink giving one tree a second path is seen through. A DST that does not exist yet is
//! judged by the deepest of its ancestors that does.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use dedup_core::FileId;
use dedup_scan::open_dir;
use rustix::fs::{fstat, open, statat, AtFlags, Mode, OFlags};

use crate::rel_path::under;
use crate::tree::{Tree, Walked};
use crate::SyncError;

/// How the roots stand.
#[derive(Debug)]
pub struct Roots {
    /// DST exists (as a directory).
    pub dst_exists: bool,
}

/// Check SRC and DST.
pub fn check(src: &Path, dst: &Path) -> Result<Roots, SyncError> {
    let io_err = |p: &Path, e: io::Error| SyncError::Io(p.to_path_buf(), e);
    // Opened to be listed: a SRC this process cannot read is refused before DST is made.
    let src_fd = open_dir(src, true).map_err(|e| match e.raw_os_error() {
        Some(code) if code == rustix::io::Errno::NOTDIR.raw_os_error() => {
            SyncError::SourceNotDir(src.to_path_buf())
        }
        _ => io_err(src, e),
    })?;
    let (dst_exists, anchor) = match std::fs::metadata(dst) {
        Ok(m) if m.is_dir() => (true, dst.to_path_buf()),
        Ok(_) => return Err(SyncError::DestNotDir(dst.to_path_buf())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            refuse_dangling(dst)?;
            (false, existing_ancestor(dst)?)
        }
        Err(e) => return Err(io_err(dst, e)),
    };
    let anchor_fd =
        open(&anchor, path_flags(), Mode::empty()).map_err(|e| io_err(&anchor, e.into()))?;
    let src_chain = chain(&src_fd).map_err(|e| io_err(src, e))?;
    let dst_chain = chain(&anchor_fd).map_err(|e| io_err(&anchor, e))?;
    // DST (or the directory it will be made in) at or below SRC; or SRC at or below DST.
    let dst_in_src = dst_chain.contains(&src_chain[0]);
    let src_in_dst = dst_exists && src_chain.contains(&dst_chain[0]);
    if dst_in_src || src_in_dst {
        return Err(SyncError::Overlap(src.to_path_buf(), dst.to_path_buf()));
    }
    Ok(Roots { dst_exists })
}

/// A directory of one tree that is the other tree's root, reached through a mount below a root
/// (a bind mount of SRC inside DST, or of DST inside SRC), which [`check`]'s look at the
/// directories above each root cannot see: `--delete` would delete SRC's own files through it,
/// and a copy would feed DST into itself. The walked path of the first found, as the path a
/// user would give.
pub fn mounted_inside(walked: &Walked, src: &Path, dst: &Path) -> Option<PathBuf> {
    let id = |t: &Tree| t.dir(b"").map(|d| (d.meta.dev, d.meta.ino));
    let (src_id, dst_id) = (id(&walked.src)?, id(&walked.dst)?);
    let found = |t: &Tree, other: (u64, u64)| {
        t.dirs
            .iter()
            .find(|(rel, d)| !rel.is_empty() && (d.meta.dev, d.meta.ino) == other)
            .map(|(rel, _)| rel.clone())
    };
    if let Some(rel) = found(&walked.dst, src_id) {
        return Some(under(dst, &rel));
    }
    found(&walked.src, dst_id).map(|rel| under(src, &rel))
}

/// The deepest ancestor of the missing `dst` that exists; it must be a directory.
fn existing_ancestor(dst: &Path) -> Result<std::path::PathBuf, SyncError> {
    for a in dst.ancestors().skip(1) {
        let a = if a.as_os_str().is_empty() { Path::new(".") } else { a };
        match std::fs::metadata(a) {
            Ok(m) if m.is_dir() => return Ok(a.to_path_buf()),
            Ok(_) => return Err(SyncError::DestNotDir(a.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => refuse_dangling(a)?,
            Err(e) => return Err(SyncError::Io(a.to_path_buf(), e)),
        }
    }
    Ok(std::path::PathBuf::from("."))
}

/// A DST (or a directory on its way) that does not exist because it is a symlink to nothing:
/// nothing can be made there, and the user is told why rather than that it exists.
fn refuse_dangling(path: &Path) -> Result<(), SyncError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            let target = std::fs::read_link(path).unwrap_or_default();
            Err(SyncError::DestDanglingLink(path.to_path_buf(), target))
        }
        _ => Ok(()),
    }
}

/// The deepest directory `path` reaches that exists, and the names below it that do not exist
/// yet. Followed from the start one name at a time, so that a `..` after a name that does not
/// exist takes that name back (nothing missing can be a symlink to resolve it through).
pub fn existing_part(path: &Path) -> io::Result<(PathBuf, Vec<OsString>)> {
    let mut anchor = PathBuf::from(".");
    let mut rest: Vec<OsString> = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => anchor = PathBuf::from(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir if rest.pop().is_some() => {}
            Component::ParentDir | Component::Normal(_) if rest.is_empty() => {
                let next = anchor.join(c);
                match std::fs::metadata(&next) {
                    Ok(m) if m.is_dir() => anchor = next,
                    Ok(_) => return Err(io::Error::from(io::ErrorKind::NotADirectory)),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        rest.push(c.as_os_str().into())
                    }
                    Err(e) => return Err(e),
                }
            }
            Component::ParentDir | Component::Normal(_) => rest.push(c.as_os_str().into()),
        }
    }
    Ok((anchor, rest))
}

/// The identity of the directory `dir` and of each above it (see [`chain`]).
pub fn chain_of(dir: &Path) -> io::Result<Vec<FileId>> {
    chain(&open(dir, path_flags(), Mode::empty())?)
}

/// Directories opened only to be named and climbed (`O_PATH`): no read permission needed.
fn path_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// The identity of the open directory `dir` and of each directory above it, up to the root
/// of the file system tree (whose `..` is itself): `..`, `../..` and so on, each resolved by the
/// kernel from `dir` (through a mount to the directory it is mounted on), one call a level.
fn chain(dir: &OwnedFd) -> io::Result<Vec<FileId>> {
    let id = |st: rustix::fs::Stat| FileId { dev: st.st_dev, ino: st.st_ino };
    let mut ids = vec![id(fstat(dir)?)];
    let mut up = String::from("..");
    loop {
        let parent = id(statat(dir.as_fd(), up.as_str(), AtFlags::empty())?);
        if ids.contains(&parent) {
            return Ok(ids);
        }
        ids.push(parent);
        up.push_str("/..");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_roots_are_refused_and_side_by_side_ones_pass() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = (t.path().join("s"), t.path().join("d"));
        std::fs::create_dir_all(s.join("inner")).unwrap();
        std::fs::create_dir_all(&d).unwrap();
        assert!(check(&s, &d).unwrap().dst_exists);
        assert!(!check(&s, &t.path().join("new/deeper")).unwrap().dst_exists);
        for (a, b) in
            [(&s, s.join("inner")), (&s, s.join("missing/x")), (&s.join("inner"), s.clone())]
        {
            assert!(matches!(check(a, &b), Err(SyncError::Overlap(..))), "{a:?} {b:?}");
        }
        assert!(matches!(check(&s, &s), Err(SyncError::Overlap(..))));
        std::os::unix::fs::symlink(&s, t.path().join("alias")).unwrap();
        let through_link = t.path().join("alias/inner");
        assert!(matches!(check(&s, &through_link), Err(SyncError::Overlap(..))));
        std::fs::write(t.path().join("file"), b"x").unwrap();
        let under_a_file = check(&s, &t.path().join("file/sub"));
        assert!(matches!(under_a_file, Err(SyncError::Io(..) | SyncError::DestNotDir(_))));
    }

    #[test]
    fn the_existing_part_of_a_path_is_found_name_by_name() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        let part = |p: &str| existing_part(&t.path().join(p)).unwrap();
        let names = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(part("a/b"), (t.path().join("a/b"), names(&[])));
        assert_eq!(part("a/x/y"), (t.path().join("a"), names(&["x", "y"])));
        assert_eq!(part("gone/../a/b/c"), (t.path().join("a/b"), names(&["c"])));
        let (up_and_down, rest) = part("a/x/../../a/./b");
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap();
        assert_eq!((canon(&up_and_down), rest), (canon(&t.path().join("a/b")), names(&[])));
        std::fs::write(t.path().join("f"), b"").unwrap();
        assert!(existing_part(&t.path().join("f/x")).is_err());
    }
}
