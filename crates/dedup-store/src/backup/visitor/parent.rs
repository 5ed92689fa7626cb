//! Matching what the walk finds with the parent snapshot: each root path's node in the parent's
//! tree, and whether a file's status (size, times, inode) proves it unchanged so that it can take
//! the parent's chunks without a read.

use std::path::PathBuf;

use super::{lock, BackupVisitor};
use crate::blob::BlobKind;
use crate::format::{Content, Node, NodeKind, StatusTree, TreeView};
use crate::id::Id;

/// Timestamps closer than this to the parent snapshot's start cannot prove a file unchanged: it
/// may have been written again within the same clock tick after the parent read it.
pub(super) const RACY_NS: i64 = 1_000_000_000;

impl BackupVisitor<'_, '_> {
    /// The node of each root path in the parent snapshot's tree (rooted at the tree and status
    /// tree `parent_root`), where it has one, and whether its status is known.
    pub fn parent_roots(
        &self,
        parent_root: Option<(Id, Option<Id>)>,
        paths: &[PathBuf],
    ) -> Vec<Option<(Node, bool)>> {
        let Some((root, status)) = parent_root else { return vec![None; paths.len()] };
        paths
            .iter()
            .map(|path| {
                let mut node = crate::tree_walk::root_node(root);
                node.status_tree = status;
                let mut known = true;
                for part in path
                    .as_os_str()
                    .as_encoded_bytes()
                    .split(|&b| b == b'/')
                    .filter(|p| !p.is_empty())
                {
                    let Content::Subtree(id) = node.content else { return None };
                    let tree =
                        self.sink.read_tree_with_status(&id, node.status_tree.as_ref()).ok()?;
                    known = tree.status_known();
                    node = tree.find(part)?.clone();
                }
                Some((node, known))
            })
            .collect()
    }

    /// The parent snapshot's directory `id` as a view read entry by entry, joined with its
    /// status tree `status` where that reads and fits; `None` when the tree cannot be read. A
    /// status tree that is missing or damaged leaves the status unknown, which proves nothing
    /// unchanged: the files are read again (safe).
    pub(super) fn parent_view(&self, id: &Id, status: Option<&Id>) -> Option<TreeView> {
        let read = |id: &Id| {
            let location = self.sink.locate(id, BlobKind::Tree)?;
            self.sink.repo().read_blob_at(&location, BlobKind::Tree).ok()
        };
        let mut view = TreeView::decode(read(id)?).ok()?;
        if let Some(status) = status.filter(|_| !view.status_known()) {
            if let Some(status) = read(status).and_then(|plain| StatusTree::decode(&plain).ok()) {
                view.join(status);
            }
        }
        Some(view)
    }

    pub fn set_parent_roots(&self, roots: Vec<Option<(Node, bool)>>) {
        *lock(&self.found) = vec![None; roots.len()];
        *lock(&self.parent_roots) = roots;
    }

    /// The parent's chunks of `node`, taken out of `before` (the parent tree is read for this
    /// listing only, so they are moved rather than copied), when they can stand for the file
    /// without a read; `known`: whether `before`'s status (inode, ctime) is known, without which
    /// nothing is proven.
    pub(super) fn unchanged(
        &self,
        node: &Node,
        before: Option<&mut Node>,
        known: bool,
    ) -> Option<Vec<Id>> {
        let before = before.filter(|_| known)?;
        let parent_time = self.parent_time?;
        let same = before.kind == NodeKind::File
            && !before.incomplete
            && before.size == node.size
            && before.mtime == node.mtime
            && before.ctime == node.ctime
            && before.ino == node.ino
            && node.mtime.max(node.ctime) + RACY_NS <= parent_time;
        let Content::Chunks(chunks) = &mut before.content else { return None };
        (same && chunks.iter().all(|id| self.sink.contains(id, BlobKind::Data)))
            .then(|| std::mem::take(chunks))
    }
}
