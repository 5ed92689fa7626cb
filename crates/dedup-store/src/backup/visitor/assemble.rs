//! Directory assembly: a finished node goes into its directory (or is a root's result), and the
//! last thing a directory waited for stores its tree, whichever thread that is, then releases
//! its parent in turn.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::dir_state::{DirState, Home};
use super::{lock, BackupVisitor};
use crate::backup::pipeline::FileStage;
use crate::format::{Content, Node, Tree};

impl BackupVisitor<'_, '_> {
    /// Puts a finished node where it belongs.
    pub(super) fn deliver(&self, home: Home, node: Node) {
        match home {
            Home::Dir(dir) => lock(&dir.children).push(node),
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
                        lock(&parent.children).push(node);
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
        let tree = Tree { nodes: std::mem::take(&mut *lock(&dir.children)), ..Tree::default() };
        let mut node = std::mem::take(&mut *lock(&dir.node));
        if !dir.listed.load(Ordering::Acquire) && !dir.skipped_on_purpose(&node) {
            // The walk could not open it and said why: stored as it is known, flagged, rather
            // than as an empty directory.
            node.incomplete = true;
        }
        match self.sink.store_tree(tree) {
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
}
