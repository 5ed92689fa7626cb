//! Reaching a report's path from the root it was found under. A root is what the user named, so
//! it is opened as given (symlinks followed); everything below it is resolved by the kernel
//! without following any symlink and without leaving the root. A directory swapped for a
//! symlink after the scan, a `..` in a path, or a report naming a path under none of its roots
//! therefore never makes an action reach outside the trees the user named.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use dedup_fs::{open_dir_beneath, Entry};

use crate::skip::SkipReason;

/// The parent directory of `path`, opened below the first of `roots` that holds it, and its
/// last name. A path that is a root itself is opened as the user gave it.
pub(crate) fn entry_below_root(path: &Path, roots: &[PathBuf]) -> Result<Entry, SkipReason> {
    let (root, below) = roots
        .iter()
        .find_map(|root| Some((root, plain_names_below(root, path)?)))
        .ok_or(SkipReason::OutsideRoots)?;
    let Some((name, dirs)) = below.split_last() else {
        return Ok(Entry::open(path)?);
    };
    let root = dedup_scan::open_dir(root, true).map_err(SkipReason::from_io)?;
    // One call: `open_dir_beneath` resolves a path longer than PATH_MAX a run at a time.
    let rel = dirs.iter().map(|d| d.as_bytes()).collect::<Vec<_>>().join(&b'/');
    let dir = open_below(&root, &rel)?;
    Ok(Entry { dir, name: name.to_os_string() })
}

/// The directory `rel` below `dir`, no symlink followed, never leaving `dir`.
fn open_below(dir: &OwnedFd, rel: &[u8]) -> Result<OwnedFd, SkipReason> {
    open_dir_beneath(dir, rel).map_err(|e| {
        // ELOOP, ENOTDIR: a symlink (or a file) where a directory was; EXDEV: the way would
        // leave the root.
        use rustix::io::Errno;
        let escapes = [Errno::LOOP, Errno::NOTDIR, Errno::XDEV]
            .iter()
            .any(|errno| e.raw_os_error() == Some(errno.raw_os_error()));
        if escapes {
            SkipReason::SymlinkOnPath
        } else {
            SkipReason::from(e)
        }
    })
}

/// True when the directory `dir` lies below (or is) one of `roots`, or holds a root that is a
/// file: where a run of ours may have left temporary names to clean up.
pub(crate) fn holds_our_entries(dir: &Path, roots: &[PathBuf]) -> bool {
    let dir_of_file_root = |root: &PathBuf| {
        let parent = match root.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        parent == dir && std::fs::metadata(root).is_ok_and(|m| m.is_file())
    };
    roots.iter().any(|root| plain_names_below(root, dir).is_some() || dir_of_file_root(root))
}

/// The names of `path` below `root`, when `path` lies under `root` by plain names only (no `..`,
/// no root or prefix component).
fn plain_names_below<'a>(root: &Path, path: &'a Path) -> Option<Vec<&'a OsStr>> {
    let rest = path.strip_prefix(root).ok()?;
    rest.components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn paths_are_reached_only_below_their_roots() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(tmp.path().join("out")).unwrap();
        fs::write(root.join("sub/f"), b"x").unwrap();
        fs::write(tmp.path().join("out/f"), b"x").unwrap();
        std::os::unix::fs::symlink("../out", root.join("link")).unwrap();
        let roots = [root.clone()];
        let entry = entry_below_root(&root.join("sub/f"), &roots).unwrap();
        assert!(entry.lstat().is_ok());
        // The root itself, named as given.
        assert!(entry_below_root(&root, &roots).is_ok());
        assert!(holds_our_entries(&root.join("sub"), &roots));
        assert!(holds_our_entries(&root, &roots));
        assert!(!holds_our_entries(&tmp.path().join("out"), &roots));
        assert!(!holds_our_entries(&root.join("../out"), &roots));
        let file_root = [root.join("sub/f")];
        assert!(holds_our_entries(&root.join("sub"), &file_root));
        assert!(!holds_our_entries(&root, &file_root));
        for outside in [root.join("link/f"), root.join("../out/f"), tmp.path().join("out/f")] {
            let err = entry_below_root(&outside, &roots).err();
            assert!(
                matches!(err, Some(SkipReason::OutsideRoots | SkipReason::SymlinkOnPath)),
                "{outside:?}: {err:?}"
            );
        }
    }
}
