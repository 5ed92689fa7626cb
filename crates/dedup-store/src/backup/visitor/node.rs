//! A walked entry as a snapshot node: kind, metadata and symlink target, without content or
//! extended attributes (the visitor fills those in).

use dedup_scan::{Entry, EntryKind, Metadata};

use crate::format::{Content, Node, NodeKind};

fn kind_of(kind: EntryKind) -> NodeKind {
    match kind {
        EntryKind::File => NodeKind::File,
        EntryKind::Dir => NodeKind::Dir,
        EntryKind::Symlink => NodeKind::Symlink,
        EntryKind::Fifo => NodeKind::Fifo,
        EntryKind::Socket => NodeKind::Socket,
        EntryKind::CharDevice => NodeKind::CharDevice,
        EntryKind::BlockDevice => NodeKind::BlockDevice,
    }
}

/// The node of an entry, without content or extended attributes: the backup walks without
/// reading attributes, and the visitor fills them in, from the parent snapshot or read.
pub fn node_of(name: &[u8], meta: &Metadata, entry: Option<&Entry>) -> Node {
    Node {
        name: name.to_vec(),
        kind: kind_of(meta.kind),
        incomplete: false,
        mode: meta.mode,
        uid: meta.uid,
        gid: meta.gid,
        size: meta.size,
        atime: meta.atime_ns,
        mtime: meta.mtime_ns,
        ctime: meta.ctime_ns,
        dev: meta.dev,
        ino: meta.ino,
        nlink: meta.nlink,
        rdev: meta.rdev,
        target: entry.and_then(|e| e.target.clone()).unwrap_or_default(),
        xattrs: Vec::new(),
        content: Content::None,
        status_tree: None,
    }
}

pub(super) fn last_name(path: &std::path::Path) -> Vec<u8> {
    path.file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default()
}
