//! Tree blobs' plaintext: one directory's entries, sorted by name, each with its full metadata
//! and its content (a file's chunk ids, a directory's subtree id).

use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

/// Longest name (Linux's NAME_MAX).
pub const MAX_NAME: usize = 255;
const MAX_TARGET: usize = 1 << 16;
const MAX_XATTR_NAME: usize = 255;
const MAX_XATTR_VALUE: usize = 1 << 16;

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
    fn code(self) -> u8 {
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

    fn from_code(code: u8) -> Result<Self, DecodeError> {
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
}

/// A directory's entries, sorted by name bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tree {
    /// The entries.
    pub nodes: Vec<Node>,
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
    /// Sorts the entries by name, as the format requires.
    pub fn sort(&mut self) {
        self.nodes.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// The entry named `name`.
    pub fn find(&self, name: &[u8]) -> Option<&Node> {
        self.nodes.binary_search_by(|n| n.name.as_slice().cmp(name)).ok().map(|i| &self.nodes[i])
    }

    /// The plaintext; entries must be sorted and unique ([`Tree::sort`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(1);
        out.len(self.nodes.len());
        for node in &self.nodes {
            out.bytes(&node.name);
            out.u8(node.kind.code());
            out.u8(u8::from(node.incomplete));
            out.u32(node.mode);
            out.u32(node.uid);
            out.u32(node.gid);
            out.u64(node.size);
            out.i64(node.atime);
            out.i64(node.mtime);
            out.i64(node.ctime);
            out.u64(node.dev);
            out.u64(node.ino);
            out.u64(node.nlink);
            out.u64(node.rdev);
            out.bytes(&node.target);
            out.len(node.xattrs.len());
            for (name, value) in &node.xattrs {
                out.bytes(name);
                out.bytes(value);
            }
            match &node.content {
                Content::Chunks(ids) => {
                    out.len(ids.len());
                    for id in ids {
                        out.id(id);
                    }
                }
                Content::Subtree(id) => out.id(id),
                Content::None => {}
            }
        }
        out.buf
    }

    /// Decodes and validates the plaintext.
    pub fn decode(bytes: &[u8]) -> Result<Tree, DecodeError> {
        let mut input = Reader::new(bytes);
        input.version(1)?;
        let count = input.count(90, "entries")?;
        let mut nodes: Vec<Node> = Vec::with_capacity(count);
        for _ in 0..count {
            let name = input.bytes(MAX_NAME, "name")?.to_vec();
            if !valid_name(&name) {
                return Err(DecodeError::invalid(format!(
                    "invalid name {:?}",
                    String::from_utf8_lossy(&name)
                )));
            }
            if nodes.last().is_some_and(|last| last.name >= name) {
                return Err(DecodeError::invalid("entries out of order or repeated"));
            }
            let kind = NodeKind::from_code(input.u8()?)?;
            let incomplete = match input.u8()? {
                0 => false,
                1 => true,
                other => return Err(DecodeError::invalid(format!("entry flags {other}"))),
            };
            let mode = input.u32()?;
            if mode > 0o7777 {
                return Err(DecodeError::invalid(format!("mode {mode:o}")));
            }
            let mut node = Node {
                name,
                kind,
                incomplete,
                mode,
                uid: input.u32()?,
                gid: input.u32()?,
                size: input.u64()?,
                atime: input.i64()?,
                mtime: input.i64()?,
                ctime: input.i64()?,
                dev: input.u64()?,
                ino: input.u64()?,
                nlink: input.u64()?,
                rdev: input.u64()?,
                target: input.bytes(MAX_TARGET, "symlink target")?.to_vec(),
                ..Node::default()
            };
            let xattrs = input.count(8, "xattrs")?;
            for _ in 0..xattrs {
                let name = input.bytes(MAX_XATTR_NAME, "xattr name")?.to_vec();
                let value = input.bytes(MAX_XATTR_VALUE, "xattr value")?.to_vec();
                if node.xattrs.last().is_some_and(|(last, _)| *last >= name) || name.is_empty() {
                    return Err(DecodeError::invalid("xattrs out of order, repeated or unnamed"));
                }
                node.xattrs.push((name, value));
            }
            node.content = match kind {
                NodeKind::File => {
                    let count = input.count(32, "chunks")?;
                    Content::Chunks((0..count).map(|_| input.id()).collect::<Result<_, _>>()?)
                }
                NodeKind::Dir => Content::Subtree(input.id()?),
                _ => Content::None,
            };
            nodes.push(node);
        }
        input.finish()?;
        Ok(Tree { nodes })
    }
}

#[cfg(test)]
mod tests {
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
                    }
                },
            )
    }

    fn tree_strategy() -> impl Strategy<Value = Tree> {
        proptest::collection::vec(node_strategy(), 0..6).prop_map(|nodes| {
            let mut tree = Tree { nodes };
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
        fn mutated_tree_never_panics(tree in tree_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&tree.encode(), at, byte, cut, Tree::decode);
        }
    }

    #[test]
    fn names_that_escape_a_directory_are_refused() {
        for bad in [&b".."[..], b".", b"a/b", b"", b"a\0"] {
            let tree = Tree {
                nodes: vec![Node {
                    name: bad.to_vec(),
                    content: Content::Chunks(vec![]),
                    ..Node::default()
                }],
            };
            assert!(Tree::decode(&tree.encode()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn unsorted_entries_are_refused() {
        let node = |name: &[u8]| Node {
            name: name.to_vec(),
            content: Content::Chunks(vec![]),
            ..Node::default()
        };
        let tree = Tree { nodes: vec![node(b"b"), node(b"a")] };
        assert!(Tree::decode(&tree.encode()).is_err());
    }
}
