//! Tree blobs' plaintext: one directory's entries, sorted by name, each with its metadata and
//! its content (a file's chunk ids, a directory's subtree id). Version 1 carries each entry's
//! status (atime, ctime, device, inode, link count) inline; version 2 leaves out what differs
//! between copies of a directory, so that they share one tree blob, and keeps that in a
//! parallel status tree ([`super::StatusTree`]).

use super::tree_entry::encode_entry;
pub use super::tree_entry::EntryView;
use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

/// Longest name (Linux's NAME_MAX).
pub const MAX_NAME: usize = 255;
pub(super) const MAX_TARGET: usize = 1 << 16;
pub(super) const MAX_XATTR_NAME: usize = 255;
pub(super) const MAX_XATTR_VALUE: usize = 1 << 16;

/// What kind of entry a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NodeKind {
    /// A regular file.
    #[default]
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A named pipe.
    Fifo,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A socket (restored as nothing: a socket cannot be created without its server).
    Socket,
}

impl NodeKind {
    pub(super) fn code(self) -> u8 {
        match self {
            NodeKind::File => 1,
            NodeKind::Dir => 2,
            NodeKind::Symlink => 3,
            NodeKind::Fifo => 4,
            NodeKind::CharDevice => 5,
            NodeKind::BlockDevice => 6,
            NodeKind::Socket => 7,
        }
    }

    pub(super) fn from_code(code: u8) -> Result<Self, DecodeError> {
        Ok(match code {
            1 => NodeKind::File,
            2 => NodeKind::Dir,
            3 => NodeKind::Symlink,
            4 => NodeKind::Fifo,
            5 => NodeKind::CharDevice,
            6 => NodeKind::BlockDevice,
            7 => NodeKind::Socket,
            other => return Err(DecodeError::invalid(format!("unknown entry kind {other}"))),
        })
    }

    /// A one-letter marker as `ls -l` shows it.
    pub fn letter(self) -> char {
        match self {
            NodeKind::File => '-',
            NodeKind::Dir => 'd',
            NodeKind::Symlink => 'l',
            NodeKind::Fifo => 'p',
            NodeKind::CharDevice => 'c',
            NodeKind::BlockDevice => 'b',
            NodeKind::Socket => 's',
        }
    }
}

/// What a node holds besides metadata.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Content {
    /// Nothing (symlinks, FIFOs, devices, sockets).
    #[default]
    None,
    /// A file's chunks, in order.
    Chunks(Vec<Id>),
    /// A directory's tree.
    Subtree(Id),
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Node {
    /// The name (any bytes but `/` and NUL; not `.` or `..`).
    pub name: Vec<u8>,
    /// The kind.
    pub kind: NodeKind,
    /// The file could not be read whole: its content is incomplete.
    pub incomplete: bool,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes.
    pub size: u64,
    /// Access time, ns since the epoch.
    pub atime: i64,
    /// Modification time.
    pub mtime: i64,
    /// Status change time.
    pub ctime: i64,
    /// Device of the source.
    pub dev: u64,
    /// Inode of the source.
    pub ino: u64,
    /// Link count of the source.
    pub nlink: u64,
    /// Device number of a device node.
    pub rdev: u64,
    /// Symlink target.
    pub target: Vec<u8>,
    /// Extended attributes, sorted by name.
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    /// Chunks or subtree.
    pub content: Content,
    /// A directory's status tree (trees of version 2; not part of the tree blob itself: it
    /// comes from, and goes into, the directory's own status tree).
    pub status_tree: Option<Id>,
}

impl Node {
    /// Whether a tree of version 2 records this entry's link group (device, inode, link
    /// count): only a regular file with more than one name, which restore links.
    pub(super) fn linked(&self) -> bool {
        self.kind == NodeKind::File && self.nlink > 1
    }
}

/// Where a tree's entries keep their status (ctime and inode, which prove a file unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeStatus {
    /// Version 1: in each entry.
    #[default]
    Inline,
    /// Version 2: in a status tree, not read; the entries' ctime and inode are unknown (0), and
    /// their atime (unknown too) reads as their mtime.
    Apart,
    /// Version 2 with its status tree applied: the entries' atime, ctime and inode are known.
    Joined,
}

/// A directory's entries, sorted by name bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tree {
    /// The entries.
    pub nodes: Vec<Node>,
    /// The tree's version, as where its status lives.
    pub status: TreeStatus,
}

/// Whether `name` is safe to create inside a directory.
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name != b"."
        && name != b".."
        && !name.iter().any(|&b| b == b'/' || b == 0)
}

impl Tree {
    /// Sorts the entries by name, as the format requires. Names in a tree are unique, so an
    /// unstable sort gives the same order, without the stable sort's scratch copy of the
    /// entries (about 240 bytes each: megabytes for a directory of tens of thousands).
    pub fn sort(&mut self) {
        self.nodes.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    }

    /// The entry named `name`.
    pub fn find(&self, name: &[u8]) -> Option<&Node> {
        self.nodes.binary_search_by(|n| n.name.as_slice().cmp(name)).ok().map(|i| &self.nodes[i])
    }

    /// The entry named `name`, to take parts of it.
    pub fn find_mut(&mut self, name: &[u8]) -> Option<&mut Node> {
        let at = self.nodes.binary_search_by(|n| n.name.as_slice().cmp(name)).ok()?;
        Some(&mut self.nodes[at])
    }

    /// Whether the entries' ctime and inode are known (version 1, or joined with the status
    /// tree): only then can they prove a file unchanged.
    pub fn status_known(&self) -> bool {
        self.status != TreeStatus::Apart
    }

    /// The plaintext, of version 1 when the status is [`TreeStatus::Inline`], else of version 2
    /// (whose status goes into [`super::StatusTree::of`]); entries must be sorted and unique
    /// ([`Tree::sort`]).
    pub fn encode(&self) -> Vec<u8> {
        let inline = self.status == TreeStatus::Inline;
        let mut out = Writer::default();
        out.u8(tree_version(inline));
        out.len(self.nodes.len());
        for node in &self.nodes {
            encode_entry(node, inline, &mut out);
        }
        out.buf
    }

    /// Decodes and validates the plaintext, of version 1 or 2. The entries of a version-2
    /// tree have ctime 0, atime = mtime, and device and inode 0 unless linked, until joined
    /// with their status tree ([`super::StatusTree::apply`]).
    pub fn decode(bytes: &[u8]) -> Result<Tree, DecodeError> {
        let mut nodes: Vec<Node> = Vec::new();
        let status = Tree::decode_each(bytes, |node, count| {
            nodes.reserve_exact(count - nodes.len());
            nodes.push(node);
        })?;
        Ok(Tree { nodes, status })
    }

    /// Decodes and validates the plaintext as [`Tree::decode`] does, handing each entry to
    /// `each` with the number of entries the tree holds, so that a reader that needs only a
    /// pass over the entries (prune's marking) never holds them all decoded: a directory of
    /// tens of thousands of entries decodes to megabytes. On an error, `each` has seen the
    /// entries before it.
    pub fn decode_each(
        bytes: &[u8],
        mut each: impl FnMut(Node, usize),
    ) -> Result<TreeStatus, DecodeError> {
        let mut input = Reader::new(bytes);
        let inline = input.version_in(1..=2)? == 1;
        let count = input.count(min_entry_len(inline), "entries")?;
        let mut previous: Option<&[u8]> = None;
        for _ in 0..count {
            let entry = EntryView::decode(&mut input, inline, previous)?;
            previous = Some(entry.name);
            each(entry.to_node(), count);
        }
        input.finish()?;
        Ok(if inline { TreeStatus::Inline } else { TreeStatus::Apart })
    }
}

/// The first byte of a tree's plaintext: 1 with the status inline, else 2.
pub(super) fn tree_version(inline: bool) -> u8 {
    if inline {
        1
    } else {
        2
    }
}

/// The smallest encoded entry of a tree of version 1 and of version 2: what bounds the entry
/// count a tree's bytes can hold.
pub(super) fn min_entry_len(inline: bool) -> usize {
    if inline {
        90
    } else {
        51
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    fn node_strategy() -> impl Strategy<Value = Node> {
        (
            proptest::collection::vec(1u8..=255, 1..12).prop_filter("valid", |n| valid_name(n)),
            0u8..7,
            any::<(u32, u32, u32, u64, i64, i64, i64, u64, u64)>(),
            proptest::collection::vec(any::<u8>(), 0..10),
            proptest::collection::btree_map(
                proptest::collection::vec(1u8.., 1..6),
                proptest::collection::vec(any::<u8>(), 0..6),
                0..3,
            ),
            proptest::collection::vec(any::<[u8; 32]>().prop_map(Id), 0..4),
        )
            .prop_map(
                |(
                    name,
                    kind,
                    (mode, uid, gid, size, atime, mtime, ctime, ino, rdev),
                    target,
                    xattrs,
                    chunks,
                )| {
                    let kind = NodeKind::from_code(kind + 1).expect("in range");
                    Node {
                        name,
                        kind,
                        incomplete: size.is_multiple_of(2),
                        mode: mode & 0o7777,
                        uid,
                        gid,
                        size,
                        atime,
                        mtime,
                        ctime,
                        dev: ino / 3,
                        ino,
                        nlink: 1 + ino % 3,
                        rdev,
                        target,
                        xattrs: xattrs.into_iter().collect(),
                        content: match kind {
                            NodeKind::File => Content::Chunks(chunks),
                            NodeKind::Dir => {
                                Content::Subtree(chunks.first().copied().unwrap_or_default())
                            }
                            _ => Content::None,
                        },
                        status_tree: None,
                    }
                },
            )
    }

    pub(crate) fn tree_strategy() -> impl Strategy<Value = Tree> {
        proptest::collection::vec(node_strategy(), 0..6).prop_map(|nodes| {
            let mut tree = Tree { nodes, ..Tree::default() };
            tree.sort();
            tree.nodes.dedup_by(|a, b| a.name == b.name);
            tree
        })
    }

    proptest! {
        #[test]
        fn tree_round_trips(tree in tree_strategy()) {
            prop_assert_eq!(Tree::decode(&tree.encode()), Ok(tree));
        }

        #[test]
        fn a_version_2_tree_keeps_all_but_the_status(tree in tree_strategy()) {
            let apart = Tree { status: TreeStatus::Apart, ..tree.clone() };
            let decoded = Tree::decode(&apart.encode()).expect("decodes");
            let mut expected = apart;
            for node in &mut expected.nodes {
                (node.ctime, node.atime) = (0, node.mtime);
                if !node.linked() {
                    (node.dev, node.ino, node.nlink) = (0, 0, 1);
                }
            }
            prop_assert_eq!(decoded, expected);
        }

        #[test]
        fn mutated_tree_never_panics(tree in tree_strategy(), apart in any::<bool>(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            let status = if apart { TreeStatus::Apart } else { TreeStatus::Inline };
            let tree = Tree { status, ..tree };
            crate::format::damaged_input(&tree.encode(), at, byte, cut, Tree::decode);
        }
    }

    #[test]
    fn names_that_escape_a_directory_are_refused_by_name() {
        let long = vec![b'x'; MAX_NAME + 1];
        let cases: [(&[u8], &str); 7] = [
            (b"..", "\"..\""),
            (b".", "\".\""),
            (b"a/b", "\"a/b\""),
            (b"/etc/x", "\"/etc/x\""),
            (b"", "\"\""),
            (b"a\0b", "\"a\\x00b\""),
            (&long, "256 bytes, at most 255"),
        ];
        for status in [TreeStatus::Inline, TreeStatus::Apart] {
            for (bad, said) in cases {
                let tree = Tree {
                    nodes: vec![Node {
                        name: bad.to_vec(),
                        content: Content::Chunks(vec![]),
                        ..Node::default()
                    }],
                    status,
                };
                let err = Tree::decode(&tree.encode()).unwrap_err().to_string();
                assert!(err.contains(said), "{bad:?}: {err}");
            }
        }
    }

    #[test]
    fn a_repeated_name_is_refused_by_name() {
        let node = |name: &[u8]| Node {
            name: name.to_vec(),
            content: Content::Chunks(vec![]),
            ..Node::default()
        };
        let tree =
            Tree { nodes: vec![node(b"a"), node(b"x\xff"), node(b"x\xff")], ..Tree::default() };
        let err = Tree::decode(&tree.encode()).unwrap_err().to_string();
        assert!(err.contains("\"x\\xff\" repeated"), "{err}");
    }

    #[test]
    fn unsorted_entries_are_refused() {
        let node = |name: &[u8]| Node {
            name: name.to_vec(),
            content: Content::Chunks(vec![]),
            ..Node::default()
        };
        let tree = Tree { nodes: vec![node(b"b"), node(b"a")], ..Tree::default() };
        assert!(Tree::decode(&tree.encode()).is_err());
    }

    #[test]
    fn copies_of_a_directory_make_the_same_version_2_tree() {
        let file = |ino, ctime, nlink| Node {
            name: b"f".to_vec(),
            size: 3,
            mtime: 5,
            ctime,
            dev: 1,
            ino,
            nlink,
            content: Content::Chunks(vec![Id([1; 32])]),
            ..Node::default()
        };
        let tree = |node: Node, status| Tree { nodes: vec![node], status };
        let (a, b) = (file(10, 100, 1), file(20, 200, 1));
        assert_ne!(
            tree(a.clone(), TreeStatus::Inline).encode(),
            tree(b.clone(), TreeStatus::Inline).encode()
        );
        assert_eq!(tree(a, TreeStatus::Apart).encode(), tree(b, TreeStatus::Apart).encode());
        // A hard-linked file keeps its link group, which restore needs.
        let linked = Tree::decode(&tree(file(10, 100, 2), TreeStatus::Apart).encode()).unwrap();
        assert_eq!((linked.nodes[0].dev, linked.nodes[0].ino, linked.nodes[0].nlink), (1, 10, 2));
    }
}
