//! Reaching and changing entries below a tree's root directory without ever following a
//! symlink on the way: what a mirror needs to work on a destination that someone else may
//! change under it. A path below the root is resolved by the kernel with `openat2`
//! (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), or one component at a time with `O_NOFOLLOW` on
//! kernels without it; renames and removals are relative to open directories, one name each.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{
    openat2, renameat, statat, unlinkat, AtFlags, FileType, Mode, OFlags, RawDir, ResolveFlags,
};
use rustix::io::Errno;

use crate::dirent::{check_name, open_dir_at};
use crate::error::FsError;

/// Open the directory at `rel` (names separated by `/`, empty for the root itself) below the
/// open directory `root`, following no symlink anywhere on the way and never leaving `root`.
pub fn open_dir_beneath(root: impl AsFd, rel: &[u8]) -> Result<OwnedFd, FsError> {
    let root = root.as_fd();
    let rel: &[u8] = if rel.is_empty() { b"." } else { rel };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match openat2(root, OsStr::from_bytes(rel), flags, Mode::empty(), resolve) {
        Err(Errno::NOSYS) => {}
        Err(Errno::NAMETOOLONG) if rel.len() > DEEP_STEP => return open_dir_in_steps(root, rel),
        other => return Ok(other?),
    }
    let mut dir = rustix::fs::openat(root, ".", flags, Mode::empty())?;
    for name in rel.split(|&b| b == b'/').filter(|n| !n.is_empty() && *n != b".") {
        dir = open_dir_at(&dir, OsStr::from_bytes(name))?;
    }
    Ok(dir)
}

/// How many bytes of a path [`open_dir_in_steps`] gives the kernel at once: under `PATH_MAX`
/// (4096) with room for one more name.
const DEEP_STEP: usize = 3800;

/// [`open_dir_beneath`] for a path longer than the kernel resolves in one call (a tree deeper
/// than `PATH_MAX` allows to name from its root): resolved a run of whole names at a time, each
/// run beneath the directory the one before it opened, so that no symlink is followed there
/// either.
fn open_dir_in_steps(root: impl AsFd, rel: &[u8]) -> Result<OwnedFd, FsError> {
    let mut dir = open_dir_beneath(root, b"")?;
    let mut rest = rel;
    while !rest.is_empty() {
        let cut = if rest.len() <= DEEP_STEP {
            rest.len()
        } else {
            match rest[..=DEEP_STEP].iter().rposition(|&b| b == b'/') {
                Some(0) | None => return Err(Errno::NAMETOOLONG.into()),
                Some(at) => at,
            }
        };
        dir = open_dir_beneath(&dir, &rest[..cut])?;
        rest = rest[cut..].strip_prefix(b"/").unwrap_or(&rest[cut..]);
    }
    Ok(dir)
}

/// Rename `from` in `from_dir` to `to` in `to_dir`, replacing an entry of another kind than a
/// directory at `to` (as `rename` does). [`FsError::CrossDevice`] across file systems.
pub fn rename_at(
    from_dir: impl AsFd,
    from: &OsStr,
    to_dir: impl AsFd,
    to: &OsStr,
) -> Result<(), FsError> {
    check_name(from)?;
    check_name(to)?;
    match renameat(from_dir, from, to_dir, to) {
        Err(Errno::XDEV) => Err(FsError::CrossDevice),
        other => Ok(other?),
    }
}

/// Remove the entry `name` in `dir` and, for a directory, everything below it, without
/// following any symlink (a symlink is removed itself). Returns the entries removed; a missing
/// entry removes nothing.
pub fn remove_tree_at(dir: impl AsFd, name: &OsStr) -> Result<u64, FsError> {
    check_name(name)?;
    let dir = dir.as_fd();
    let st = match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        unlinkat(dir, name, AtFlags::empty())?;
        return Ok(1);
    }
    let sub = open_dir_at(dir, name)?;
    let mut removed = 0;
    for child in names(&sub)? {
        removed += remove_tree_at(&sub, OsStr::from_bytes(&child))?;
    }
    drop(sub);
    unlinkat(dir, name, AtFlags::REMOVEDIR)?;
    Ok(removed + 1)
}

/// The names in an open directory, `.` and `..` left out.
pub(crate) fn names(dir: &OwnedFd) -> Result<Vec<Vec<u8>>, FsError> {
    let mut out = Vec::new();
    let mut buf = Vec::with_capacity(32 << 10);
    let mut raw = RawDir::new(dir, buf.spare_capacity_mut());
    while let Some(entry) = raw.next() {
        let entry = entry.map_err(|e| FsError::Io(io::Error::from(e)))?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push(name.to_vec());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_scan::open_dir;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlink_anywhere_below_the_root_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        fs::create_dir_all(d.join("a/b")).unwrap();
        fs::create_dir(d.join("elsewhere")).unwrap();
        symlink("../elsewhere", d.join("a/link")).unwrap();
        let root = open_dir(d, true).unwrap();
        assert!(open_dir_beneath(&root, b"a/b").is_ok());
        assert!(open_dir_beneath(&root, b"").is_ok());
        assert!(open_dir_beneath(&root, b"a/link").is_err());
        assert!(open_dir_beneath(&root, b"a/link/x").is_err());
        assert!(open_dir_beneath(&root, b"a/../..").is_err(), "never above the root");
    }

    #[test]
    fn a_path_longer_than_the_kernel_takes_is_opened_in_steps_still_following_no_symlink() {
        let t = tempfile::tempdir().unwrap();
        let root = open_dir(t.path(), true).unwrap();
        // 40 names of 250 bytes: 10039 bytes, more than twice PATH_MAX.
        let mut rel = Vec::new();
        let mut dir = open_dir_beneath(&root, b"").unwrap();
        let name = "d".repeat(250);
        for _ in 0..40 {
            rustix::fs::mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            dir = crate::dirent::open_dir_at(&dir, OsStr::new(&name)).unwrap();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(name.as_bytes());
        }
        rustix::fs::mkdirat(&dir, "leaf", Mode::from_raw_mode(0o755)).unwrap();
        let deep = [&rel[..], b"/leaf"].concat();
        let opened = open_dir_beneath(&root, &deep).unwrap();
        assert_eq!(
            rustix::fs::fstat(&opened).unwrap().st_ino,
            statat(&dir, "leaf", AtFlags::empty()).unwrap().st_ino
        );
        rustix::fs::symlinkat(t.path(), &dir, "up").unwrap();
        assert!(
            open_dir_beneath(&root, &[&rel[..], b"/up"].concat()).is_err(),
            "no symlink followed"
        );
    }

    #[test]
    fn removing_a_tree_removes_links_not_their_targets() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        fs::create_dir_all(d.join("gone/sub")).unwrap();
        fs::write(d.join("gone/sub/f"), b"x").unwrap();
        fs::create_dir(d.join("kept")).unwrap();
        fs::write(d.join("kept/g"), b"y").unwrap();
        symlink("../kept", d.join("gone/link")).unwrap();
        let root = open_dir(d, true).unwrap();
        assert_eq!(remove_tree_at(&root, OsStr::new("gone")).unwrap(), 4);
        assert!(!d.join("gone").exists());
        assert_eq!(fs::read(d.join("kept/g")).unwrap(), b"y");
        assert_eq!(remove_tree_at(&root, OsStr::new("gone")).unwrap(), 0);
    }

    #[test]
    fn rename_replaces_a_file_but_not_across_directories_names() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        fs::write(d.join("a"), b"new").unwrap();
        fs::write(d.join("b"), b"old").unwrap();
        let root = open_dir(d, true).unwrap();
        rename_at(&root, OsStr::new("a"), &root, OsStr::new("b")).unwrap();
        assert_eq!(fs::read(d.join("b")).unwrap(), b"new");
        assert!(rename_at(&root, OsStr::new("b"), &root, OsStr::new("x/y")).is_err());
    }
}
