//! `--dedup`: after the copy phase, the regular files this run wrote into DST whose content is
//! identical come to share storage — their extents (FIDEDUPERANGE: the kernel compares the bytes
//! under lock, so no content can change) or, with `--dedup=hardlink`, one inode (only between
//! files whose mode, owner and modification time agree, since hard links share them; the bytes
//! are compared first and the name is replaced through a temporary one).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dedup_core::{FileId, FileMeta, Observer, Problem, ProblemKind};
use dedup_fs::FsError;

use crate::change::{Change, ChangeKind, Events};
use crate::options::DedupMode;

/// Passes everything on to the caller's events, keeping the paths of the files copied.
pub(crate) struct Recorder<'a> {
    pub inner: &'a dyn Events,
    pub copied: Mutex<Vec<PathBuf>>,
}

impl Observer for Recorder<'_> {
    fn problem(&self, problem: Problem) {
        self.inner.problem(problem);
    }
}

impl Events for Recorder<'_> {
    fn change(&self, change: &Change) {
        if change.kind == ChangeKind::Copy {
            self.copied.lock().unwrap_or_else(|e| e.into_inner()).push(change.path.clone());
        }
        self.inner.change(change);
    }
}

/// What one copied file is, for grouping.
struct Copied {
    rel: PathBuf,
    meta: std::fs::Metadata,
}

/// Makes identical files among `copied` (paths below `dst`) share storage as `mode` says,
/// reporting each as a `clone` (or `link`) change from the first of its content.
pub(crate) fn share(dst: &Path, copied: Vec<PathBuf>, mode: DedupMode, events: &dyn Events) {
    let mut by_size: BTreeMap<u64, Vec<Copied>> = BTreeMap::new();
    for rel in copied {
        if let Ok(meta) = std::fs::symlink_metadata(dst.join(&rel)) {
            if meta.is_file() && meta.len() > 0 {
                by_size.entry(meta.len()).or_default().push(Copied { rel, meta });
            }
        }
    }
    for (size, mut files) in by_size {
        if files.len() < 2 {
            continue;
        }
        files.sort_by(|a, b| a.rel.cmp(&b.rel));
        let mut by_hash: BTreeMap<[u8; 32], Vec<Copied>> = BTreeMap::new();
        for file in files {
            match hash(&dst.join(&file.rel)) {
                Ok(digest) => by_hash.entry(digest).or_default().push(file),
                Err(e) => events.problem(Problem::warning(dst.join(&file.rel), ProblemKind::Io(e))),
            }
        }
        for same in by_hash.into_values().filter(|g| g.len() > 1) {
            let (leader, rest) = same.split_first().expect("two or more");
            for follower in rest {
                if !share_one(dst, leader, follower, size, mode, events) {
                    // The file system cannot share extents: the rest would fail alike.
                    return;
                }
            }
        }
    }
}

/// Shares `follower`'s storage with `leader`'s; false when the file system cannot share at all.
fn share_one(
    dst: &Path,
    leader: &Copied,
    follower: &Copied,
    size: u64,
    mode: DedupMode,
    events: &dyn Events,
) -> bool {
    let (from, path) = (dst.join(&leader.rel), dst.join(&follower.rel));
    let result = match mode {
        DedupMode::Reflink => reflink(&from, &path, size),
        DedupMode::Hardlink => {
            let (a, b) = (&leader.meta, &follower.meta);
            if (a.mode(), a.uid(), a.gid(), a.mtime(), a.mtime_nsec())
                != (b.mode(), b.uid(), b.gid(), b.mtime(), b.mtime_nsec())
            {
                return true;
            }
            hard_link(&from, &path, leader, follower, size)
        }
    };
    match result {
        Ok(()) => {
            let kind =
                if mode == DedupMode::Hardlink { ChangeKind::Link } else { ChangeKind::Clone };
            events.change(&Change {
                kind,
                path: follower.rel.clone(),
                from: Some(leader.rel.clone()),
                bytes: 0,
            });
            true
        }
        Err(FsError::Unsupported(e)) => {
            let note = io::Error::other(format!(
                "--dedup: this file system cannot share extents ({e}); identical files stay copies"
            ));
            events.problem(Problem::warning(dst, ProblemKind::Io(note)));
            false
        }
        Err(e) => {
            events
                .problem(Problem::warning(&path, ProblemKind::Io(io::Error::other(e.to_string()))));
            true
        }
    }
}

fn reflink(from: &Path, path: &Path, size: u64) -> Result<(), FsError> {
    let src = File::open(from).map_err(FsError::Io)?;
    // FIDEDUPERANGE wants the destination open for writing (or owned by the caller).
    let dest = std::fs::OpenOptions::new().write(true).open(path).map_err(FsError::Io)?;
    dedup_fs::dedupe_file(&src, &dest, size).map(|_| ())
}

fn hard_link(
    from: &Path,
    path: &Path,
    leader: &Copied,
    follower: &Copied,
    size: u64,
) -> Result<(), FsError> {
    let expected = |m: &std::fs::Metadata| FileMeta {
        id: FileId { dev: m.dev(), ino: m.ino() },
        size: m.len(),
        mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
    };
    // Linking earlier followers to the leader changed its ctime: its identity is taken afresh
    // (the bytes are compared below in any case).
    let now = std::fs::symlink_metadata(from).map_err(FsError::Io)?;
    if (now.dev(), now.ino()) != (leader.meta.dev(), leader.meta.ino()) {
        return Err(FsError::SourceReplaced);
    }
    let kept = dedup_fs::open_expected(from, &expected(&now))?;
    let target = dedup_fs::open_expected(path, &expected(&follower.meta))?;
    let (a, b) = (kept.entry.open_file()?, target.entry.open_file()?);
    if !dedup_fs::same_content(&a, &b, size).map_err(FsError::Io)? {
        return Err(FsError::ContentDiffers);
    }
    // The rename lands in a directory whose times the run has already set: put them back.
    let parent = path.parent().unwrap_or(Path::new("."));
    let before = std::fs::symlink_metadata(parent).map_err(FsError::Io)?;
    dedup_fs::replace_with_link(&kept, &target)?;
    let times = std::fs::FileTimes::new()
        .set_accessed(before.accessed().map_err(FsError::Io)?)
        .set_modified(before.modified().map_err(FsError::Io)?);
    File::open(parent).and_then(|dir| dir.set_times(times)).map_err(FsError::Io)
}

/// BLAKE3 of a file's bytes.
fn hash(path: &Path) -> io::Result<[u8; 32]> {
    let mut file = File::open(path)?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(*hasher.finalize().as_bytes());
        }
        hasher.update(&buf[..n]);
    }
}
