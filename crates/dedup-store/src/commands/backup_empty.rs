//! The guard against backing up an unmounted disk: a PATH that is an empty directory where the
//! parent snapshot holds entries is most often the mount point of a disk that is not mounted,
//! and a snapshot of it would be an empty one that `latest` and retention policies then take
//! for the newest state of the data. So is an empty directory below PATH that `/etc/fstab`
//! names as a mount point with nothing mounted on it (`/home` of a backup of `/`). The backup
//! is refused unless the user says it is meant.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_core::mount_table;

use crate::error::{Error, Result};
use crate::format::{Content, Snapshot};
use crate::id::Id;
use crate::repo::Repository;
use crate::tree_walk;

/// Refuses the backup when one of `roots` (recorded as `paths`), or a directory below one that
/// `/etc/fstab` names as a mount point with nothing mounted on it, is an empty directory while
/// `parent` holds entries at that path. A parent tree that does not read proves nothing and
/// lets the backup go on.
pub fn refuse_empty_roots(
    repo: &Repository,
    roots: &[impl AsRef<Path>],
    paths: &[Vec<u8>],
    parent: Option<&(Id, Snapshot)>,
) -> Result<()> {
    let Some((id, snapshot)) = parent else { return Ok(()) };
    let refuse_if_emptied = |dir: &Path, path: &[u8]| {
        if !is_empty_dir(dir) {
            return Ok(());
        }
        let held = entries_held(repo, snapshot.tree, path);
        if held == 0 {
            return Ok(());
        }
        let short = id.short(8);
        Err(Error::Invalid(format!(
            "{}: is empty, but snapshot {short} of it holds {held} entries there: is a disk not \
             mounted there? No snapshot written (--allow-empty-source backs up an empty \
             directory)",
            dir.display()
        )))
    };
    for (root, path) in roots.iter().zip(paths) {
        let root = root.as_ref();
        refuse_if_emptied(root, path)?;
        for below in mount_table::unmounted_below(root) {
            let mut recorded = path.clone();
            if !recorded.ends_with(b"/") {
                recorded.push(b'/');
            }
            recorded.extend_from_slice(below.as_os_str().as_bytes());
            refuse_if_emptied(&root.join(&below), &recorded)?;
        }
    }
    Ok(())
}

/// Whether `root` is a directory (through a symlink the user named, as backup takes it) with
/// no entries at all. It is opened as the backup opens directories, leaving its access time as
/// it was: the snapshot records it.
fn is_empty_dir(root: &Path) -> bool {
    let Ok(dir) = dedup_scan::open_dir(root, true) else { return false };
    let Ok(mut entries) = rustix::fs::Dir::read_from(&dir) else { return false };
    entries.all(|entry| entry.is_ok_and(|e| matches!(e.file_name().to_bytes(), b"." | b"..")))
}

/// How many entries the directory at `path` of the tree `root` holds (0 when it is not a
/// directory there, or does not read).
fn entries_held(repo: &Repository, root: Id, path: &[u8]) -> usize {
    let Ok(node) = tree_walk::resolve(repo, root, path) else { return 0 };
    let Content::Subtree(tree) = node.content else { return 0 };
    repo.tree(&tree).map(|t| t.nodes.len()).unwrap_or(0)
}
