//! An index over a walked tree for the analyses that reason about directories: which node is a
//! file (and which walked entry), each node's children sorted by name, and a pre-order numbering
//! in which every subtree is one contiguous range. Built in O(n log n) with 16 bytes per node;
//! the arena gives parents, and since a parent is always added before its children, walking the
//! node indices backwards visits children before their parents.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_scan::NodeId;

use crate::tree::Tree;

/// No file, no node.
pub(crate) const NONE: u32 = u32::MAX;

/// The index.
pub(crate) struct Nodes {
    /// Per node, the index of its entry in `Tree::files`, or `NONE` for a directory.
    file_of: Vec<u32>,
    /// Children of node `i` are `children[child_start[i]..child_start[i + 1]]`, sorted by name.
    child_start: Vec<u32>,
    children: Vec<u32>,
    /// Position of each node in the pre-order, and the nodes in that order.
    pre: Vec<u32>,
    order: Vec<u32>,
    /// Root nodes, in the order of the root arguments, with their root index.
    roots: Vec<(u32, u32)>,
}

impl Nodes {
    /// Index `tree`.
    pub fn new(tree: &Tree) -> Nodes {
        let n = tree.arena.len();
        let mut file_of = vec![NONE; n];
        for (i, f) in tree.files.iter().enumerate() {
            // A directory entry reached twice has two nodes; each node is one entry.
            file_of[f.node.index()] = i as u32;
        }
        let mut child_start = vec![0u32; n + 1];
        for i in 0..n {
            if let Some(p) = tree.arena.parent(NodeId::from_index(i)) {
                child_start[p.index() + 1] += 1;
            }
        }
        for i in 0..n {
            child_start[i + 1] += child_start[i];
        }
        let mut fill = child_start.clone();
        let mut children = vec![0u32; child_start[n] as usize];
        for i in 0..n {
            if let Some(p) = tree.arena.parent(NodeId::from_index(i)) {
                children[fill[p.index()] as usize] = i as u32;
                fill[p.index()] += 1;
            }
        }
        drop(fill);
        let name = |c: &u32| tree.arena.name(NodeId::from_index(*c as usize));
        for i in 0..n {
            let range = child_start[i] as usize..child_start[i + 1] as usize;
            children[range].sort_unstable_by(|a, b| name(a).cmp(name(b)));
        }
        let roots: Vec<(u32, u32)> = tree
            .roots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.node.map(|node| (node.index() as u32, i as u32)))
            .collect();
        let mut nodes =
            Nodes { file_of, child_start, children, pre: vec![NONE; n], order: Vec::new(), roots };
        nodes.number();
        nodes
    }

    /// Number the nodes in pre-order (roots in argument order, children by name).
    fn number(&mut self) {
        let mut order = Vec::with_capacity(self.pre.len());
        let mut stack: Vec<u32> = self.roots.iter().rev().map(|r| r.0).collect();
        while let Some(node) = stack.pop() {
            self.pre[node as usize] = order.len() as u32;
            order.push(node);
            stack.extend(self.children(node).iter().rev());
        }
        self.order = order;
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.file_of.len()
    }

    /// The children of a node, sorted by name.
    pub fn children(&self, node: u32) -> &[u32] {
        let i = node as usize;
        &self.children[self.child_start[i] as usize..self.child_start[i + 1] as usize]
    }

    /// The walked entry of a file node, or `None` for a directory.
    pub fn file(&self, node: u32) -> Option<usize> {
        let f = self.file_of[node as usize];
        (f != NONE).then_some(f as usize)
    }

    /// The root nodes and their root index, in argument order.
    pub fn roots(&self) -> &[(u32, u32)] {
        &self.roots
    }

    /// Pre-order position of a node (`NONE` when it lies under no walked root).
    pub fn pre(&self, node: u32) -> u32 {
        self.pre[node as usize]
    }

    /// The nodes of the subtree of `node` (itself first), in pre-order.
    pub fn subtree(&self, node: u32) -> &[u32] {
        let start = self.pre[node as usize] as usize;
        &self.order[start..start + self.subtree_len(node)]
    }

    fn subtree_len(&self, node: u32) -> usize {
        // The subtree ends where the next node not below it starts: the pre-order position of the
        // nearest following sibling of node or of one of its ancestors. Computing it from the
        // order itself keeps the index at 16 bytes per node.
        let start = self.pre[node as usize] as usize;
        let mut end = start + 1;
        let mut cur = node;
        loop {
            let kids = self.children(cur);
            match kids.last() {
                Some(&last) => cur = last,
                None => break,
            }
            end = self.pre[cur as usize] as usize + 1;
        }
        end - start
    }

    /// True when `inner` lies in the subtree of `outer` (or is it).
    pub fn contains(&self, outer: u32, inner: u32) -> bool {
        let (o, i) = (self.pre[outer as usize], self.pre[inner as usize]);
        o != NONE && i != NONE && o <= i && (i as usize) < o as usize + self.subtree_len(outer)
    }

    /// The pre-order range `[start, end)` of a subtree.
    pub fn range(&self, node: u32) -> (u32, u32) {
        let start = self.pre[node as usize];
        (start, start + self.subtree_len(node) as u32)
    }

    /// The node at a pre-order position.
    pub fn at(&self, pre: u32) -> u32 {
        self.order[pre as usize]
    }

    /// The node a problem's path names, or the deepest directory on the way to it that the walk
    /// recorded (a file that could not be statted has no node; its directory does).
    pub fn resolve(&self, tree: &Tree, path: &Path, roots: &HashMap<&[u8], u32>) -> Option<u32> {
        let bytes = path.as_os_str().as_bytes();
        // The longest root path that is a prefix of the problem's path, at a component boundary.
        let mut best: Option<(usize, u32)> = None;
        for (&root, &node) in roots {
            let fits = bytes.starts_with(root)
                && (bytes.len() == root.len() || bytes[root.len()] == b'/' || root.ends_with(b"/"));
            if fits && best.is_none_or(|(len, _)| root.len() > len) {
                best = Some((root.len(), node));
            }
        }
        let (len, mut node) = best?;
        for name in bytes[len..].split(|&b| b == b'/').filter(|n| !n.is_empty()) {
            let kids = self.children(node);
            let arena_name = |c: &u32| tree.arena.name(NodeId::from_index(*c as usize));
            match kids.binary_search_by(|c| arena_name(c).cmp(name)) {
                Ok(i) => node = kids[i],
                Err(_) => break,
            }
        }
        Some(node)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Build a tree by hand: `dirs` are paths of directories below root `r`, `files` paths of
    /// files with their sizes; every file gets its own inode unless it names one in `inode`.
    pub(crate) fn tree(entries: &[(&str, Option<u64>)]) -> Tree {
        crate::testtree::build(entries)
    }

    #[test]
    fn children_are_sorted_and_subtrees_contiguous() {
        let t = tree(&[("b/x", Some(1)), ("a/y", Some(2)), ("a/z/w", Some(3)), ("c", None)]);
        let nodes = Nodes::new(&t);
        let root = nodes.roots()[0].0;
        let names: Vec<&[u8]> = nodes
            .children(root)
            .iter()
            .map(|&c| t.arena.name(NodeId::from_index(c as usize)))
            .collect();
        assert_eq!(names, [&b"a"[..], b"b", b"c"]);
        let a = nodes.children(root)[0];
        let paths: Vec<String> = nodes
            .subtree(a)
            .iter()
            .map(|&n| t.arena.path(NodeId::from_index(n as usize)).display().to_string())
            .collect();
        assert_eq!(paths, ["r/a", "r/a/y", "r/a/z", "r/a/z/w"]);
        assert!(nodes.contains(root, a));
        assert!(!nodes.contains(a, nodes.children(root)[1]));
        assert_eq!(nodes.subtree(root).len(), nodes.len());
    }

    #[test]
    fn problem_paths_resolve_to_the_deepest_known_node() {
        let t = tree(&[("a/y", Some(2)), ("a/z/w", Some(3))]);
        let nodes = Nodes::new(&t);
        let roots: HashMap<&[u8], u32> = [(&b"r"[..], nodes.roots()[0].0)].into_iter().collect();
        let n = nodes.resolve(&t, Path::new("r/a/z/gone"), &roots).unwrap();
        assert_eq!(t.arena.path(NodeId::from_index(n as usize)), Path::new("r/a/z"));
        let n = nodes.resolve(&t, Path::new("r/a/y"), &roots).unwrap();
        assert_eq!(nodes.file(n), Some(0));
        assert_eq!(nodes.resolve(&t, Path::new("elsewhere/a"), &roots), None);
    }
}
