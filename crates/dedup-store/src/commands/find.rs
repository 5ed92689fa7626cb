//! `find`: which snapshots hold an entry whose name or path matches a pattern (restic's
//! `find`), each match handed over with its snapshot as it is found. A subtree that does not
//! read is reported and the search goes on.

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

/// Searches `snapshots` in turn, handing each entry that `options` wants to `emit`.
pub fn find(
    repo: &Repository,
    snapshots: &[(Id, Snapshot)],
    options: &FindOptions,
    emit: &mut dyn FnMut(Found<'_>) -> Result<()>,
) -> Result<FindReport> {
    let index = repo.index()?;
    let mut report = FindReport::default();
    for (id, snapshot) in snapshots {
        let before = report.matches;
        let mut search = Search { repo, index: &index, options, report: &mut report };
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
}

impl Search<'_> {
    fn tree(
        &mut self,
        id: Id,
        path: &mut Vec<u8>,
        emit: &mut dyn FnMut(&[u8], &Node) -> Result<()>,
    ) -> Result<()> {
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
        Ok(())
    }
}
