//! `find`: which snapshots hold an entry whose name or path matches a pattern (restic's
//! `find`), each match handed over with its snapshot as it is found. A subtree that does not
//! read is reported and the search goes on.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::format::{Content, Node, Snapshot};
use crate::id::Id;
use crate::index::Index;
use crate::repo::Repository;

use super::pattern::Patterns;

/// What `find` looks for.
#[derive(Debug, Clone)]
pub struct FindOptions {
    /// The entries' names or paths match one of these.
    pub patterns: Patterns,
    /// Only entries modified at or after this time (ns since the epoch).
    pub oldest: Option<i64>,
    /// Only entries modified at or before this time (ns since the epoch).
    pub newest: Option<i64>,
}

impl FindOptions {
    fn wants(&self, path: &[u8], node: &Node) -> bool {
        self.oldest.is_none_or(|t| node.mtime >= t)
            && self.newest.is_none_or(|t| node.mtime <= t)
            && self.patterns.matches(path, &node.name)
    }
}

/// One entry found.
pub struct Found<'a> {
    /// The snapshot that holds it.
    pub id: &'a Id,
    /// That snapshot.
    pub snapshot: &'a Snapshot,
    /// Its path from the snapshot's root, with a leading `/`.
    pub path: &'a [u8],
    /// The entry.
    pub node: &'a Node,
}

/// What a search found besides its matches.
#[derive(Debug, Default)]
pub struct FindReport {
    /// Entries found.
    pub matches: u64,
    /// Snapshots that held at least one.
    pub snapshots_matched: u64,
    /// Trees that could not be read (what is below them was not searched).
    pub problems: Vec<Error>,
}

impl FindReport {
    /// Whether every snapshot selected and every tree was searched, `unreadable` being the
    /// snapshots that could not be read: finding nothing is no error (restic's rule).
    pub fn complete(&self, unreadable: &[Error]) -> bool {
        unreadable.is_empty() && self.problems.is_empty()
    }
}

/// Searches `snapshots` in turn, handing each entry that `options` wants to `emit`.
pub fn find(
    repo: &Repository,
    snapshots: &[(Id, Snapshot)],
    options: &FindOptions,
    emit: &mut dyn FnMut(Found<'_>) -> Result<()>,
) -> Result<FindReport> {
    let index = repo.index()?;
    let mut report = FindReport::default();
    let mut barren = HashSet::new();
    for (id, snapshot) in snapshots {
        let before = report.matches;
        let mut search =
            Search { repo, index: &index, options, report: &mut report, barren: &mut barren };
        let mut visit = |path: &[u8], node: &Node| emit(Found { id, snapshot, path, node });
        search.tree(snapshot.tree, &mut Vec::new(), &mut visit)?;
        if report.matches > before {
            report.snapshots_matched += 1;
        }
    }
    Ok(report)
}

struct Search<'a> {
    repo: &'a Repository,
    index: &'a Index,
    options: &'a FindOptions,
    report: &'a mut FindReport,
    /// Subtrees searched whole without a match, by id and path (a pattern may name a path):
    /// the snapshots of a repository share most of their trees, and each is searched once per
    /// run, not once per snapshot.
    barren: &'a mut HashSet<(Id, Vec<u8>)>,
}

impl Search<'_> {
    fn tree(
        &mut self,
        id: Id,
        path: &mut Vec<u8>,
        emit: &mut dyn FnMut(&[u8], &Node) -> Result<()>,
    ) -> Result<()> {
        let key = (id, path.clone());
        if self.barren.contains(&key) {
            return Ok(());
        }
        let (matches, problems) = (self.report.matches, self.report.problems.len());
        let tree = match self.repo.read_tree(self.index, &id) {
            Ok(tree) => tree,
            Err(err) => {
                let shown = if path.is_empty() { b"/".as_slice() } else { path };
                let below = String::from_utf8_lossy(shown);
                self.report.problems.push(Error::Invalid(format!("{below}: not searched: {err}")));
                return Ok(());
            }
        };
        for node in &tree.nodes {
            let len = path.len();
            path.push(b'/');
            path.extend_from_slice(&node.name);
            if self.options.wants(path, node) {
                self.report.matches += 1;
                emit(path, node)?;
            }
            if let Content::Subtree(sub) = node.content {
                self.tree(sub, path, emit)?;
            }
            path.truncate(len);
        }
        if self.report.matches == matches && self.report.problems.len() == problems {
            self.barren.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::backend::LocalBackend;
    use crate::format::{KdfParams, NodeKind, Tree};
    use crate::index::Index;
    use crate::repo::{BlobSink, InitOptions};

    /// A subtree shared by `/a` and `/b` and by two snapshots: a pattern naming a path below
    /// `/b` is found there although `/a`, searched first, held no match; a name is found under
    /// both in each snapshot.
    #[test]
    fn a_shared_subtree_is_searched_under_each_path() {
        let tmp = tempfile::tempdir().unwrap();
        let options = InitOptions {
            kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
            ..InitOptions::default()
        };
        let backend = Arc::new(LocalBackend::new(tmp.path().join("r")));
        let repo = Repository::init(backend, options).unwrap();
        let sink = BlobSink::new(&repo, Index::new(), false);
        let content = Content::Chunks(Vec::new());
        let file = Node { name: b"f".to_vec(), kind: NodeKind::File, content, ..Node::default() };
        let (shared, _) = sink.store_tree(Tree { nodes: vec![file], ..Tree::default() }).unwrap();
        let dir = |name: &[u8]| Node {
            name: name.to_vec(),
            kind: NodeKind::Dir,
            content: Content::Subtree(shared),
            ..Node::default()
        };
        let root = Tree { nodes: vec![dir(b"a"), dir(b"b")], ..Tree::default() };
        let (tree, _) = sink.store_tree(root).unwrap();
        sink.flush().unwrap();
        drop(sink);
        let snapshots: Vec<_> = (1..=2)
            .map(|time| {
                let snapshot = Snapshot { time, tree, ..Snapshot::default() };
                (repo.save_snapshot(&snapshot).unwrap(), snapshot)
            })
            .collect();
        let search = |pattern: &[u8]| {
            let patterns = Patterns::new(&[pattern.to_vec()], false).unwrap();
            let options = FindOptions { patterns, oldest: None, newest: None };
            let mut found = Vec::new();
            let report = find(&repo, &snapshots, &options, &mut |hit| {
                found.push((hit.snapshot.time, hit.path.to_vec()));
                Ok(())
            })
            .unwrap();
            assert!(report.problems.is_empty(), "{:?}", report.problems);
            found
        };
        assert_eq!(search(b"/b/f"), [(1, b"/b/f".to_vec()), (2, b"/b/f".to_vec())]);
        let both = search(b"f");
        assert_eq!(both.len(), 4, "{both:?}");
        assert!(search(b"nothing").is_empty());
    }
}
