//! Writing regular files' content in pack order, the way the repository lays it out: the files
//! of a batch are created under temporary names at their full length (so whatever is not
//! written stays a hole), their chunks are grouped by pack and sorted by offset, and worker
//! threads each take a pack, read it in large ranges (neighbouring blobs in one request), open
//! every blob once and write it at its place in each file that holds it, leaving out its
//! all-zero blocks, so sparse files stay sparse. A blob several files share is read once. The
//! batch's files are then sent to the disk ([`super::writeback`]), and each gets its metadata
//! on its descriptor and is renamed into place ([`finish`]).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dedup_core::{Problem, ProblemKind};
use dedup_fs::{CloseErrors, Commit, FsError, OwnedTempFile, Target};

use super::meta::{self, Owner};
use crate::blob::{self, BlobKind};
use crate::error::Error;
use crate::format::{BlobEntry, Content, Node};
use crate::id::Id;
use crate::index::Index;
use crate::pack::pack_path;
use crate::repo::{range_error, Repository};

/// Neighbouring blobs closer than this are read in one request (the gap is read and dropped).
const MAX_GAP: u64 = 256 << 10;
/// The largest single read.
const MAX_RUN: u64 = 16 << 20;
/// A batch is executed once it holds this many chunk references, bounding the plan's memory.
pub const BATCH_CHUNKS: usize = 1 << 18;
/// ... or this many files (fewer where open descriptors are scarce: each file of a batch is
/// held open until it is in place).
pub const BATCH_FILES: usize = 1 << 16;

/// One chunk of one file: where it is stored and where it goes.
struct ChunkRef {
    entry: BlobEntry,
    file: u32,
    at: u64,
}

/// A regular file of the batch: where it goes, and its content under a temporary name.
pub struct PendingFile {
    /// The directory it goes into.
    pub dir: Arc<OwnedFd>,
    /// Its name there.
    pub name: Vec<u8>,
    /// Its path, for messages.
    pub path: PathBuf,
    /// Its node (metadata is set once the content is written).
    pub node: Node,
    /// Its restored length.
    len: u64,
    /// Whether it replaces what stands at its name (else it must still be free).
    pub replace: bool,
    /// The new file, once created.
    temp: Option<OwnedTempFile>,
    /// Set when some of its content could not be restored.
    pub error: Option<String>,
    /// Set when writing to the target failed (a full disk, an I/O error), as opposed to data
    /// the repository lost: the repository still holds it, so a file with holes is never put
    /// in place, where a later restore would keep it as if it were whole.
    target_failed: bool,
}

/// Where a chunk that did not reach its file failed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// The repository: the blob is missing or damaged.
    Repository,
    /// The target: the file could not be written.
    Target,
}

/// Files and their chunks, grouped by pack.
#[derive(Default)]
pub struct Batch {
    /// The files.
    pub files: Vec<PendingFile>,
    packs: HashMap<Id, Vec<ChunkRef>>,
    chunks: usize,
}

impl Batch {
    /// Whether the batch should be executed before more is added, holding at most `max_files`
    /// files.
    pub fn full(&self, max_files: usize) -> bool {
        self.chunks >= BATCH_CHUNKS || self.files.len() >= max_files.min(BATCH_FILES)
    }

    /// Plans `node` as `name` in `dir` (shown as `path`); it is created when the batch
    /// executes. A chunk missing from the index makes the file a problem, reported after the
    /// batch.
    pub fn add(
        &mut self,
        index: &Index,
        node: &Node,
        dir: Arc<OwnedFd>,
        name: &[u8],
        path: PathBuf,
        replace: bool,
    ) {
        let mut error = None;
        let number = u32::try_from(self.files.len()).expect("batches are bounded");
        let mut at = 0u64;
        if let Content::Chunks(chunks) = &node.content {
            for id in chunks {
                let Some(location) = index.lookup(id, BlobKind::Data) else {
                    error.get_or_insert(format!("data blob {id} is not in the index"));
                    continue;
                };
                let raw_len = u64::from(location.entry.raw_len);
                self.packs.entry(location.pack).or_default().push(ChunkRef {
                    entry: location.entry,
                    file: number,
                    at,
                });
                self.chunks += 1;
                at += raw_len;
            }
        }
        let mut meta = node.clone();
        meta.content = Content::None;
        let name = name.to_vec();
        self.files.push(PendingFile {
            dir,
            name,
            path,
            node: meta,
            len: at,
            replace,
            temp: None,
            error,
            target_failed: false,
        });
    }

    /// Creates every file at its length, then writes every planned chunk, with `workers`
    /// threads; returns the bytes written (holes excluded). Problems are recorded on the files.
    pub fn execute(&mut self, repo: &Repository, workers: usize) -> u64 {
        let per = self.files.len().div_ceil(workers.max(1)).max(1);
        let close_errors = &CloseErrors::default();
        std::thread::scope(|scope| {
            for part in self.files.chunks_mut(per) {
                scope.spawn(move || {
                    for pending in part {
                        let made = OwnedTempFile::with_mode(Arc::clone(&pending.dir), 0o600)
                            .and_then(|t| {
                                t.file().set_len(pending.len)?;
                                Ok(t)
                            });
                        match made {
                            Ok(mut temp) => {
                                if !close_errors.at(temp.device(), temp.dir().as_fd()) {
                                    temp.no_errors_at_close();
                                }
                                pending.temp = Some(temp);
                            }
                            Err(err) => {
                                pending.error.get_or_insert(err.to_string());
                            }
                        }
                    }
                });
            }
        });
        let packs: Vec<(Id, Vec<ChunkRef>)> = std::mem::take(&mut self.packs).into_iter().collect();
        self.chunks = 0;
        let next = AtomicUsize::new(0);
        let written = AtomicU64::new(0);
        let errors: Mutex<Vec<(u32, Failure, String)>> = Mutex::new(Vec::new());
        let files = &self.files;
        std::thread::scope(|scope| {
            for _ in 0..workers.max(1) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((pack, refs)) = packs.get(i) else { break };
                    let n = restore_pack(repo, pack, refs, files, &errors);
                    written.fetch_add(n, Ordering::Relaxed);
                });
            }
        });
        for (file, failure, err) in errors.into_inner().unwrap_or_else(|e| e.into_inner()) {
            let pending = &mut self.files[file as usize];
            if failure == Failure::Target && !pending.target_failed {
                // The target's error says why the file is not in place; it comes first.
                pending.target_failed = true;
                pending.error = Some(err);
            } else {
                pending.error.get_or_insert(err);
            }
        }
        if super::writeback::wanted() {
            let made: Vec<_> =
                self.files.iter().filter_map(|f| Some((f.temp.as_ref()?.file(), f.len))).collect();
            super::writeback::start_all(&made);
        }
        written.into_inner()
    }
}

/// How one file of a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// In place, whole, with its metadata; `replaced` when something stood at its name.
    Restored { replaced: bool },
    /// In place with holes where data was lost (a problem says so): no time or mode set.
    Damaged,
    /// Not put in place (a problem says why); what stood at its name is still there.
    NotRestored,
}

/// Sets the metadata of a written file on its descriptor and renames it into place; a file
/// whose content is incomplete never replaces anything.
pub fn finish(pending: &mut PendingFile, owner: &Owner<'_>) -> (Finished, Vec<Problem>) {
    let problem =
        |msg: String| Problem::error(&pending.path, ProblemKind::Io(io::Error::other(msg)));
    let name = OsStr::from_bytes(&pending.name);
    let Some(temp) = pending.temp.take() else {
        let err = pending.error.take().unwrap_or_else(|| "not created".into());
        return (Finished::NotRestored, vec![problem(err)]);
    };
    if let Some(err) = pending.error.take() {
        if pending.target_failed {
            // Dropping it removes the temporary file (and frees its space): the repository
            // still holds the data, so the next restore writes the file whole.
            drop(temp);
            return (Finished::NotRestored, vec![problem(format!("not restored: {err}"))]);
        }
        if pending.replace {
            // Dropping it removes the temporary file: what stands at the name stays.
            drop(temp);
            let msg = format!("{err}; not restored: the entry already there is kept");
            return (Finished::NotRestored, vec![problem(msg)]);
        }
        // Its times and mode are not set: a file with holes where data was lost must not pass
        // for the original (size and mtime) with a later backup, rsync or make.
        let msg = format!(
            "{err}; the file is incomplete (holes where data is lost) and keeps the time of the \
             restore"
        );
        return match temp.commit_with(name, Commit { no_replace: true, durable: false }) {
            Ok(_) => (Finished::Damaged, vec![problem(msg)]),
            Err(e) => (Finished::NotRestored, vec![problem(format!("{msg}; {}", in_place(e)))]),
        };
    }
    let mut problems =
        meta::apply(&pending.node, Target::Fd(temp.file().as_fd()), &pending.path, owner);
    let how = Commit { no_replace: !pending.replace, durable: false };
    match temp.commit_with(name, how) {
        Ok(_) => (Finished::Restored { replaced: pending.replace }, problems),
        Err(e) => {
            problems.push(problem(in_place(e)));
            (Finished::NotRestored, problems)
        }
    }
}

/// Why a file could not be put at its name.
fn in_place(e: FsError) -> String {
    match e {
        FsError::Exists => "not restored: an entry appeared at its name during the restore".into(),
        FsError::Replaced => "not restored: its temporary file was replaced by another".into(),
        other => format!("not restored: {other}"),
    }
}

/// Restores the chunks of `refs`, all in `pack`; returns the bytes written.
fn restore_pack(
    repo: &Repository,
    pack: &Id,
    refs: &[ChunkRef],
    files: &[PendingFile],
    errors: &Mutex<Vec<(u32, Failure, String)>>,
) -> u64 {
    let mut order: Vec<&ChunkRef> = refs.iter().collect();
    order.sort_by_key(|r| (r.entry.offset, r.file, r.at));
    let name = pack_path(pack);
    let fail = |r: &ChunkRef, failure: Failure, msg: String| {
        errors.lock().unwrap_or_else(|e| e.into_inner()).push((r.file, failure, msg));
    };
    let mut written = 0;
    let mut start = 0;
    while start < order.len() {
        // A run: neighbouring blobs read in one request.
        let run_from = u64::from(order[start].entry.offset);
        let mut run_to = run_from + u64::from(order[start].entry.stored_len);
        let mut end = start + 1;
        while end < order.len() {
            let e = &order[end].entry;
            let (from, to) = (u64::from(e.offset), u64::from(e.offset) + u64::from(e.stored_len));
            if from > run_to + MAX_GAP || to.max(run_to) - run_from > MAX_RUN {
                break;
            }
            run_to = run_to.max(to);
            end += 1;
        }
        let run = &order[start..end];
        match repo.backend().get_range(&name, run_from, run_to - run_from) {
            Ok(bytes) => written += write_run(repo, &name, run_from, &bytes, run, files, &fail),
            Err(_) if run.len() > 1 => {
                // One blob past the end of a truncated pack fails the whole run: each blob is
                // read on its own, so that only those really lost are.
                for r in run {
                    let (offset, len) = (u64::from(r.entry.offset), u64::from(r.entry.stored_len));
                    match repo.backend().get_range(&name, offset, len) {
                        Ok(bytes) => {
                            let one = std::slice::from_ref(r);
                            written += write_run(repo, &name, offset, &bytes, one, files, &fail)
                        }
                        Err(err) => {
                            let id = &r.entry.id;
                            let msg = range_error(&name, BlobKind::Data, id, err).to_string();
                            fail(r, Failure::Repository, msg)
                        }
                    }
                }
            }
            Err(err) => {
                let err = Error::io(&name, err).to_string();
                run.iter().for_each(|r| fail(r, Failure::Repository, err.clone()));
            }
        }
        start = end;
    }
    written
}

/// Opens each blob of `run` (read as `bytes` from offset `base`) once and writes it to every
/// place that holds it, its zero blocks left as holes.
fn write_run(
    repo: &Repository,
    name: &str,
    base: u64,
    bytes: &[u8],
    run: &[&ChunkRef],
    files: &[PendingFile],
    fail: &dyn Fn(&ChunkRef, Failure, String),
) -> u64 {
    let mut written = 0;
    let mut i = 0;
    while i < run.len() {
        let entry = run[i].entry;
        let same = run[i..].iter().take_while(|r| r.entry.offset == entry.offset).count();
        let from = (u64::from(entry.offset) - base) as usize;
        let sealed = &bytes[from..from + entry.stored_len as usize];
        match blob::open(repo.sealer(), &repo.keys().id, BlobKind::Data, &entry, sealed) {
            Ok(plain) => {
                for r in &run[i..i + same] {
                    // A file that could not be created has its problem already.
                    let Some(temp) = &files[r.file as usize].temp else { continue };
                    match dedup_fs::write_sparse_at(temp.file(), r.at, &plain) {
                        Ok(n) => written += n,
                        Err(err) => fail(r, Failure::Target, err.to_string()),
                    }
                }
            }
            Err(err) => {
                let msg = Error::damaged(format!("data blob {} in {name}", entry.id), err);
                run[i..i + same].iter().for_each(|r| fail(r, Failure::Repository, msg.to_string()));
            }
        }
        i += same;
    }
    written
}
