//! `dump`: one regular file of a snapshot, opened through the one reader of snapshot files, and
//! written whole into a file of the user's choosing.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::file_reader::{FileReader, ReaderOptions, SnapshotFile};
use crate::format::{Node, NodeKind};
use crate::live_index::LiveIndex;
use crate::repo::{Repository, SnapshotFilter};
use crate::tree_walk;

/// The regular file at `path` of the snapshot `spec`, with its node (whose `incomplete` says the
/// backup could not read it whole: a caller shows such a file only knowingly), opened for one
/// pass from start to end.
pub fn open_file(
    repo: &Arc<Repository>,
    spec: &str,
    filter: &SnapshotFilter,
    path: &[u8],
) -> Result<(Node, SnapshotFile)> {
    let (_, snapshot) = repo.find_snapshot(spec, filter)?;
    let node = tree_walk::resolve(repo, snapshot.tree, path)?;
    if node.kind != NodeKind::File {
        return Err(Error::Invalid(format!(
            "{}: not a regular file in the snapshot",
            String::from_utf8_lossy(path)
        )));
    }
    let index = Arc::new(LiveIndex::new(repo.index()?));
    let reader = FileReader::new(Arc::clone(repo), index, ReaderOptions::sequential());
    let file = reader.open(&node)?;
    Ok((node, file))
}

/// Writes `file` into a new file beside `path`, leaving its zero blocks as holes, and renames it
/// over `path` (whatever stands there but a directory: a symlink is replaced, never followed).
/// Its permission bits are `mode`'s, less the umask. Nothing is left at `path` unless the whole
/// file was written.
pub fn write_file(file: &SnapshotFile, mode: u32, path: &Path) -> Result<()> {
    let fail = |what: &str| {
        let object = format!("{}: {what}", path.display());
        move |e: std::io::Error| Error::io(object, e)
    };
    let fs = |e: dedup_fs::FsError| std::io::Error::other(e.to_string());
    let entry = dedup_fs::Entry::open(path).map_err(fs).map_err(fail("cannot write it"))?;
    let temp = dedup_fs::TempFile::with_mode(entry.dir.as_fd(), mode & 0o777)
        .map_err(fs)
        .map_err(fail("cannot create a file beside it"))?;
    temp.file().set_len(file.len()).map_err(fail("cannot size it"))?;
    let mut end = 0u64;
    for chunk in file.chunks() {
        let chunk = chunk?;
        dedup_fs::write_sparse_at(temp.file(), chunk.offset, &chunk.bytes)
            .map_err(fail("cannot write it"))?;
        end = chunk.offset + chunk.bytes.len() as u64;
    }
    temp.file().set_len(end).map_err(fail("cannot size it"))?;
    temp.commit(&entry.name).map_err(fs).map_err(fail("cannot put it in place"))?;
    Ok(())
}
