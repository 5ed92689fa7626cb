//! `copy`: snapshots from one repository into another (restic's `copy`). Every tree is written
//! anew in the destination's format; a file's chunks are carried over as they are when both
//! repositories cut the same way (same chunker and, where it is keyed, the same chunker key),
//! and cut again with the destination's chunker otherwise. Chunk ids are keyed per repository,
//! so a chunk is stored under the destination's id; one the destination already holds (under
//! the same id key) is neither read nor stored again. Each copy records its original
//! (docs/store-format.md §9): a snapshot whose original the destination already holds is
//! skipped, so that a second run copies only what is new.

use std::collections::HashMap;
use std::io::Read;

use crate::blob::BlobKind;
use crate::chunker::ChunkStream;
use crate::error::{Error, Result};
use crate::format::{ChunkerParams, Content, NodeKind, Snapshot, Tree};
use crate::id::Id;
use crate::index::Index;
use crate::repo::Repository;

use super::tag::derived;
use super::write_session::WriteSession;

/// One snapshot copied (or found copied already).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// The snapshot in the source repository.
    pub source: Id,
    /// Its copy in the destination.
    pub copy: Id,
}

/// What `copy` did.
#[derive(Debug, Default)]
pub struct CopyReport {
    /// Snapshots copied now.
    pub copied: Vec<Copied>,
    /// Snapshots the destination held a copy of already: skipped.
    pub skipped: Vec<Copied>,
    /// Whether files were cut again (the repositories chunk differently).
    pub rechunked: bool,
    /// Bytes added to the destination (as stored).
    pub bytes_added: u64,
}

/// The snapshot a snapshot stands for across repositories: its original, or itself.
fn origin(id: &Id, snapshot: &Snapshot) -> Id {
    snapshot.original.unwrap_or(*id)
}

/// Whether two repositories cut every file at the same places.
fn same_cuts(from: &Repository, to: &Repository) -> bool {
    let params = from.config().chunker;
    params == to.config().chunker
        && (matches!(params, ChunkerParams::Fixed { .. }) || *from.keys().gear == *to.keys().gear)
}

/// Copies `snapshots` of `from` into `to`, as a writing session of `host` there.
pub fn copy(
    from: &Repository,
    to: &Repository,
    snapshots: &[(Id, Snapshot)],
    host: &str,
) -> Result<CopyReport> {
    let (held, _) = to.snapshots()?;
    let held: HashMap<Id, Id> = held.iter().map(|(id, s)| (origin(id, s), *id)).collect();
    let mut report = CopyReport { rechunked: !same_cuts(from, to), ..CopyReport::default() };
    let pending: Vec<_> = snapshots
        .iter()
        .filter(|(id, s)| match held.get(&origin(id, s)) {
            Some(copy) => {
                report.skipped.push(Copied { source: *id, copy: *copy });
                false
            }
            None => true,
        })
        .collect();
    if pending.is_empty() {
        return Ok(report);
    }
    let session = WriteSession::begin(to, host, false)?;
    let index = from.index()?;
    let mut copier = Copier {
        from,
        index: &index,
        session: &session,
        rechunk: report.rechunked,
        same_ids: *from.keys().id == *to.keys().id,
        trees: HashMap::new(),
        chunks: HashMap::new(),
        files: HashMap::new(),
    };
    for (id, snapshot) in pending {
        let mut copy = derived(*id, snapshot);
        copy.parent = None;
        (copy.tree, copy.status_tree) = copier.tree((snapshot.tree, snapshot.status_tree))?;
        let new = session.commit(&copy)?.expect("a session that is not a dry run commits");
        report.copied.push(Copied { source: *id, copy: new });
    }
    report.bytes_added = session.sink.stats().bytes_added;
    session.end()?;
    Ok(report)
}

/// A tree and its status tree.
type Root = (Id, Option<Id>);

/// Entries the memos of chunks and of files cut again keep at most before they start afresh:
/// they only save reads (a chunk or file copied again is found stored by its id), so memory
/// stays bounded however many chunks a repository holds.
const MEMO_LIMIT: usize = 1 << 20;

/// Remembers `key -> value` in `memo`, emptied first when full.
fn remember<K: std::hash::Hash + Eq, V>(memo: &mut HashMap<K, V>, key: K, value: V) {
    if memo.len() >= MEMO_LIMIT {
        memo.clear();
    }
    memo.insert(key, value);
}

struct Copier<'a, 'r> {
    from: &'a Repository,
    index: &'a Index,
    session: &'a WriteSession<'r>,
    rechunk: bool,
    /// Both repositories key chunk ids alike: a chunk keeps its id.
    same_ids: bool,
    /// Trees copied: their ids in the destination.
    trees: HashMap<Root, Root>,
    /// Chunks carried over: their ids in the destination.
    chunks: HashMap<Id, Id>,
    /// Files cut again, by the hash of their chunk list in the source: their chunks in the
    /// destination (a file in many snapshots, or in many directories, is read once).
    files: HashMap<[u8; 32], Vec<Id>>,
}

impl Copier<'_, '_> {
    fn tree(&mut self, root: Root) -> Result<Root> {
        if let Some(done) = self.trees.get(&root) {
            return Ok(*done);
        }
        let mut tree = self.from.read_tree_with_status(self.index, &root.0, root.1.as_ref())?;
        for node in &mut tree.nodes {
            match &node.content {
                Content::Subtree(sub) => {
                    let (new, status) = self.tree((*sub, node.status_tree))?;
                    (node.content, node.status_tree) = (Content::Subtree(new), status);
                }
                Content::Chunks(chunks) if node.kind == NodeKind::File => {
                    node.content = Content::Chunks(self.file(chunks)?);
                }
                _ => {}
            }
        }
        let sink = &self.session.sink;
        let new = if tree.status_known() {
            sink.store_tree(Tree { nodes: tree.nodes, status: tree.status })?
        } else {
            // Its status tree lost in the source: the copy has none rather than claim one.
            let status = if self.session_status_trees() { tree.status } else { Default::default() };
            let tree = Tree { nodes: tree.nodes, status };
            (sink.store(BlobKind::Tree, &tree.encode())?, None)
        };
        remember(&mut self.trees, root, new);
        Ok(new)
    }

    fn session_status_trees(&self) -> bool {
        self.session.sink.repo().config().status_trees()
    }

    /// The destination's chunks of a file whose chunks in the source are `chunks`.
    fn file(&mut self, chunks: &[Id]) -> Result<Vec<Id>> {
        if !self.rechunk {
            return chunks.iter().map(|id| self.chunk(id)).collect();
        }
        let mut hasher = blake3::Hasher::new();
        chunks.iter().for_each(|id| {
            hasher.update(&id.0);
        });
        let key = *hasher.finalize().as_bytes();
        if let Some(done) = self.files.get(&key) {
            return Ok(done.clone());
        }
        let sink = &self.session.sink;
        let mut stream = ChunkStream::new(
            sink.repo().chunker(),
            Chunks {
                from: self.from,
                index: self.index,
                ids: chunks,
                next: 0,
                buf: Vec::new(),
                at: 0,
            },
        );
        let mut out = Vec::new();
        while let Some(chunk) = stream.next_chunk().map_err(|e| Error::io("copy", e))? {
            out.push(sink.store(BlobKind::Data, chunk)?);
        }
        remember(&mut self.files, key, out.clone());
        Ok(out)
    }

    /// The destination's id of the source's chunk `id`, stored there unless it is already.
    fn chunk(&mut self, id: &Id) -> Result<Id> {
        if let Some(done) = self.chunks.get(id) {
            return Ok(*done);
        }
        let sink = &self.session.sink;
        let new = if self.same_ids && sink.contains(id, BlobKind::Data) {
            *id
        } else {
            sink.store(BlobKind::Data, &self.from.read_blob(self.index, id, BlobKind::Data)?)?
        };
        remember(&mut self.chunks, *id, new);
        Ok(new)
    }
}

/// A file's bytes in the source, read chunk by chunk (each verified against its id).
struct Chunks<'a> {
    from: &'a Repository,
    index: &'a Index,
    ids: &'a [Id],
    next: usize,
    buf: Vec<u8>,
    at: usize,
}

impl Read for Chunks<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.buf.len() {
            let Some(id) = self.ids.get(self.next) else { return Ok(0) };
            self.buf = self
                .from
                .read_blob(self.index, id, BlobKind::Data)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            (self.next, self.at) = (self.next + 1, 0);
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
