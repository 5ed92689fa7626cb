//! For tests only: a writer of snapshots with hand-made trees, which no backup writes: entries
//! named `..`, `a/b` or with a NUL, repeated or out of order, as an attacker who can write to a
//! repository (and knows its key) could store them. The blobs, packs and index are written
//! through the library as a backup writes them, so only the trees are hostile.

#![allow(dead_code)]

use dedup_store::blob::BlobKind;
use dedup_store::format::{Content, Node, NodeKind, Snapshot, Tree, TreeStatus};
use dedup_store::repo::{BlobSink, Repository};
use dedup_store::Id;

/// Writes blobs into a repository until [`HandMade::snapshot`] commits them.
pub struct HandMade<'r> {
    sink: BlobSink<'r>,
}

impl<'r> HandMade<'r> {
    /// A writer over `repo` (its index loaded).
    pub fn new(repo: &'r Repository) -> HandMade<'r> {
        let index = repo.load_index().expect("index").index;
        HandMade { sink: BlobSink::new(repo, index, false) }
    }

    /// A regular file `name` holding `content` (one chunk).
    pub fn file(&self, name: &[u8], content: &[u8]) -> Node {
        let id = self.sink.store(BlobKind::Data, content).expect("data blob");
        Node {
            name: name.to_vec(),
            kind: NodeKind::File,
            mode: 0o644,
            size: content.len() as u64,
            mtime: 1_600_000_000_000_000_000,
            atime: 1_600_000_000_000_000_000,
            nlink: 1,
            content: Content::Chunks(vec![id]),
            ..Node::default()
        }
    }

    /// A symlink `name` whose text is `target`.
    pub fn symlink(&self, name: &[u8], target: &[u8]) -> Node {
        Node {
            name: name.to_vec(),
            kind: NodeKind::Symlink,
            mode: 0o777,
            size: target.len() as u64,
            target: target.to_vec(),
            nlink: 1,
            ..Node::default()
        }
    }

    /// A directory `name` holding `nodes` exactly in the order given (a tree of version 1, not
    /// sorted, not checked).
    pub fn dir(&self, name: &[u8], nodes: Vec<Node>) -> Node {
        Node {
            name: name.to_vec(),
            kind: NodeKind::Dir,
            mode: 0o755,
            mtime: 1_600_000_000_000_000_000,
            atime: 1_600_000_000_000_000_000,
            nlink: 1,
            content: Content::Subtree(self.tree(nodes)),
            ..Node::default()
        }
    }

    /// Stores `nodes` as one tree blob, as given.
    pub fn tree(&self, nodes: Vec<Node>) -> Id {
        let tree = Tree { nodes, status: TreeStatus::Inline };
        self.sink.store(BlobKind::Tree, &tree.encode()).expect("tree blob")
    }

    /// Writes the packs and the index, then a snapshot of `path` whose root tree holds `nodes`;
    /// returns the snapshot's id.
    pub fn snapshot(self, path: &[u8], nodes: Vec<Node>) -> Id {
        let tree = self.tree(nodes);
        let repo = self.sink.repo();
        let snapshot = Snapshot {
            time: 1_700_000_000_000_000_000,
            tree,
            host: "hand-made".into(),
            user: "test".into(),
            paths: vec![path.to_vec()],
            program: "hand_made".into(),
            ..Snapshot::default()
        };
        self.sink.flush().expect("packs and index");
        repo.save_snapshot(&snapshot).expect("snapshot")
    }
}
