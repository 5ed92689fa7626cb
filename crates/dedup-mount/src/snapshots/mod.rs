//! Every snapshot of a repository as a read-only file system: `snapshots/TIME/…`,
//! `hosts/HOST/TIME/…` and `latest` links at the top (`top.rs`, names in `names.rs`), a
//! snapshot's directories read from their tree blobs the first time they are looked in
//! (`tree.rs`, over the inode table of `inodes.rs`), what `stat` shows (`attrs.rs`), and file
//! content through the store's file reader, with its chunk cache and read-ahead
//! (`filesystem.rs` answers the kernel).
//!
//! Opening it reads the index and the snapshot files only.

pub(crate) mod attrs;
pub(crate) mod filesystem;
mod inodes;
mod names;
mod top;
mod tree;

use std::sync::Arc;
use std::time::SystemTime;

use dedup_store::file_reader::{FileReader, ReaderOptions};
use dedup_store::live_index::LiveIndex;
use dedup_store::repo::Repository;

use self::attrs::Mounter;
use self::tree::MountTree;
use crate::error::MountError;
use crate::events::MountEvents;

pub use self::filesystem::SnapshotFs;

/// The snapshot file system, ready to mount, and what opening it met.
pub struct OpenedSnapshots {
    /// The file system.
    pub fs: SnapshotFs,
    /// How many snapshots it shows.
    pub shown: usize,
    /// Snapshot files that could not be read: not shown.
    pub unreadable: Vec<dedup_store::Error>,
}

/// Reads the index and the snapshot list of `repo` and makes the file system that shows them,
/// owned by the calling user; problems met while it serves go to `events`.
pub fn open(
    repo: Arc<Repository>,
    events: Box<dyn MountEvents>,
) -> Result<OpenedSnapshots, MountError> {
    let index = Arc::new(LiveIndex::load(&repo)?);
    let (snapshots, unreadable) = repo.snapshots()?;
    let shown = snapshots.len();
    let reader = FileReader::new(Arc::clone(&repo), Arc::clone(&index), ReaderOptions::default());
    let tree = MountTree::new(repo, index, snapshots);
    let mounter = Mounter {
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
        time: SystemTime::now(),
    };
    let fs = SnapshotFs::new(tree, reader, mounter, events);
    Ok(OpenedSnapshots { fs, shown, unreadable })
}
