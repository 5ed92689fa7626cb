//! A compact store of every path a walk saw: one node per directory entry holding its parent and
//! its name, with all names in one byte buffer. A million paths cost about twelve bytes each plus
//! their names, instead of a `PathBuf` allocation holding the full path for every file.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// Index of one path in a [`PathArena`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// The index as a number, for side tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The node with this index (as returned by [`NodeId::index`]).
    pub fn from_index(index: usize) -> NodeId {
        NodeId(u32::try_from(index).expect("node index out of range"))
    }
}

const NO_PARENT: u32 = u32::MAX;

/// Paths as (parent, name) nodes. Roots are nodes without a parent whose name is the root path as
/// the user gave it, so joining names back up reproduces what the user would type.
#[derive(Debug, Default)]
pub struct PathArena {
    parents: Vec<u32>,
    name_ends: Vec<u64>,
    names: Vec<u8>,
}

impl PathArena {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// True when no path has been added.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    fn push(&mut self, parent: u32, name: &[u8]) -> NodeId {
        let id = u32::try_from(self.parents.len())
            .ok()
            .filter(|&i| i != NO_PARENT)
            .expect("dedup supports at most 4 billion paths in one run");
        self.names.extend_from_slice(name);
        self.parents.push(parent);
        self.name_ends.push(self.names.len() as u64);
        NodeId(id)
    }

    /// Add a root path (a path argument as given).
    pub fn add_root(&mut self, path: &[u8]) -> NodeId {
        self.push(NO_PARENT, path)
    }

    /// Add the entries of one directory at once; their ids are consecutive from the returned one.
    pub fn add_children<'a>(
        &mut self,
        parent: NodeId,
        names: impl IntoIterator<Item = &'a [u8]>,
    ) -> NodeId {
        let first = NodeId(self.parents.len() as u32);
        for name in names {
            self.push(parent.0, name);
        }
        first
    }

    /// The node's own name (for a root: the root path).
    pub fn name(&self, node: NodeId) -> &[u8] {
        let i = node.index();
        let start = if i == 0 { 0 } else { self.name_ends[i - 1] as usize };
        &self.names[start..self.name_ends[i] as usize]
    }

    /// The parent node, or `None` for a root.
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        let p = self.parents[node.index()];
        (p != NO_PARENT).then_some(NodeId(p))
    }

    /// The root a node lies under.
    pub fn root_of(&self, mut node: NodeId) -> NodeId {
        while let Some(p) = self.parent(node) {
            node = p;
        }
        node
    }

    /// Append the full path (root as given, then names joined by `/`) to `out`.
    pub fn write_path(&self, node: NodeId, out: &mut Vec<u8>) {
        // Most paths are shallow: their chain fits on the stack, with no allocation per path
        // (building 100,000 paths for the cache spent much of its time in malloc).
        const SHALLOW: usize = 32;
        let mut shallow = [NodeId(NO_PARENT); SHALLOW];
        let mut deep = Vec::new();
        let mut depth = 0;
        let mut cur = Some(node);
        while let Some(n) = cur {
            match shallow.get_mut(depth) {
                Some(slot) => *slot = n,
                None => deep.push(n),
            }
            depth += 1;
            cur = self.parent(n);
        }
        // Collected from the node up; written from the root down.
        let top_down = deep.iter().rev().chain(shallow[..depth.min(SHALLOW)].iter().rev());
        for (i, n) in top_down.enumerate() {
            if i > 0 && out.last() != Some(&b'/') {
                out.push(b'/');
            }
            out.extend_from_slice(self.name(*n));
        }
    }

    /// The full path of a node.
    pub fn path(&self, node: NodeId) -> PathBuf {
        // Room for a typical path up front: grown from empty, it was reallocated several times
        // per path, a large share of all the finder's allocations.
        let mut bytes = Vec::with_capacity(PATH_ROOM);
        self.write_path(node, &mut bytes);
        PathBuf::from(OsString::from_vec(bytes))
    }
}

/// Bytes reserved for a path before it is written: most paths of a real tree are shorter.
const PATH_ROOM: usize = 160;

/// Writes the paths of many nodes, reusing the path of the last parent: the files of one
/// directory are side by side in the arena, so written in the arena's order their paths share all
/// but the name, and each costs one name instead of a walk to the root.
#[derive(Debug)]
pub struct PathWriter<'a> {
    arena: &'a PathArena,
    parent: Option<NodeId>,
    parent_path: Vec<u8>,
}

impl<'a> PathWriter<'a> {
    /// A writer of paths of `arena`'s nodes.
    pub fn new(arena: &'a PathArena) -> PathWriter<'a> {
        PathWriter { arena, parent: None, parent_path: Vec::new() }
    }

    /// Append the full path of `node` to `out`, as [`PathArena::write_path`] does.
    pub fn write(&mut self, node: NodeId, out: &mut Vec<u8>) {
        let Some(parent) = self.arena.parent(node) else {
            return self.arena.write_path(node, out);
        };
        if self.parent != Some(parent) {
            self.parent_path.clear();
            self.arena.write_path(parent, &mut self.parent_path);
            self.parent = Some(parent);
        }
        out.extend_from_slice(&self.parent_path);
        if self.parent_path.last() != Some(&b'/') {
            out.push(b'/');
        }
        out.extend_from_slice(self.arena.name(node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_names_below_the_root_as_given() {
        let mut a = PathArena::default();
        let root = a.add_root(b".");
        let first = a.add_children(root, [&b"dir"[..], b"f"]);
        let dir = first;
        let f_in_dir = a.add_children(dir, [&b"x y"[..]]);
        assert_eq!(a.path(f_in_dir), PathBuf::from("./dir/x y"));
        assert_eq!(a.path(NodeId(first.0 + 1)), PathBuf::from("./f"));
        assert_eq!(a.root_of(f_in_dir), root);
        assert_eq!(a.parent(root), None);
    }

    #[test]
    fn the_writer_writes_what_write_path_writes_in_any_order() {
        let mut a = PathArena::default();
        for root in [&b"/"[..], b"rel/", b".", b"a\xffb"] {
            let root = a.add_root(root);
            let first = a.add_children(root, [&b"d"[..], b"f", b"g h"]);
            let inner = a.add_children(first, [&b"x"[..], b"y"]);
            a.add_children(inner, [&b"z"[..]]);
        }
        let nodes: Vec<NodeId> = (0..a.len()).map(NodeId::from_index).collect();
        let expected: Vec<Vec<u8>> = nodes
            .iter()
            .map(|&n| {
                let mut path = b"prefix".to_vec();
                a.write_path(n, &mut path);
                path
            })
            .collect();
        let mut writer = PathWriter::new(&a);
        // In order, backwards, and alternating between far apart nodes.
        let orders: [Vec<usize>; 3] = [
            (0..nodes.len()).collect(),
            (0..nodes.len()).rev().collect(),
            (0..nodes.len())
                .map(|i| if i % 2 == 0 { i / 2 } else { nodes.len() - 1 - i / 2 })
                .collect(),
        ];
        for order in orders {
            for i in order {
                let mut path = b"prefix".to_vec();
                writer.write(nodes[i], &mut path);
                assert_eq!(path, expected[i], "node {i}");
            }
        }
    }

    #[test]
    fn root_slash_is_not_doubled() {
        let mut a = PathArena::default();
        let root = a.add_root(b"/");
        let usr = a.add_children(root, [&b"usr"[..]]);
        assert_eq!(a.path(usr), PathBuf::from("/usr"));
    }

    #[test]
    fn deep_paths_are_joined_in_order() {
        // Deeper than the chain kept on the stack.
        for depth in [1, 31, 32, 33, 100] {
            let mut a = PathArena::default();
            let mut node = a.add_root(b"r");
            let mut expected = String::from("r");
            for level in 0..depth {
                let name = format!("d{level}");
                node = a.add_children(node, [name.as_bytes()]);
                expected = format!("{expected}/{name}");
            }
            let mut out = b"prefix:".to_vec();
            a.write_path(node, &mut out);
            assert_eq!(out, format!("prefix:{expected}").as_bytes(), "depth {depth}");
        }
    }

    #[test]
    fn names_may_hold_any_bytes() {
        let mut a = PathArena::default();
        let root = a.add_root(b"r");
        let n = a.add_children(root, [&b"\xff\n`*"[..]]);
        assert_eq!(a.name(n), b"\xff\n`*");
        let mut out = Vec::new();
        a.write_path(n, &mut out);
        assert_eq!(out, b"r/\xff\n`*");
    }
}
