//! `--summary`: where the duplicated bytes are, per top-level directory (each directory directly
//! below a root argument; files lying directly in a root count for the root itself). For each:
//! its files that have a copy anywhere, the bytes that deduplicating it would free, the bytes
//! duplicated within it only, and which other top-level directories hold copies of its files.
//!
//! One pass over the groups; a group touching k top-level directories costs k² for the pairs,
//! so groups spread over more than [`MAX_PAIRED`] of them count in the totals only.

use std::collections::HashMap;

use dedup_report::{DirSummary, SharedWith};
use dedup_scan::NodeId;

use crate::tree::Tree;

use crate::analysis::nodes::Nodes;
use crate::stages::candidates::Class;

/// Groups in more top-level directories than this are left out of `shared_with`.
const MAX_PAIRED: usize = 64;

#[derive(Default)]
struct Totals {
    files: u64,
    bytes: u64,
    reclaimable: u64,
    internal: u64,
}

/// The top-level directory of every node.
fn tops(tree: &Tree, nodes: &Nodes) -> Vec<u32> {
    let mut top = vec![0u32; nodes.len()];
    for i in 0..nodes.len() {
        let node = NodeId::from_index(i);
        top[i] = match tree.arena.parent(node) {
            None => i as u32,
            Some(p) if tree.arena.parent(p).is_none() => {
                if nodes.file(i as u32).is_some() {
                    p.index() as u32
                } else {
                    i as u32
                }
            }
            Some(p) => top[p.index()],
        };
    }
    top
}

/// The summary, most reclaimable bytes first.
pub(crate) fn summarise(
    tree: &Tree,
    nodes: &Nodes,
    classes: &[Class],
    hardlinks: bool,
) -> Vec<DirSummary> {
    let top = tops(tree, nodes);
    let mut totals: HashMap<u32, Totals> = HashMap::new();
    let mut pairs: HashMap<(u32, u32), u64> = HashMap::new();
    let mut here: Vec<(u32, u64)> = Vec::new();
    for class in classes {
        here.clear();
        for inode in &class.inodes {
            let units: Vec<usize> =
                if hardlinks { inode.paths().collect() } else { vec![inode.first()] };
            for e in units {
                let t = top[tree.files[e].node.index()];
                match here.iter_mut().find(|(x, _)| *x == t) {
                    Some((_, n)) => *n += 1,
                    None => here.push((t, 1)),
                }
            }
        }
        let spread = here.len() > 1;
        for &(t, n) in &here {
            let s = totals.entry(t).or_default();
            s.files += n;
            s.bytes += n * class.size;
            if spread {
                s.reclaimable += n * class.size;
            } else {
                s.reclaimable += (n - 1) * class.size;
                s.internal += (n - 1) * class.size;
            }
        }
        if spread && here.len() <= MAX_PAIRED {
            for &(t, n) in &here {
                for &(u, _) in &here {
                    if u != t {
                        *pairs.entry((t, u)).or_default() += n * class.size;
                    }
                }
            }
        }
    }
    let path = |n: u32| tree.arena.path(NodeId::from_index(n as usize));
    let mut shared: HashMap<u32, Vec<SharedWith>> = HashMap::new();
    for ((t, u), bytes) in pairs {
        shared.entry(t).or_default().push(SharedWith { path: path(u), bytes });
    }
    let mut out: Vec<DirSummary> = totals
        .into_iter()
        .map(|(t, s)| {
            let mut with = shared.remove(&t).unwrap_or_default();
            with.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.path.cmp(&b.path)));
            DirSummary {
                path: path(t),
                duplicated_files: s.files,
                duplicated_bytes: s.bytes,
                reclaimable_bytes: s.reclaimable,
                internal_bytes: s.internal,
                shared_with: with,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.reclaimable_bytes.cmp(&a.reclaimable_bytes).then_with(|| a.path.cmp(&b.path))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testtree::{build_linked, groups};

    #[test]
    fn bytes_are_counted_per_top_level_directory() {
        let mut t = build_linked(&[
            ("photos/a", Some(100), None),
            ("photos/sub/b", Some(100), None),
            ("backup/a", Some(100), None),
            ("backup/c", Some(10), None),
            ("music/x", Some(10), None),
            ("music/y", Some(7), None),
            ("top", Some(7), None),
        ]);
        let classes = groups(&mut t, false);
        let nodes = Nodes::new(&t);
        let got = summarise(&t, &nodes, &classes, false);
        let row = |p: &str| got.iter().find(|s| s.path.to_str() == Some(p)).unwrap();
        assert_eq!(got[0].path.to_str(), Some("r/photos"));
        let photos = row("r/photos");
        assert_eq!((photos.duplicated_files, photos.duplicated_bytes), (2, 200));
        assert_eq!((photos.reclaimable_bytes, photos.internal_bytes), (200, 0));
        assert_eq!(photos.shared_with, [SharedWith { path: "r/backup".into(), bytes: 200 }]);
        let backup = row("r/backup");
        assert_eq!(backup.reclaimable_bytes, 110);
        assert_eq!(backup.shared_with.len(), 2);
        assert_eq!(backup.shared_with[0], SharedWith { path: "r/photos".into(), bytes: 100 });
        // Files directly in the root count for the root.
        assert_eq!(row("r").shared_with, [SharedWith { path: "r/music".into(), bytes: 7 }]);
        assert_eq!(got.len(), 4);
    }
}
