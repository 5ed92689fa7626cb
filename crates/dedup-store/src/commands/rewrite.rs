//! `rewrite`: snapshots without the entries that match patterns (a leaked secret), as restic's
//! `rewrite --exclude`. The trees on the way to each excluded entry are written anew and a new
//! snapshot records its original (docs/store-format.md §9); the original stays unless
//! `forget`, and is removed only once its replacement is written. The excluded data leaves the
//! repository with the next `prune`, once no snapshot refers to it.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::format::{Content, NodeKind, Snapshot, Tree};
use crate::id::Id;

use super::pattern::Patterns;
use super::tag::{derived, remove_snapshot};
use super::write_session::WriteSession;
use crate::repo::Repository;

/// What `rewrite` does.
#[derive(Debug, Clone)]
pub struct RewriteOptions {
    /// Entries whose name or path matches one of these are left out, with what is below them.
    pub excludes: Patterns,
    /// Remove each original once its replacement is written.
    pub forget: bool,
    /// Find what would be left out; write and remove nothing.
    pub dry_run: bool,
    /// The host named in the writer marker.
    pub host: String,
}

/// One snapshot rewritten (or that would be).
#[derive(Debug)]
pub struct Rewritten {
    /// The snapshot as it was.
    pub old: Id,
    /// Its replacement (none in a dry run).
    pub new: Option<Id>,
    /// The entries left out (paths from the root, with a leading `/`), in path order.
    pub excluded: Vec<Vec<u8>>,
    /// Whether the original was removed.
    pub forgotten: bool,
    /// Why the original could not be removed, when asked to (it stays beside its copy).
    pub old_kept: Option<crate::error::Error>,
}

/// What `rewrite` did.
#[derive(Debug, Default)]
pub struct RewriteReport {
    /// The snapshots that held a matching entry.
    pub rewritten: Vec<Rewritten>,
    /// Snapshots that held none: left alone.
    pub unchanged: u64,
}

/// Rewrites `snapshots` without the entries `options.excludes` matches.
pub fn rewrite(
    repo: &Repository,
    snapshots: &[(Id, Snapshot)],
    options: &RewriteOptions,
) -> Result<RewriteReport> {
    crate::deep_stack::on_deep_stack(|| rewrite_here(repo, snapshots, options))
}

/// [`rewrite`] on the stack at hand (its walk of the trees recurses).
fn rewrite_here(
    repo: &Repository,
    snapshots: &[(Id, Snapshot)],
    options: &RewriteOptions,
) -> Result<RewriteReport> {
    // Before anything is written: a copy that would hold nothing of what its snapshot saved is
    // a deletion, which is `forget`'s to make (and which `--forget` then `prune` make final).
    if let Some((id, snapshot)) =
        snapshots.iter().find(|(_, s)| leaves_nothing(&options.excludes, s))
    {
        let paths: Vec<_> = snapshot.paths.iter().map(|p| String::from_utf8_lossy(p)).collect();
        return Err(Error::Invalid(format!(
            "--exclude leaves nothing of snapshot {} (it matches {}, what the snapshot saved, or a \
             directory on the way to it): nothing was rewritten; to remove snapshots, `dedup store \
             forget` them",
            &id.to_hex()[..8],
            paths.join(", ")
        )));
    }
    let (present, _) = repo.snapshots()?;
    let session = WriteSession::begin(repo, &options.host, options.dry_run)?;
    let mut report = RewriteReport::default();
    let mut memo = HashMap::new();
    for (id, snapshot) in snapshots {
        let mut excluded = Vec::new();
        let mut pruner = Pruner {
            session: &session,
            patterns: &options.excludes,
            memo: &mut memo,
            excluded: &mut excluded,
            bytes: 0,
        };
        let root = (snapshot.tree, snapshot.status_tree);
        let new_root = pruner.tree(root, &mut Vec::new())?;
        let bytes = pruner.bytes;
        if new_root == root {
            report.unchanged += 1;
            continue;
        }
        let mut copy = derived(*id, snapshot);
        (copy.tree, copy.status_tree) = new_root;
        copy.summary.bytes_total = copy.summary.bytes_total.saturating_sub(bytes);
        let new = match present.iter().find(|(_, s)| *s == copy) {
            // Written by an earlier run that stopped before it removed the original.
            Some((found, _)) => Some(*found),
            None => session.commit(&copy)?,
        };
        let mut old_kept = None;
        let mut forgotten = false;
        if options.forget && new.is_some_and(|new| new != *id) {
            match remove_snapshot(repo, id) {
                Ok(()) => forgotten = true,
                Err(err) => old_kept = Some(err),
            }
        }
        report.rewritten.push(Rewritten { old: *id, new, excluded, forgotten, old_kept });
    }
    session.end()?;
    Ok(report)
}

/// Whether `patterns` leave out every path `snapshot` saved, each itself or with a directory
/// on the way to it, as the walk of its trees would decide it.
fn leaves_nothing(patterns: &Patterns, snapshot: &Snapshot) -> bool {
    let left_out = |path: &[u8]| {
        let ends = path.iter().enumerate().skip(1).filter(|(_, b)| **b == b'/').map(|(i, _)| i);
        ends.chain([path.len()]).any(|end| {
            let prefix = &path[..end];
            let name = prefix.rsplit(|b| *b == b'/').next().unwrap_or(prefix);
            !name.is_empty() && patterns.matches(prefix, name)
        })
    };
    !snapshot.paths.is_empty() && snapshot.paths.iter().all(|p| left_out(p))
}

/// A tree and its status tree.
type Root = (Id, Option<Id>);

/// Trees already rewritten: their new ids, what they left out (paths below them) and its size.
type Memo = HashMap<Root, (Root, Vec<Vec<u8>>, u64)>;

struct Pruner<'a, 'r> {
    session: &'a WriteSession<'r>,
    patterns: &'a Patterns,
    memo: &'a mut Memo,
    excluded: &'a mut Vec<Vec<u8>>,
    /// The size of the regular files left out.
    bytes: u64,
}

impl Pruner<'_, '_> {
    /// The tree `root` at `path` without what matches; itself when nothing does.
    fn tree(&mut self, root: Root, path: &mut Vec<u8>) -> Result<Root> {
        if let Some((new, below, bytes)) = self.memo.get(&root) {
            // A subtree shared between snapshots (or directories) is rewritten once; what it
            // left out is named under each path that reaches it.
            for rel in below {
                let mut full = path.clone();
                full.extend_from_slice(rel);
                self.excluded.push(full);
            }
            self.bytes += bytes;
            return Ok(*new);
        }
        let (first_excluded, bytes_before) = (self.excluded.len(), self.bytes);
        let sink = &self.session.sink;
        let tree = sink.read_tree_with_status(&root.0, root.1.as_ref())?;
        let mut nodes = Vec::with_capacity(tree.nodes.len());
        let mut changed = false;
        for mut node in tree.nodes.iter().cloned() {
            let len = path.len();
            path.push(b'/');
            path.extend_from_slice(&node.name);
            if self.patterns.matches(path, &node.name) {
                self.excluded.push(path.clone());
                self.bytes += self.size_of(&node)?;
                changed = true;
                path.truncate(len);
                continue;
            }
            if let Content::Subtree(sub) = node.content {
                let (new, status) = self.tree((sub, node.status_tree), path)?;
                if (new, status) != (sub, node.status_tree) {
                    (node.content, node.status_tree) = (Content::Subtree(new), status);
                    changed = true;
                }
            }
            path.truncate(len);
            nodes.push(node);
        }
        let new = match changed {
            false => root,
            true if tree.status_known() => sink.store_tree(Tree { nodes, status: tree.status })?,
            // Its status tree lost: the copy stays without one rather than claim a status.
            true => {
                let tree = Tree { nodes, status: tree.status };
                (sink.store(crate::blob::BlobKind::Tree, &tree.encode())?, None)
            }
        };
        let below = self.excluded[first_excluded..].iter().map(|p| p[path.len()..].to_vec());
        self.memo.insert(root, (new, below.collect(), self.bytes - bytes_before));
        Ok(new)
    }

    /// The size of the regular files at and below `node`.
    fn size_of(&self, node: &crate::format::Node) -> Result<u64> {
        match node.content {
            Content::Subtree(sub) => {
                let mut total = 0;
                let mut pending = vec![sub];
                while let Some(id) = pending.pop() {
                    for child in self.session.sink.read_tree(&id)?.nodes {
                        match child.content {
                            Content::Subtree(sub) => pending.push(sub),
                            _ if child.kind == NodeKind::File => total += child.size,
                            _ => {}
                        }
                    }
                }
                Ok(total)
            }
            _ if node.kind == NodeKind::File => Ok(node.size),
            _ => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::backend::LocalBackend;
    use crate::blob::BlobKind;
    use crate::format::{KdfParams, Node};
    use crate::index::Index;
    use crate::repo::{BlobSink, InitOptions};

    fn file(name: &str, chunk: Id, size: u64) -> Node {
        let content = Content::Chunks(vec![chunk]);
        Node {
            name: name.into(),
            kind: NodeKind::File,
            mode: 0o644,
            size,
            content,
            ..Node::default()
        }
    }

    fn dir(name: &str, (tree, status): (Id, Option<Id>)) -> Node {
        let content = Content::Subtree(tree);
        let kind = NodeKind::Dir;
        Node {
            name: name.into(),
            kind,
            mode: 0o755,
            content,
            status_tree: status,
            ..Node::default()
        }
    }

    /// A subtree that two directories (and two snapshots) share is rewritten once, and what it
    /// left out is named under every path that reaches it, with its size counted each time.
    #[test]
    fn a_shared_subtree_is_rewritten_once_and_named_under_each_path() {
        let tmp = tempfile::tempdir().unwrap();
        let options = InitOptions {
            kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
            ..InitOptions::default()
        };
        let repo =
            Repository::init(Arc::new(LocalBackend::new(tmp.path().join("r"))), options).unwrap();
        let sink = BlobSink::new(&repo, Index::new(), false);
        let chunk = sink.store(BlobKind::Data, b"secret bytes").unwrap();
        let shared = Tree {
            nodes: vec![file("keep", chunk, 1), file("secret", chunk, 12)],
            ..Tree::default()
        };
        let shared = sink.store_tree(shared).unwrap();
        let root = Tree { nodes: vec![dir("a", shared), dir("b", shared)], ..Tree::default() };
        let (tree, status_tree) = sink.store_tree(root).unwrap();
        sink.flush().unwrap();
        drop(sink);
        let base = Snapshot { tree, status_tree, host: "h".into(), ..Snapshot::default() };
        let mut snapshots = Vec::new();
        for time in [1, 2] {
            let mut snapshot = Snapshot { time, ..base.clone() };
            snapshot.summary.bytes_total = 26;
            snapshots.push((repo.save_snapshot(&snapshot).unwrap(), snapshot));
        }
        let options = RewriteOptions {
            excludes: Patterns::new(&[b"secret".to_vec()], false).unwrap(),
            forget: true,
            dry_run: false,
            host: "h".into(),
        };
        let report = rewrite(&repo, &snapshots, &options).unwrap();
        assert_eq!(report.rewritten.len(), 2);
        for (done, (old, _)) in report.rewritten.iter().zip(&snapshots) {
            assert_eq!(done.old, *old);
            assert_eq!(done.excluded, [b"/a/secret".to_vec(), b"/b/secret".to_vec()]);
            assert!(done.forgotten && done.old_kept.is_none());
            let new = repo.load_snapshot(&done.new.unwrap()).unwrap();
            assert_eq!(new.original, Some(*old));
            assert_eq!(new.summary.bytes_total, 2, "both secrets' 12 bytes taken off");
            let root = repo.tree(&new.tree).unwrap();
            let Content::Subtree(a) = root.nodes[0].content else { panic!("a is a directory") };
            let names: Vec<_> = repo.tree(&a).unwrap().nodes.into_iter().map(|n| n.name).collect();
            assert_eq!(names, [b"keep".to_vec()]);
        }
        let left = repo.list_snapshot_ids().unwrap();
        assert_eq!(left.len(), 2);
        assert!(snapshots.iter().all(|(old, _)| !left.contains(old)), "the originals are gone");
    }
}
