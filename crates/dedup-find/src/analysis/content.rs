//! What a walked file holds, as far as the finished groups tell: the group of identical files it
//! belongs to, or else its own inode (a file without a duplicate equals only its hard links).
//! The directory analyses compare these keys instead of bytes: the bytes were compared already.

use std::collections::HashMap;

use dedup_core::FileId;

use crate::tree::Tree;

use crate::analysis::nodes::NONE;
use crate::stages::candidates::Class;

/// The content of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Content {
    /// In the group with this index (of the classes given to [`Contents::new`]).
    Group(u32),
    /// In no group: equal only to the other names of this inode.
    Inode(FileId),
}

impl Content {
    /// A fixed-size encoding for hashing.
    pub fn bytes(self) -> [u8; 17] {
        let mut out = [0u8; 17];
        match self {
            Content::Group(g) => out[1..5].copy_from_slice(&g.to_le_bytes()),
            Content::Inode(id) => {
                out[0] = 1;
                out[1..9].copy_from_slice(&id.dev.to_le_bytes());
                out[9..17].copy_from_slice(&id.ino.to_le_bytes());
            }
        }
        out
    }
}

/// Content keys of every walked file.
pub(crate) struct Contents {
    /// Per walked entry, its group, or `NONE`.
    by_entry: Vec<u32>,
    /// Number of groups.
    groups: usize,
}

impl Contents {
    /// Index the final groups: 4 bytes per walked entry (and, while building, a map entry per
    /// grouped inode, so that an entry reached twice gets its twin's group).
    pub fn new(tree: &Tree, classes: &[Class]) -> Contents {
        let mut group_of = HashMap::new();
        for (g, class) in classes.iter().enumerate() {
            for inode in &class.inodes {
                group_of.insert(inode.meta(tree).id, g as u32);
            }
        }
        let by_entry = tree
            .files
            .iter()
            .map(|f| {
                if group_of.is_empty() {
                    NONE
                } else {
                    group_of.get(&f.meta.id).copied().unwrap_or(NONE)
                }
            })
            .collect();
        Contents { by_entry, groups: classes.len() }
    }

    /// The content of walked entry `entry`.
    pub fn of(&self, tree: &Tree, entry: usize) -> Content {
        match self.by_entry[entry] {
            NONE => Content::Inode(tree.files[entry].meta.id),
            g => Content::Group(g),
        }
    }

    /// True when the file is in a group (has an identical copy).
    pub fn grouped(&self, entry: usize) -> bool {
        self.by_entry[entry] != NONE
    }

    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testtree::{build_linked, groups};

    #[test]
    fn grouped_files_share_a_key_and_hard_links_share_theirs() {
        let mut t = build_linked(&[
            ("a", Some(5), None),
            ("b", Some(5), None),
            ("c", Some(7), Some(1)),
            ("d", Some(7), Some(1)),
            ("e", Some(9), None),
        ]);
        let classes = groups(&mut t, false);
        let contents = Contents::new(&t, &classes);
        let key = |name: &str| {
            let i = t.files.iter().position(|f| t.arena.name(f.node) == name.as_bytes()).unwrap();
            contents.of(&t, i)
        };
        assert_eq!(key("a"), key("b"));
        assert!(matches!(key("a"), Content::Group(_)));
        assert_eq!(key("c"), key("d"));
        assert!(matches!(key("c"), Content::Inode(_)));
        assert_ne!(key("e"), key("c"));
        assert_eq!(contents.group_count(), 1);
    }
}
