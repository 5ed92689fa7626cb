//! Status trees' plaintext: what differs between copies of a directory whose tree is of
//! version 2 — each entry's inode and ctime (which the backup's unchanged-file check needs) and
//! atime (which restore sets, and which reading a copy changes), in the order of the tree's
//! entries, and for a subdirectory its own status tree. Kept apart so that copies of a
//! directory share their (large) tree blob and differ only in this small one.

use super::tree::{Content, Tree, TreeStatus};
use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

/// A status tree's first byte: apart from a tree's versions (1, 2), so neither passes for the
/// other.
const STATUS_VERSION: u8 = 0x81;

/// One entry's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntryStatus {
    /// Inode of the source.
    pub ino: u64,
    /// Status change time, ns since the epoch.
    pub ctime: i64,
    /// Access time, ns since the epoch.
    pub atime: i64,
    /// A directory's own status tree.
    pub subtree: Option<Id>,
}

/// A directory's status tree: one entry per entry of its tree, in the same order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusTree {
    /// The entries.
    pub entries: Vec<EntryStatus>,
}

impl StatusTree {
    /// The status of `tree`'s entries (sorted, as stored).
    pub fn of(tree: &Tree) -> StatusTree {
        let entries = tree
            .nodes
            .iter()
            .map(|node| EntryStatus {
                ino: node.ino,
                ctime: node.ctime,
                atime: node.atime,
                subtree: node.status_tree,
            })
            .collect();
        StatusTree { entries }
    }

    /// The status trees of the directory's subdirectories, in entry order.
    pub fn subtrees(&self) -> impl Iterator<Item = Id> + '_ {
        self.entries.iter().filter_map(|e| e.subtree)
    }

    /// Gives `tree`'s entries (of version 2) their inode, ctime, atime and status subtree; false,
    /// leaving `tree` as it was, when this cannot be its status tree (another entry count, a
    /// status subtree on an entry that is not a directory).
    pub fn apply(&self, tree: &mut Tree) -> bool {
        let fits = tree.status == TreeStatus::Apart
            && self.entries.len() == tree.nodes.len()
            && self.entries.iter().zip(&tree.nodes).all(|(status, node)| {
                status.subtree.is_none() || matches!(node.content, Content::Subtree(_))
            });
        if !fits {
            return false;
        }
        for (status, node) in self.entries.iter().zip(&mut tree.nodes) {
            (node.ino, node.ctime, node.atime) = (status.ino, status.ctime, status.atime);
            node.status_tree = status.subtree;
        }
        tree.status = TreeStatus::Joined;
        true
    }

    /// The plaintext. Each of inode, ctime and atime is written as its difference from the
    /// previous entry's (the first from 0), zigzag-mapped, as a varint: the entries of one
    /// directory were mostly made together, so the differences are small and the status tree a
    /// few bytes an entry rather than 24.
    pub fn encode(&self) -> Vec<u8> {
        StatusTree::encode_each(self.entries.len(), self.entries.iter().copied())
    }

    /// The plaintext of a status tree of `count` entries, given one by one (as
    /// [`StatusTree::encode`] writes them): for a writer that holds its entries encoded, not as
    /// a list of statuses.
    pub fn encode_each(count: usize, entries: impl Iterator<Item = EntryStatus>) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(STATUS_VERSION);
        out.len(count);
        let mut previous = EntryStatus::default();
        for entry in entries {
            out.delta(entry.ino, previous.ino);
            out.delta(entry.ctime as u64, previous.ctime as u64);
            out.delta(entry.atime as u64, previous.atime as u64);
            match &entry.subtree {
                Some(id) => {
                    out.u8(1);
                    out.id(id);
                }
                None => out.u8(0),
            }
            previous = entry;
        }
        out.buf
    }

    /// Decodes and validates the plaintext.
    pub fn decode(bytes: &[u8]) -> Result<StatusTree, DecodeError> {
        let mut entries: Vec<EntryStatus> = Vec::new();
        StatusTree::decode_each(bytes, |entry, count| {
            entries.reserve_exact(count - entries.len());
            entries.push(entry);
        })?;
        Ok(StatusTree { entries })
    }

    /// Decodes and validates the plaintext as [`StatusTree::decode`] does, handing each entry
    /// to `each` with the number of entries, so that a reader needing one pass over them
    /// (prune's marking, which needs the subtrees) never holds them all decoded: 64 bytes an
    /// entry, a megabyte for a directory of 17,000. On an error, `each` has seen the entries
    /// before it.
    pub fn decode_each(
        bytes: &[u8],
        mut each: impl FnMut(EntryStatus, usize),
    ) -> Result<(), DecodeError> {
        let mut input = Reader::new(bytes);
        input.version(STATUS_VERSION)?;
        let count = input.count(4, "status entries")?;
        let mut previous = EntryStatus::default();
        for _ in 0..count {
            let ino = input.delta(previous.ino)?;
            let ctime = input.delta(previous.ctime as u64)? as i64;
            let atime = input.delta(previous.atime as u64)? as i64;
            let subtree = match input.u8()? {
                0 => None,
                1 => Some(input.id()?),
                other => return Err(DecodeError::invalid(format!("status flag {other}"))),
            };
            previous = EntryStatus { ino, ctime, atime, subtree };
            each(previous, count);
        }
        input.finish()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::format::{Node, NodeKind};

    fn status_strategy() -> impl Strategy<Value = StatusTree> {
        proptest::collection::vec(
            (any::<(u64, i64, i64)>(), proptest::option::of(any::<[u8; 32]>())),
            0..6,
        )
        .prop_map(|entries| StatusTree {
            entries: entries
                .into_iter()
                .map(|((ino, ctime, atime), sub)| EntryStatus {
                    ino,
                    ctime,
                    atime,
                    subtree: sub.map(Id),
                })
                .collect(),
        })
    }

    #[test]
    fn varints_are_short_for_close_values_and_refuse_padding() {
        let mut out = Writer::default();
        out.delta(1_000_007, 1_000_000);
        out.delta(5, 1_000_000);
        out.delta(u64::MAX, 0);
        out.delta(0, u64::MAX);
        out.delta(i64::MIN as u64, i64::MAX as u64);
        assert_eq!(out.buf[0], 14, "+7 is one byte");
        let mut input = Reader::new(&out.buf);
        assert_eq!(input.delta(1_000_000), Ok(1_000_007));
        assert_eq!(input.delta(1_000_000), Ok(5));
        assert_eq!(input.delta(0), Ok(u64::MAX));
        assert_eq!(input.delta(u64::MAX), Ok(0));
        assert_eq!(input.delta(i64::MAX as u64), Ok(i64::MIN as u64));
        assert!(input.finish().is_ok());
        assert!(Reader::new(&[0x80, 0x00]).varint().is_err(), "a padded zero");
        assert!(Reader::new(&[0xff; 10]).varint().is_err(), "beyond 64 bits");
        assert_eq!(
            Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).varint(),
            Ok(u64::MAX)
        );
    }

    proptest! {
        #[test]
        fn status_tree_round_trips(status in status_strategy()) {
            prop_assert_eq!(StatusTree::decode(&status.encode()), Ok(status));
        }

        #[test]
        fn mutated_status_tree_never_panics(status in status_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&status.encode(), at, byte, cut, StatusTree::decode);
        }

        #[test]
        fn entry_by_entry_decoding_agrees_with_whole_decoding(status in status_strategy(), cut in any::<usize>()) {
            // Whole and cut short: the same entries, the count told with each, the same error.
            let bytes = status.encode();
            for bytes in [&bytes[..], &bytes[..cut % (bytes.len() + 1)]] {
                let mut seen = Vec::new();
                let each = StatusTree::decode_each(bytes, |entry, count| seen.push((entry, count)));
                match StatusTree::decode(bytes) {
                    Ok(whole) => {
                        prop_assert_eq!(each, Ok(()));
                        let count = whole.entries.len();
                        let expected: Vec<_> = whole.entries.into_iter().map(|e| (e, count)).collect();
                        prop_assert_eq!(seen, expected);
                    }
                    Err(err) => prop_assert_eq!(each, Err(err)),
                }
            }
        }
    }

    fn dir_and_file(status: TreeStatus) -> Tree {
        let node = |name: &[u8], kind, content| Node {
            name: name.to_vec(),
            kind,
            ino: name[0].into(),
            ctime: 7,
            atime: 9,
            nlink: 1,
            content,
            ..Node::default()
        };
        Tree {
            nodes: vec![
                node(b"d", NodeKind::Dir, Content::Subtree(Id([2; 32]))),
                node(b"f", NodeKind::File, Content::Chunks(vec![])),
            ],
            status,
        }
    }

    #[test]
    fn a_tree_and_its_status_tree_join_into_what_was_written() {
        let mut written = dir_and_file(TreeStatus::Apart);
        written.nodes[0].status_tree = Some(Id([3; 32]));
        let status = StatusTree::of(&written);
        let mut read = Tree::decode(&written.encode()).unwrap();
        assert!(!read.status_known() && read.nodes[1].ino == 0);
        assert!(status.apply(&mut read));
        assert!(read.status_known());
        assert_eq!(read.nodes, written.nodes);
    }

    #[test]
    fn extreme_inodes_and_times_round_trip_and_join() {
        // Large inode jumps both ways, ctimes and atimes before the epoch, at the ends of i64
        // and jumping across them: every difference a full 64-bit wrap can make.
        let values = [
            (0, 0, 0),
            (u64::MAX, i64::MAX, i64::MIN),
            (1, i64::MIN, i64::MAX),
            (u64::MAX - 1, -1, -1_000_000_000_123),
            (1 << 63, 1, -1),
            ((1 << 63) - 1, -(1 << 62), i64::MIN + 1),
            (7, 1_795_659_498_593_137_338, -86_400_000_000_000),
        ];
        let entries: Vec<EntryStatus> = values
            .iter()
            .map(|&(ino, ctime, atime)| EntryStatus { ino, ctime, atime, subtree: None })
            .collect();
        let status = StatusTree { entries };
        assert_eq!(StatusTree::decode(&status.encode()), Ok(status.clone()));
        let file = |i: usize| Node {
            name: format!("f{i}").into_bytes(),
            kind: NodeKind::File,
            content: Content::Chunks(vec![]),
            ..Node::default()
        };
        let mut tree =
            Tree { nodes: (0..values.len()).map(file).collect(), status: TreeStatus::Apart };
        assert!(status.apply(&mut tree));
        let joined: Vec<_> = tree.nodes.iter().map(|n| (n.ino, n.ctime, n.atime)).collect();
        assert_eq!(joined, values);
    }

    #[test]
    fn a_status_tree_that_does_not_fit_is_not_applied() {
        let mut tree = dir_and_file(TreeStatus::Apart);
        let short = StatusTree { entries: vec![EntryStatus::default()] };
        assert!(!short.apply(&mut tree));
        let sub = Some(Id([1; 32]));
        let misplaced = StatusTree {
            entries: vec![
                EntryStatus::default(),
                EntryStatus { subtree: sub, ..Default::default() },
            ],
        };
        assert!(!misplaced.apply(&mut tree));
        assert_eq!(tree, dir_and_file(TreeStatus::Apart), "left as it was");
        let mut inline = dir_and_file(TreeStatus::Inline);
        assert!(
            !StatusTree::of(&inline.clone()).apply(&mut inline),
            "a version-1 tree has its own"
        );
    }
}
