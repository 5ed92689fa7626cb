//! One entry of a tree blob at a time, both ways: [`EntryView`] reads an entry in place (its
//! name, target, attributes and chunk ids stay borrowed from the plaintext) and [`EncodedEntry`]
//! holds a new entry already in its byte form. A directory of tens of thousands of entries then
//! costs its plaintext and a little per entry, not a decoded [`Node`] (about 300 bytes plus its
//! name and chunk list) per entry on each side of the backup's match.

use super::status_tree::EntryStatus;
use super::tree::{
    tree_version, valid_name, Content, Node, NodeKind, MAX_NAME, MAX_TARGET, MAX_XATTR_NAME,
    MAX_XATTR_VALUE,
};
use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

/// The entry flag of a tree of version 2 that says a link group follows.
const LINKED: u8 = 2;

/// What an entry holds besides metadata, borrowed from the plaintext.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentView<'a> {
    /// Nothing (symlinks, FIFOs, devices, sockets).
    None,
    /// A file's chunk ids, 32 bytes each, in order.
    Chunks(&'a [u8]),
    /// A directory's tree.
    Subtree(Id),
}

/// One decoded and validated tree entry whose variable parts are borrowed from the plaintext.
/// The fields mean what [`Node`]'s do; in a tree of version 2, before its status is joined,
/// ctime is 0, atime is mtime, and device and inode are 0 unless linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryView<'a> {
    /// The name.
    pub name: &'a [u8],
    /// The kind.
    pub kind: NodeKind,
    /// The file could not be read whole.
    pub incomplete: bool,
    /// Permission bits.
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
    pub target: &'a [u8],
    /// The attributes' encoded pairs (already checked: sorted, unique, named).
    xattrs: &'a [u8],
    xattr_count: usize,
    /// Chunks or subtree.
    pub content: ContentView<'a>,
}

impl<'a> EntryView<'a> {
    /// Decodes and validates the entry at `input`'s front, of a tree of version 1 (`inline`) or
    /// 2; `previous`: the entry before it, whose name must sort before this one's.
    pub fn decode(
        input: &mut Reader<'a>,
        inline: bool,
        previous: Option<&[u8]>,
    ) -> Result<Self, DecodeError> {
        let name = input.bytes(MAX_NAME, "name")?;
        // A name that could leave the directory it is restored into (`..`, `/`), name no
        // entry, or end a C string early is refused here, before anything acts on it.
        if !valid_name(name) {
            return Err(DecodeError::invalid(format!(
                "invalid name \"{}\" (empty, `.`, `..`, or holding `/` or NUL)",
                name.escape_ascii()
            )));
        }
        if let Some(last) = previous.filter(|last| *last >= name) {
            let how = if last == name { "repeated" } else { "out of order" };
            return Err(DecodeError::invalid(format!("entry \"{}\" {how}", name.escape_ascii())));
        }
        let kind = NodeKind::from_code(input.u8()?)?;
        let flags = input.u8()?;
        let known = if inline { 1 } else { 1 | LINKED };
        if flags & !known != 0 || (flags & LINKED != 0 && kind != NodeKind::File) {
            return Err(DecodeError::invalid(format!("entry flags {flags}")));
        }
        let mode = input.u32()?;
        if mode > 0o7777 {
            return Err(DecodeError::invalid(format!("mode {mode:o}")));
        }
        let (uid, gid, size) = (input.u32()?, input.u32()?, input.u64()?);
        let atime = if inline { input.i64()? } else { 0 };
        let mtime = input.i64()?;
        let ctime = if inline { input.i64()? } else { 0 };
        let (mut dev, mut ino, mut nlink) = (0, 0, 1);
        if inline || flags & LINKED != 0 {
            (dev, ino, nlink) = (input.u64()?, input.u64()?, input.u64()?);
            if !inline && nlink < 2 {
                return Err(DecodeError::invalid("a link group of fewer than two links"));
            }
        }
        let rdev = input.u64()?;
        let target = input.bytes(MAX_TARGET, "symlink target")?;
        let xattr_count = input.count(8, "xattrs")?;
        let xattrs = checked_xattrs(input, xattr_count)?;
        let content = match kind {
            NodeKind::File => {
                let count = input.count(32, "chunks")?;
                ContentView::Chunks(input.take(count * 32)?)
            }
            NodeKind::Dir => ContentView::Subtree(input.id()?),
            _ => ContentView::None,
        };
        Ok(EntryView {
            name,
            kind,
            incomplete: flags & 1 != 0,
            mode,
            uid,
            gid,
            size,
            atime: if inline { atime } else { mtime },
            mtime,
            ctime,
            dev,
            ino,
            nlink,
            rdev,
            target,
            xattrs,
            xattr_count,
            content,
        })
    }

    /// The entry's name at `input`'s front, nothing else read: for a search by name among
    /// entries already validated.
    pub fn name_at(mut input: Reader<'a>) -> Result<&'a [u8], DecodeError> {
        input.bytes(MAX_NAME, "name")
    }

    /// The chunk ids of a file.
    pub fn chunks(&self) -> impl Iterator<Item = Id> + 'a {
        let raw = match self.content {
            ContentView::Chunks(raw) => raw,
            _ => &[],
        };
        raw.chunks_exact(32).map(|id| Id(id.try_into().expect("32 bytes")))
    }

    /// Joins the entry's status from its status tree (version 2).
    pub fn with_status(mut self, status: &EntryStatus) -> Self {
        (self.ino, self.ctime, self.atime) = (status.ino, status.ctime, status.atime);
        self
    }

    /// The entry as an owned node (without a status tree: that comes from the status tree).
    pub fn to_node(&self) -> Node {
        let mut xattrs = Vec::with_capacity(self.xattr_count);
        let mut pairs = Reader::new(self.xattrs);
        for _ in 0..self.xattr_count {
            // Checked when decoded: the same reads succeed again.
            let name = pairs.bytes(MAX_XATTR_NAME, "xattr name").unwrap_or_default();
            let value = pairs.bytes(MAX_XATTR_VALUE, "xattr value").unwrap_or_default();
            xattrs.push((name.to_vec(), value.to_vec()));
        }
        Node {
            name: self.name.to_vec(),
            kind: self.kind,
            incomplete: self.incomplete,
            mode: self.mode,
            uid: self.uid,
            gid: self.gid,
            size: self.size,
            atime: self.atime,
            mtime: self.mtime,
            ctime: self.ctime,
            dev: self.dev,
            ino: self.ino,
            nlink: self.nlink,
            rdev: self.rdev,
            target: self.target.to_vec(),
            xattrs,
            content: match self.content {
                ContentView::None => Content::None,
                ContentView::Chunks(_) => Content::Chunks(self.chunks().collect()),
                ContentView::Subtree(id) => Content::Subtree(id),
            },
            status_tree: None,
        }
    }
}

/// Reads `count` attribute pairs, checking they are named, sorted and unique; returns the bytes
/// they span.
fn checked_xattrs<'a>(input: &mut Reader<'a>, count: usize) -> Result<&'a [u8], DecodeError> {
    let start = input.rest();
    let mut last: Option<&[u8]> = None;
    for _ in 0..count {
        let name = input.bytes(MAX_XATTR_NAME, "xattr name")?;
        input.bytes(MAX_XATTR_VALUE, "xattr value")?;
        if last.is_some_and(|last| last >= name) || name.is_empty() {
            return Err(DecodeError::invalid("xattrs out of order, repeated or unnamed"));
        }
        last = Some(name);
    }
    Ok(&start[..start.len() - input.rest().len()])
}

/// Appends `node`'s entry to a tree of version 1 (`inline`: its status in the entry) or 2.
pub(super) fn encode_entry(node: &Node, inline: bool, out: &mut Writer) {
    out.bytes(&node.name);
    out.u8(node.kind.code());
    let linked = !inline && node.linked();
    out.u8(u8::from(node.incomplete) | if linked { LINKED } else { 0 });
    out.u32(node.mode);
    out.u32(node.uid);
    out.u32(node.gid);
    out.u64(node.size);
    if inline {
        out.i64(node.atime);
    }
    out.i64(node.mtime);
    if inline {
        out.i64(node.ctime);
    }
    if inline || linked {
        out.u64(node.dev);
        out.u64(node.ino);
        out.u64(node.nlink);
    }
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

/// A new directory entry in its tree's byte form, with its status (what a tree of version 2
/// keeps in the status tree) after it: what a directory being backed up holds for each child
/// until its tree is written, instead of the child's [`Node`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedEntry {
    /// The entry's bytes, then its status: inode, ctime, atime, and a status subtree's id.
    bytes: Box<[u8]>,
    entry_len: u32,
}

impl EncodedEntry {
    /// `node` encoded for a tree of version 1 (`inline`) or 2.
    pub fn new(node: &Node, inline: bool) -> Self {
        let mut out = Writer::default();
        encode_entry(node, inline, &mut out);
        let entry_len = u32::try_from(out.buf.len()).unwrap_or(u32::MAX);
        out.u64(node.ino);
        out.i64(node.ctime);
        out.i64(node.atime);
        if let Some(id) = &node.status_tree {
            out.id(id);
        }
        EncodedEntry { bytes: out.buf.into_boxed_slice(), entry_len }
    }

    /// The entry's name.
    pub fn name(&self) -> &[u8] {
        // An entry starts with its name's `u32` length and bytes, written by `new`.
        let len = u32::from_le_bytes(self.bytes[..4].try_into().expect("4 bytes")) as usize;
        &self.bytes[4..4 + len]
    }

    fn entry(&self) -> &[u8] {
        &self.bytes[..self.entry_len as usize]
    }

    /// The status a tree of version 2 keeps apart.
    pub fn status(&self) -> EntryStatus {
        let tail = &self.bytes[self.entry_len as usize..];
        let word = |at: usize| u64::from_le_bytes(tail[at..at + 8].try_into().expect("8 bytes"));
        EntryStatus {
            ino: word(0),
            ctime: word(8) as i64,
            atime: word(16) as i64,
            subtree: tail.get(24..56).map(|id| Id(id.try_into().expect("32 bytes"))),
        }
    }
}

/// The plaintext of a tree of version 1 (`inline`) or 2 holding `entries`, which this sorts by
/// name; the same bytes [`super::Tree::encode`] makes of the same nodes. Names in a directory
/// are unique, so an unstable sort gives the one order.
pub fn encode_entries(entries: &mut [EncodedEntry], inline: bool) -> Vec<u8> {
    entries.sort_unstable_by(|a, b| a.name().cmp(b.name()));
    let total: usize = entries.iter().map(|e| e.entry_len as usize).sum();
    let mut out = Writer { buf: Vec::with_capacity(5 + total) };
    out.u8(tree_version(inline));
    out.len(entries.len());
    for entry in entries.iter() {
        out.raw(entry.entry());
    }
    out.buf
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::format::{StatusTree, Tree, TreeStatus};

    proptest! {
        #[test]
        fn entries_encoded_one_by_one_make_the_trees_bytes(
            tree in crate::format::tree::tests::tree_strategy(),
            inline in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let status = if inline { TreeStatus::Inline } else { TreeStatus::Joined };
            let tree = Tree { status, ..tree };
            // The children arrive in any order (the walk's, the file stage's).
            let mut entries: Vec<EncodedEntry> =
                tree.nodes.iter().map(|n| EncodedEntry::new(n, inline)).collect();
            let n = entries.len().max(1) as u64;
            for i in 0..entries.len() {
                let j = ((seed.wrapping_mul(i as u64 + 7)) % n) as usize;
                entries.swap(i, j);
            }
            prop_assert_eq!(encode_entries(&mut entries, inline), tree.encode());
            let statuses: Vec<EntryStatus> = entries.iter().map(EncodedEntry::status).collect();
            prop_assert_eq!(StatusTree { entries: statuses }, StatusTree::of(&tree));
        }

        #[test]
        fn a_view_decodes_what_the_node_decoder_does(
            tree in crate::format::tree::tests::tree_strategy(),
            inline in any::<bool>(),
        ) {
            let status = if inline { TreeStatus::Inline } else { TreeStatus::Apart };
            let bytes = Tree { status, ..tree }.encode();
            let decoded = Tree::decode(&bytes).expect("decodes");
            let mut input = Reader::new(&bytes[5..]);
            let mut previous = None;
            for node in &decoded.nodes {
                let view = EntryView::decode(&mut input, inline, previous).expect("decodes");
                prop_assert_eq!(&view.to_node(), node);
                previous = Some(view.name);
            }
            prop_assert!(input.finish().is_ok());
        }
    }
}
