//! Identical directories: same names, same structure, same file contents. Every directory gets a
//! class, bottom-up (node indices backwards visit children before parents): two directories are
//! in one class when their sorted child lists match name for name, files by content key (group or
//! inode, [`crate::analysis::content`]) and subdirectories by class, and their extra entries
//! ([`crate::analysis::extras`]) match too. A 128-bit hash of the child list finds the candidate class in a
//! hash map, and the child lists are then compared exactly, so a hash collision can only cost a
//! comparison, never merge two different directories. O(n) time after the index, a few dozen
//! bytes per node, no pairwise step.
//!
//! Directories holding no file are never duplicates, and a directory whose contents are not fully
//! known (a problem under it, the depth limit, an entry the walk did not keep) never is either.

use std::collections::HashMap;

use dedup_scan::NodeId;

use crate::tree::Tree;
use xxhash_rust::xxh3::xxh3_128;

use crate::analysis::content::{Content, Contents};
use crate::analysis::extras::Extra;
use crate::analysis::nodes::{Nodes, NONE};

/// Extra entries per directory: `None` when its contents are unknown.
pub(crate) type Extras = HashMap<u32, Option<Vec<(Vec<u8>, Extra)>>>;

/// Per-node facts computed bottom-up.
pub(crate) struct DirFacts {
    /// Class of each directory (the node index of its first member); `NONE` for files.
    pub class: Vec<u32>,
    /// Regular files in the subtree.
    pub files: Vec<u32>,
    /// Of those, files in a group.
    pub dup_files: Vec<u32>,
    /// Bytes of the files in the subtree.
    pub bytes: Vec<u64>,
    /// Levels of directories below (0 for a file or a directory without subdirectories).
    pub height: Vec<u32>,
    /// Contents not fully known.
    pub unknown: Vec<bool>,
}

struct Classify<'a> {
    tree: &'a Tree,
    nodes: &'a Nodes,
    contents: &'a Contents,
    extras: &'a Extras,
    facts: DirFacts,
}

impl DirFacts {
    /// Classify every directory. `unknown` marks nodes whose contents are not fully known.
    pub fn new(
        tree: &Tree,
        nodes: &Nodes,
        contents: &Contents,
        unknown: Vec<bool>,
        extras: &Extras,
    ) -> DirFacts {
        let n = nodes.len();
        let facts = DirFacts {
            class: vec![NONE; n],
            files: vec![0; n],
            dup_files: vec![0; n],
            bytes: vec![0; n],
            height: vec![0; n],
            unknown,
        };
        let mut c = Classify { tree, nodes, contents, extras, facts };
        c.run();
        c.facts
    }

    /// True when a directory may be reported as a duplicate.
    pub fn eligible(&self, node: u32) -> bool {
        let i = node as usize;
        self.class[i] != NONE && self.files[i] > 0 && !self.unknown[i]
    }
}

impl Classify<'_> {
    fn content(&self, node: u32) -> Option<Content> {
        self.nodes.file(node).map(|e| self.contents.of(self.tree, e))
    }

    fn name(&self, node: u32) -> &[u8] {
        self.tree.arena.name(NodeId::from_index(node as usize))
    }

    fn run(&mut self) {
        let mut sigs = vec![0u128; self.nodes.len()];
        let mut interned: HashMap<u128, u32> = HashMap::new();
        let mut collisions: Vec<(u128, u32)> = Vec::new();
        let mut buf = Vec::new();
        for node in (0..self.nodes.len() as u32).rev() {
            let i = node as usize;
            if let Some(entry) = self.nodes.file(node) {
                let content = self.contents.of(self.tree, entry);
                sigs[i] = xxh3_128(&content.bytes());
                self.facts.files[i] = 1;
                self.facts.dup_files[i] = u32::from(matches!(content, Content::Group(_)));
                self.facts.bytes[i] = self.tree.files[entry].meta.size;
                continue;
            }
            buf.clear();
            let f = &mut self.facts;
            for &c in self.nodes.children(node) {
                let ci = c as usize;
                let name = self.tree.arena.name(NodeId::from_index(ci));
                buf.extend_from_slice(&(name.len() as u32).to_le_bytes());
                buf.extend_from_slice(name);
                buf.push(u8::from(f.class[ci] == NONE));
                buf.extend_from_slice(&sigs[ci].to_le_bytes());
                f.files[i] += f.files[ci];
                f.dup_files[i] += f.dup_files[ci];
                f.bytes[i] += f.bytes[ci];
                f.unknown[i] |= f.unknown[ci];
                if f.class[ci] != NONE {
                    f.height[i] = f.height[i].max(f.height[ci] + 1);
                }
            }
            match self.extras.get(&node) {
                Some(None) => f.unknown[i] = true,
                Some(Some(list)) => {
                    for (name, extra) in list {
                        buf.push(2);
                        buf.extend_from_slice(&(name.len() as u32).to_le_bytes());
                        buf.extend_from_slice(name);
                        if let Extra::Symlink(target) = extra {
                            buf.push(3);
                            buf.extend_from_slice(&(target.len() as u32).to_le_bytes());
                            buf.extend_from_slice(target);
                        }
                    }
                }
                None => {}
            }
            let sig = xxh3_128(&buf);
            sigs[i] = sig;
            let class = match interned.get(&sig) {
                None => {
                    interned.insert(sig, node);
                    node
                }
                Some(&rep) if self.same(rep, node) => rep,
                Some(_) => {
                    let found = collisions
                        .iter()
                        .find(|&&(s, rep)| s == sig && self.same(rep, node))
                        .map(|&(_, rep)| rep);
                    found.unwrap_or_else(|| {
                        collisions.push((sig, node));
                        node
                    })
                }
            };
            self.facts.class[i] = class;
        }
    }

    /// Exact comparison of two directories whose children are classified already.
    fn same(&self, a: u32, b: u32) -> bool {
        let (ka, kb) = (self.nodes.children(a), self.nodes.children(b));
        ka.len() == kb.len()
            && ka.iter().zip(kb).all(|(&x, &y)| {
                self.name(x) == self.name(y)
                    && self.content(x) == self.content(y)
                    && self.facts.class[x as usize] == self.facts.class[y as usize]
            })
            && self.extras.get(&a) == self.extras.get(&b)
    }
}

/// Classes holding two or more eligible directories, each as its member nodes. A directory entry
/// reached twice (overlapping roots) counts once.
pub(crate) fn candidate_groups(tree: &Tree, facts: &DirFacts) -> Vec<Vec<u32>> {
    let mut members: Vec<(u32, u32)> = (0..facts.class.len() as u32)
        .filter(|&n| facts.eligible(n))
        .map(|n| (facts.class[n as usize], n))
        .collect();
    members.sort_unstable();
    let mut groups = Vec::new();
    for run in members.chunk_by(|a, b| a.0 == b.0).filter(|r| r.len() >= 2) {
        let mut seen = std::collections::HashSet::new();
        let group: Vec<u32> = run
            .iter()
            .map(|&(_, n)| n)
            .filter(|&n| {
                let key = tree.entry_key(NodeId::from_index(n as usize));
                key.0.is_none() || seen.insert((key.0, key.1.to_vec()))
            })
            .collect();
        if group.len() >= 2 {
            groups.push(group);
        }
    }
    groups
}

/// Order key of a node in the report: its root argument's index, then its path bytes.
pub(crate) fn report_key(tree: &Tree, nodes: &Nodes, node: u32) -> (u32, Vec<u8>) {
    let id = NodeId::from_index(node as usize);
    let root = tree.arena.root_of(id).index() as u32;
    let index = nodes.roots().iter().find(|r| r.0 == root).map_or(u32::MAX, |r| r.1);
    let mut path = Vec::new();
    tree.arena.write_path(id, &mut path);
    (index, path)
}

/// A node's path as bytes.
pub(crate) fn path_bytes(tree: &Tree, node: u32) -> Vec<u8> {
    let mut path = Vec::new();
    tree.arena.write_path(NodeId::from_index(node as usize), &mut path);
    path
}

/// A node's path as text (for tests).
#[cfg(test)]
pub(crate) fn path_text(tree: &Tree, node: u32) -> String {
    String::from_utf8_lossy(&path_bytes(tree, node)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::contained::choose;
    use crate::testtree::{build_linked, groups};

    fn analyse(entries: &[(&str, Option<u64>, Option<u64>)]) -> Vec<Vec<String>> {
        let mut t = build_linked(entries);
        let classes = groups(&mut t, false);
        let contents = Contents::new(&t, &classes);
        let nodes = Nodes::new(&t);
        let facts = DirFacts::new(&t, &nodes, &contents, vec![false; nodes.len()], &Extras::new());
        let chosen = choose(&t, &nodes, &contents, &facts, candidate_groups(&t, &facts));
        chosen.identical.iter().map(|g| g.iter().map(|&n| path_text(&t, n)).collect()).collect()
    }

    #[test]
    fn identical_trees_are_one_group_reported_at_the_top() {
        let got = analyse(&[
            ("a/x", Some(1), None),
            ("a/s/y", Some(2), None),
            ("b/x", Some(1), None),
            ("b/s/y", Some(2), None),
        ]);
        assert_eq!(got, [["r/a", "r/b"]]);
    }

    #[test]
    fn a_renamed_file_or_other_content_breaks_equality_but_not_of_equal_subdirectories() {
        // Renamed: not identical (a's files all exist in b, which `contained` reports).
        let renamed = analyse(&[
            ("a/x", Some(1), None),
            ("a/s/y", Some(2), None),
            ("b/z", Some(1), None),
            ("b/s/y", Some(2), None),
        ]);
        assert_eq!(renamed, Vec::<Vec<String>>::new());
        let other = analyse(&[
            ("a/x", Some(1), None),
            ("a/s/y", Some(2), None),
            ("b/x", Some(3), None),
            ("b/s/y", Some(2), None),
        ]);
        assert_eq!(other, [["r/a/s", "r/b/s"]]);
    }

    #[test]
    fn three_copies_make_one_group_and_empty_directories_none() {
        let got = analyse(&[
            ("a/x", Some(1), None),
            ("b/x", Some(1), None),
            ("c/x", Some(1), None),
            ("e1", None, None),
            ("e2", None, None),
        ]);
        assert_eq!(got, [["r/a", "r/b", "r/c"]]);
    }

    #[test]
    fn a_partial_third_copy_of_an_inner_directory_is_its_own_group() {
        let got = analyse(&[
            ("a/x", Some(1), None),
            ("a/s/y", Some(2), None),
            ("b/x", Some(1), None),
            ("b/s/y", Some(2), None),
            ("c/s/y", Some(2), None),
        ]);
        assert_eq!(got, vec![vec!["r/a", "r/b"], vec!["r/a/s", "r/c/s"]]);
    }

    #[test]
    fn hard_links_are_the_same_content() {
        let got = analyse(&[("a/x", Some(1), Some(7)), ("b/x", Some(1), Some(7))]);
        assert_eq!(got, [["r/a", "r/b"]]);
    }

    #[test]
    fn unknown_contents_are_never_duplicates() {
        let mut t = build_linked(&[("a/x", Some(1), None), ("b/x", Some(1), None)]);
        let classes = groups(&mut t, false);
        let contents = Contents::new(&t, &classes);
        let nodes = Nodes::new(&t);
        let b = nodes.children(nodes.roots()[0].0)[1];
        let mut extras = Extras::new();
        extras.insert(b, None);
        let facts = DirFacts::new(&t, &nodes, &contents, vec![false; nodes.len()], &extras);
        assert!(candidate_groups(&t, &facts).is_empty());
        assert!(facts.unknown[nodes.roots()[0].0 as usize]);
    }

    #[test]
    fn extras_must_match() {
        let mut t = build_linked(&[("a/x", Some(1), None), ("b/x", Some(1), None)]);
        let classes = groups(&mut t, false);
        let contents = Contents::new(&t, &classes);
        let nodes = Nodes::new(&t);
        let kids = nodes.children(nodes.roots()[0].0).to_vec();
        let mut extras = Extras::new();
        extras.insert(kids[0], Some(vec![(b"l".to_vec(), Extra::Symlink(b"x".to_vec()))]));
        extras.insert(kids[1], Some(vec![(b"l".to_vec(), Extra::Symlink(b"y".to_vec()))]));
        let facts = DirFacts::new(&t, &nodes, &contents, vec![false; nodes.len()], &extras);
        assert!(candidate_groups(&t, &facts).is_empty());
        extras.insert(kids[1], Some(vec![(b"l".to_vec(), Extra::Symlink(b"x".to_vec()))]));
        let facts = DirFacts::new(&t, &nodes, &contents, vec![false; nodes.len()], &extras);
        assert_eq!(candidate_groups(&t, &facts).len(), 1);
    }
}
