//! Writing regular files' content in pack order, the way the repository lays it out: the files
//! of a batch are created at their full length (so whatever is not written stays a hole), their
//! chunks are grouped by pack and sorted by offset, and worker threads each take a pack, read it
//! in large ranges (neighbouring blobs in one request), open every blob once and write it at its
//! place in each file that holds it; all-zero chunks are not written, so sparse files stay
//! sparse. A blob several files share is read once.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::blob::{self, BlobKind};
use crate::error::{Error, Result};
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
/// ... or this many files.
pub const BATCH_FILES: usize = 1 << 16;

/// One chunk of one file: where it is stored and where it goes.
struct ChunkRef {
    entry: BlobEntry,
    file: u32,
    at: u64,
}

/// A regular file of the batch, created at its length, waiting for its content.
pub struct PendingFile {
    /// Where it is restored.
    pub path: PathBuf,
    /// Its node (metadata is set once the content is written).
    pub node: Node,
    /// Its restored length.
    len: u64,
    /// Set when some of its content could not be restored.
    pub error: Option<String>,
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
    /// Whether the batch should be executed before more is added.
    pub fn full(&self) -> bool {
        self.chunks >= BATCH_CHUNKS || self.files.len() >= BATCH_FILES
    }

    /// Plans the file at `path` with `node`'s chunks; it is created when the batch executes. A
    /// chunk missing from the index makes the file a problem, reported after the batch.
    pub fn add(&mut self, index: &Index, node: &Node, path: PathBuf) -> Result<(), String> {
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
        self.files.push(PendingFile { path, node: meta, len: at, error });
        Ok(())
    }

    /// Creates every file at its length, then writes every planned chunk, with `workers`
    /// threads; returns the bytes written (holes excluded). Problems are recorded on the files.
    pub fn execute(&mut self, repo: &Repository, workers: usize) -> u64 {
        let per = self.files.len().div_ceil(workers.max(1)).max(1);
        std::thread::scope(|scope| {
            for part in self.files.chunks_mut(per) {
                scope.spawn(move || {
                    for pending in part {
                        let made = File::options()
                            .write(true)
                            .create_new(true)
                            .open(&pending.path)
                            .and_then(|file| file.set_len(pending.len));
                        if let Err(err) = made {
                            pending.error.get_or_insert(err.to_string());
                        }
                    }
                });
            }
        });
        let packs: Vec<(Id, Vec<ChunkRef>)> = std::mem::take(&mut self.packs).into_iter().collect();
        self.chunks = 0;
        let next = AtomicUsize::new(0);
        let written = AtomicU64::new(0);
        let errors: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());
        let files = &self.files;
        std::thread::scope(|scope| {
            for _ in 0..workers.max(1) {
                scope.spawn(|| {
                    let mut open = OpenFiles::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((pack, refs)) = packs.get(i) else { break };
                        let n = restore_pack(repo, pack, refs, files, &mut open, &errors);
                        written.fetch_add(n, Ordering::Relaxed);
                    }
                });
            }
        });
        for (file, err) in errors.into_inner().unwrap_or_else(|e| e.into_inner()) {
            self.files[file as usize].error.get_or_insert(err);
        }
        written.into_inner()
    }
}

/// The last file a worker wrote to, kept open: a large file's chunks come in runs.
#[derive(Default)]
struct OpenFiles {
    last: Option<(u32, File)>,
}

impl OpenFiles {
    fn get(&mut self, number: u32, files: &[PendingFile]) -> std::io::Result<&File> {
        if self.last.as_ref().is_none_or(|(n, _)| *n != number) {
            let file = File::options().write(true).open(&files[number as usize].path)?;
            self.last = Some((number, file));
        }
        Ok(&self.last.as_ref().expect("opened above").1)
    }
}

/// Restores the chunks of `refs`, all in `pack`; returns the bytes written.
fn restore_pack(
    repo: &Repository,
    pack: &Id,
    refs: &[ChunkRef],
    files: &[PendingFile],
    open: &mut OpenFiles,
    errors: &Mutex<Vec<(u32, String)>>,
) -> u64 {
    let mut order: Vec<&ChunkRef> = refs.iter().collect();
    order.sort_by_key(|r| (r.entry.offset, r.file, r.at));
    let name = pack_path(pack);
    let fail = |r: &ChunkRef, msg: String| {
        errors.lock().unwrap_or_else(|e| e.into_inner()).push((r.file, msg));
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
            Ok(bytes) => {
                written += write_run(repo, &name, run_from, &bytes, run, files, open, &fail)
            }
            Err(_) if run.len() > 1 => {
                // One blob past the end of a truncated pack fails the whole run: each blob is
                // read on its own, so that only those really lost are.
                for r in run {
                    let (offset, len) = (u64::from(r.entry.offset), u64::from(r.entry.stored_len));
                    match repo.backend().get_range(&name, offset, len) {
                        Ok(bytes) => {
                            let one = std::slice::from_ref(r);
                            written +=
                                write_run(repo, &name, offset, &bytes, one, files, open, &fail)
                        }
                        Err(err) => {
                            let id = &r.entry.id;
                            fail(r, range_error(&name, BlobKind::Data, id, err).to_string())
                        }
                    }
                }
            }
            Err(err) => {
                let err = Error::io(&name, err).to_string();
                run.iter().for_each(|r| fail(r, err.clone()));
            }
        }
        start = end;
    }
    written
}

/// Opens each blob of `run` (read as `bytes` from offset `base`) once and writes it to every
/// place that holds it.
#[allow(clippy::too_many_arguments)]
fn write_run(
    repo: &Repository,
    name: &str,
    base: u64,
    bytes: &[u8],
    run: &[&ChunkRef],
    files: &[PendingFile],
    open: &mut OpenFiles,
    fail: &dyn Fn(&ChunkRef, String),
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
                let zero = plain.iter().all(|&b| b == 0);
                for r in &run[i..i + same] {
                    if zero {
                        continue;
                    }
                    let done = open
                        .get(r.file, files)
                        .and_then(|file| file.write_all_at(&plain, r.at))
                        .map_err(|e| e.to_string());
                    match done {
                        Ok(()) => written += plain.len() as u64,
                        Err(err) => fail(r, err),
                    }
                }
            }
            Err(err) => {
                let msg = Error::damaged(format!("data blob {} in {name}", entry.id), err);
                run[i..i + same].iter().for_each(|r| fail(r, msg.to_string()));
            }
        }
        i += same;
    }
    written
}
