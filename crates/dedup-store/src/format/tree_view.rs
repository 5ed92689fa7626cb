//! A tree blob kept as its plaintext with each entry's offset, its entries decoded one at a time
//! when asked for by name: the backup's view of a parent directory while it matches the
//! directory's listing, a few bytes an entry beyond the plaintext where decoded [`Node`]s cost
//! hundreds.

use super::status_tree::{EntryStatus, StatusTree};
use super::tree::{tree_version, Node, NodeKind};
use super::tree_entry::EntryView;
use super::wire::Reader;
use super::DecodeError;

/// A directory's entries read in place.
#[derive(Debug, Clone, Default)]
pub struct TreeView {
    plain: Vec<u8>,
    /// Where each entry starts in `plain`, in name order.
    offsets: Vec<u32>,
    /// Version 1: the status is in each entry.
    inline: bool,
    /// A version-2 tree's status tree, once joined.
    statuses: Option<Vec<EntryStatus>>,
}

impl TreeView {
    /// Validates the plaintext of a tree of version 1 or 2 as [`super::Tree::decode`] does, and
    /// keeps it.
    pub fn decode(plain: Vec<u8>) -> Result<TreeView, DecodeError> {
        let mut input = Reader::new(&plain);
        let inline = input.version_in(1..=2)? == tree_version(true);
        let count = input.count(super::tree::min_entry_len(inline), "entries")?;
        let mut offsets = Vec::with_capacity(count);
        let mut previous: Option<&[u8]> = None;
        for _ in 0..count {
            let at = plain.len() - input.rest().len();
            offsets.push(u32::try_from(at).map_err(|_| DecodeError::invalid("tree too large"))?);
            previous = Some(EntryView::decode(&mut input, inline, previous)?.name);
        }
        input.finish()?;
        Ok(TreeView { plain, offsets, inline, statuses: None })
    }

    /// Whether the entries' ctime and inode are known (version 1, or joined with the status
    /// tree): only then can they prove a file unchanged.
    pub fn status_known(&self) -> bool {
        self.inline || self.statuses.is_some()
    }

    /// Joins a tree of version 2 with its status tree; false, leaving the status unknown, when
    /// `status` cannot be its status tree (the checks of [`StatusTree::apply`]).
    pub fn join(&mut self, status: StatusTree) -> bool {
        let fits = !self.inline
            && self.statuses.is_none()
            && status.entries.len() == self.offsets.len()
            && status.entries.iter().enumerate().all(|(i, status)| {
                status.subtree.is_none()
                    || self.decoded(i).is_some_and(|entry| entry.kind == NodeKind::Dir)
            });
        if fits {
            self.statuses = Some(status.entries);
        }
        fits
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    fn reader_at(&self, index: usize) -> Option<Reader<'_>> {
        let at = *self.offsets.get(index)? as usize;
        Some(Reader::new(self.plain.get(at..)?))
    }

    fn decoded(&self, index: usize) -> Option<EntryView<'_>> {
        // Validated by `decode`: this read succeeds again.
        EntryView::decode(&mut self.reader_at(index)?, self.inline, None).ok()
    }

    /// The index of the entry named `name`.
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        self.offsets
            .binary_search_by(|&at| {
                let entry = Reader::new(&self.plain[at as usize..]);
                EntryView::name_at(entry).unwrap_or_default().cmp(name)
            })
            .ok()
    }

    /// Entry `index`, with its status where joined.
    pub fn entry(&self, index: usize) -> Option<EntryView<'_>> {
        let entry = self.decoded(index)?;
        Some(match self.statuses.as_ref().and_then(|s| s.get(index)) {
            Some(status) => entry.with_status(status),
            None => entry,
        })
    }

    /// Entry `index` as a node, with its status and a directory's status tree where joined.
    pub fn node(&self, index: usize) -> Option<Node> {
        let mut node = self.entry(index)?.to_node();
        node.status_tree = self.statuses.as_ref().and_then(|s| s.get(index)?.subtree);
        Some(node)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::format::{Tree, TreeStatus};

    proptest! {
        #[test]
        fn a_view_finds_each_node_the_tree_holds(
            tree in crate::format::tree::tests::tree_strategy(),
            inline in any::<bool>(),
        ) {
            let status = if inline { TreeStatus::Inline } else { TreeStatus::Apart };
            let written = Tree { status, ..tree };
            let mut view = TreeView::decode(written.encode()).expect("decodes");
            let mut read = Tree::decode(&written.encode()).expect("decodes");
            if !inline {
                let joined = Tree { status: TreeStatus::Joined, ..written.clone() };
                let status = StatusTree::of(&joined);
                prop_assert!(status.apply(&mut read));
                prop_assert!(view.join(status));
            }
            prop_assert!(view.status_known());
            prop_assert_eq!(view.len(), read.nodes.len());
            for node in &read.nodes {
                let at = view.find(&node.name).expect("found");
                prop_assert_eq!(&view.node(at).expect("decodes"), node);
            }
            prop_assert_eq!(view.find(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), None);
        }

        #[test]
        fn a_damaged_view_is_refused_as_the_tree_is(
            tree in crate::format::tree::tests::tree_strategy(),
            apart in any::<bool>(),
            at in any::<usize>(),
            byte in 1u8..,
            cut in any::<usize>(),
        ) {
            let status = if apart { TreeStatus::Apart } else { TreeStatus::Inline };
            let mut bytes = Tree { status, ..tree }.encode();
            if !bytes.is_empty() {
                let at = at % bytes.len();
                bytes[at] = bytes[at].wrapping_add(byte);
                bytes.truncate(bytes.len() - cut % 2);
            }
            let view = TreeView::decode(bytes.clone());
            prop_assert_eq!(view.is_ok(), Tree::decode(&bytes).is_ok());
        }
    }

    #[test]
    fn a_status_tree_that_does_not_fit_leaves_the_status_unknown() {
        let file = |name: &[u8]| Node {
            name: name.to_vec(),
            content: crate::format::Content::Chunks(vec![]),
            ..Node::default()
        };
        let tree = Tree { nodes: vec![file(b"a"), file(b"b")], status: TreeStatus::Apart };
        let mut view = TreeView::decode(tree.encode()).unwrap();
        assert!(!view.status_known());
        let misplaced = StatusTree {
            entries: vec![
                EntryStatus::default(),
                EntryStatus { subtree: Some(crate::id::Id([1; 32])), ..Default::default() },
            ],
        };
        assert!(!view.join(misplaced));
        assert!(!view.join(StatusTree { entries: vec![EntryStatus::default()] }));
        assert!(!view.status_known());
        assert!(view.join(StatusTree { entries: vec![EntryStatus::default(); 2] }));
        assert!(view.status_known());
    }
}
