//! A directory of the backup from its listing until its tree is stored, and where a finished
//! node goes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::lock;
use crate::format::{Content, EncodedEntry, Node};
use crate::id::Id;

/// Where a finished node goes: into a directory's tree, or a root's slot.
#[derive(Clone)]
pub enum Home {
    /// A child of this directory.
    Dir(Arc<DirState>),
    /// The root argument of this index.
    Root(usize),
}

/// A directory from its listing until its tree is stored.
pub struct DirState {
    pub(super) node: Mutex<Node>,
    pub(super) home: Home,
    /// The directory's tree in the parent snapshot, and its status tree there (trees of
    /// version 2), which together say what the directory held.
    pub(super) parent_tree: Option<Id>,
    pub(super) parent_status: Option<Id>,
    /// The finished children, each already in its tree's byte form (a large directory's
    /// children would take several times the room as nodes).
    pub(super) children: Mutex<Vec<EncodedEntry>>,
    /// What the tree still waits for: the walk's leave, queued files, unfinished subdirectories.
    pub(super) pending: AtomicUsize,
    /// Whether the walk listed it: one it could not open is stored flagged incomplete, not as
    /// an empty directory.
    pub(super) listed: AtomicBool,
    /// The device of its root, with `--one-file-system` (a directory of another device is a
    /// mount point the walk leaves unlisted on purpose).
    pub(super) root_dev: Option<u64>,
}

impl DirState {
    pub(super) fn new(
        node: Node,
        home: Home,
        before: Option<&Node>,
        root_dev: Option<u64>,
    ) -> Self {
        if let Home::Dir(parent) = &home {
            parent.pending.fetch_add(1, Ordering::AcqRel);
        }
        let parent_tree = match before.map(|b| &b.content) {
            Some(Content::Subtree(id)) => Some(*id),
            _ => None,
        };
        DirState {
            node: Mutex::new(node),
            home,
            parent_tree,
            parent_status: before.and_then(|b| b.status_tree),
            children: Mutex::new(Vec::new()),
            pending: AtomicUsize::new(1),
            listed: AtomicBool::new(false),
            root_dev,
        }
    }

    /// Whether the walk left this directory unlisted on purpose: a mount point under
    /// `--one-file-system`, or a directory that is its own ancestor (a bind-mount loop).
    pub(super) fn skipped_on_purpose(&self, node: &Node) -> bool {
        if self.root_dev.is_some_and(|dev| dev != node.dev) {
            return true;
        }
        let mut home = &self.home;
        while let Home::Dir(parent) = home {
            let above = lock(&parent.node);
            if (above.dev, above.ino) == (node.dev, node.ino) {
                return true;
            }
            drop(above);
            home = &parent.home;
        }
        false
    }
}
