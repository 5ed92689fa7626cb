//! Reading a restore back: every regular file the filter picks is opened in the target (one name
//! at a time, no symlink followed) and compared with the snapshot, one chunk at a time. A file
//! the backup could not read whole never passes, nor does one missing or kept different. The
//! snapshot's side is read through the one reader of snapshot files (`file_reader`), which reads
//! the next chunks ahead while a file is compared.

use std::ffi::OsStr;
use std::io::{self, BufReader, Read};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use dedup_core::{Observer, Problem, ProblemKind};

use super::{Filter, Pick, NOT_READ_WHOLE};
use crate::error::Result;
use crate::file_reader::{FileReader, ReaderOptions};
use crate::format::{Content, Node, NodeKind};
use crate::live_index::LiveIndex;
use crate::repo::Repository;

/// What a verification found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct VerifySummary {
    /// Files that hold exactly the snapshot's content.
    pub good: u64,
    /// Files that do not (each reported).
    pub bad: u64,
}

struct Verifier<'a> {
    repo: &'a Repository,
    reader: FileReader,
    filter: Option<Filter<'a>>,
    observer: &'a dyn Observer,
    target: &'a Path,
    rel: Vec<u8>,
    summary: VerifySummary,
}

/// Compares what a restore of `node` into `target` (with `filter`) left there with the snapshot.
pub fn verify(
    repo: &Arc<Repository>,
    node: &Node,
    target: &Path,
    filter: Option<Filter<'_>>,
    observer: &dyn Observer,
) -> Result<VerifySummary> {
    let index = Arc::new(LiveIndex::new(repo.index()?));
    let reader = FileReader::new(Arc::clone(repo), index, ReaderOptions::sequential());
    let mut v = Verifier {
        repo,
        reader,
        filter,
        observer,
        target,
        rel: Vec::new(),
        summary: VerifySummary::default(),
    };
    let root = dedup_scan::open_dir(target, true).ok();
    match node.kind {
        NodeKind::Dir => v.dir(node, root.as_ref(), filter.is_none()),
        NodeKind::File => {
            v.rel = node.name.clone();
            v.file(node, root.as_ref());
        }
        _ => {}
    }
    Ok(v.summary)
}

impl Verifier<'_> {
    fn bad(&mut self, why: impl std::fmt::Display) {
        self.summary.bad += 1;
        let path = self.target.join(OsStr::from_bytes(&self.rel));
        let why = format!("--verify: {why}");
        self.observer.problem(Problem::error(path, ProblemKind::Io(io::Error::other(why))));
    }

    fn dir(&mut self, node: &Node, dir: Option<&OwnedFd>, selected: bool) {
        let Content::Subtree(id) = node.content else { return };
        let tree = match self.repo.tree(&id) {
            Ok(tree) => tree,
            Err(err) => return self.bad(format!("cannot be compared: {err}")),
        };
        for child in &tree.nodes {
            let len = self.rel.len();
            if len > 0 {
                self.rel.push(b'/');
            }
            self.rel.extend_from_slice(&child.name);
            let pick = self.filter.map_or(Pick::Restore, |f| f(&self.rel, child, selected));
            match (pick, child.kind) {
                (Pick::Skip, _) => {}
                (_, NodeKind::Dir) => {
                    let name = OsStr::from_bytes(&child.name);
                    let sub = dir.and_then(|d| dedup_fs::open_dir_at(d, name).ok());
                    self.dir(child, sub.as_ref(), selected || pick == Pick::Restore);
                }
                (Pick::Restore, NodeKind::File) => self.file(child, dir),
                _ => {}
            }
            self.rel.truncate(len);
        }
    }

    fn file(&mut self, node: &Node, dir: Option<&OwnedFd>) {
        if node.incomplete {
            return self.bad(NOT_READ_WHOLE);
        }
        if !matches!(node.content, Content::Chunks(_)) {
            return;
        }
        let Some(dir) = dir else { return self.bad("missing") };
        let file = match dedup_fs::open_file_at(dir, OsStr::from_bytes(&node.name)) {
            Ok(file) => file,
            Err(err) if err.is_not_found() => return self.bad("missing"),
            Err(err) => return self.bad(format!("cannot be read back: {err}")),
        };
        match same_content(&self.reader, node, file) {
            Ok(true) => self.summary.good += 1,
            Ok(false) => self.bad("restored content differs from the snapshot"),
            Err(err) => self.bad(format!("cannot be compared: {err}")),
        }
    }
}

/// Whether `file` holds exactly the content of the snapshot's file `node`, compared one chunk
/// at a time (memory stays within the reader's cache whatever the file's size).
fn same_content(reader: &FileReader, node: &Node, file: std::fs::File) -> Result<bool, String> {
    let mut file = BufReader::with_capacity(1 << 20, file);
    let opened = reader.open(node).map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    for chunk in opened.chunks() {
        let expected = chunk.map_err(|e| e.to_string())?.bytes;
        found.resize(expected.len(), 0);
        if file.read_exact(&mut found).is_err() || found != *expected {
            return Ok(false);
        }
    }
    Ok(file.read(&mut [0u8; 1]).is_ok_and(|n| n == 0))
}
