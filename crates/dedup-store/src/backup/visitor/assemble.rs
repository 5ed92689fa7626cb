//! Directory assembly: a finished node goes into its directory (or is a root's result), and the
//! last thing a directory waited for stores its tree, whichever thread that is, then releases
//! its parent in turn.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::dir_state::{DirState, Home};
use super::{lock, BackupVisitor};
use crate::backup::pipeline::FileStage;
use crate::blob::BlobKind;
use crate::error::Result;
use crate::format::{encode_entries, Content, EncodedEntry, Node, StatusTree};
use crate::id::Id;

impl BackupVisitor<'_, '_> {
    /// Puts a finished node where it belongs.
    pub(super) fn deliver(&self, home: Home, node: Node) {
        match home {
            Home::Dir(dir) => lock(&dir.children).push(self.encoded(&node)),
            Home::Root(index) => lock(&self.found)[index] = Some(node),
        }
    }

    /// One thing `dir` waited for is done; the last one stores its tree and releases its
    /// parent in turn.
    pub fn release(&self, dir: Arc<DirState>) {
        let mut dir = dir;
        loop {
            if dir.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            let node = self.store_dir(&dir);
            match &dir.home {
                Home::Root(index) => {
                    if let Some(node) = node {
                        lock(&self.found)[*index] = Some(node);
                    }
                    return;
                }
                Home::Dir(parent) => {
                    if let Some(node) = node {
                        lock(&parent.children).push(self.encoded(&node));
                    }
                    let parent = Arc::clone(parent);
                    dir = parent;
                }
            }
        }
    }

    /// Stores `dir`'s tree; its node, or `None` when the backup already failed.
    fn store_dir(&self, dir: &DirState) -> Option<Node> {
        if self.failed() {
            return None;
        }
        let children = std::mem::take(&mut *lock(&dir.children));
        let mut node = std::mem::take(&mut *lock(&dir.node));
        if !dir.listed.load(Ordering::Acquire) && !dir.skipped_on_purpose(&node) {
            // The walk could not open it and said why: stored as it is known, flagged, rather
            // than as an empty directory.
            node.incomplete = true;
        }
        match self.store_children(children) {
            Ok((id, status)) => {
                (node.content, node.status_tree) = (Content::Subtree(id), status);
                Some(node)
            }
            Err(err) => {
                self.fail(err);
                None
            }
        }
    }

    /// `node` in the byte form of its directory's tree: of version 1, or of version 2 (whose
    /// status goes into a status tree) when the repository keeps status trees.
    pub(super) fn encoded(&self, node: &Node) -> EncodedEntry {
        EncodedEntry::new(node, !self.sink.repo().config().status_trees())
    }

    /// Stores a directory's tree made of `children`, and its status tree when the repository
    /// keeps them: the same blobs [`crate::repo::BlobSink::store_tree`] stores for the same
    /// nodes. Returns the tree's id and its status tree's.
    fn store_children(&self, mut children: Vec<EncodedEntry>) -> Result<(Id, Option<Id>)> {
        let inline = !self.sink.repo().config().status_trees();
        let tree = encode_entries(&mut children, inline);
        let id = self.sink.store(BlobKind::Tree, &tree)?;
        drop(tree);
        if inline {
            return Ok((id, None));
        }
        let statuses = children.iter().map(EncodedEntry::status);
        let status = StatusTree::encode_each(children.len(), statuses);
        drop(children);
        Ok((id, Some(self.sink.store(BlobKind::Tree, &status)?)))
    }
}
