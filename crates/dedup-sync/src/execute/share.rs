//! `--dedup`: once the copies are made, destination files of identical content come to share
//! storage, as clones of one copy (`FIDEDUPERANGE`, the default) or hard links to it
//! (`--dedup=hardlink`). Only sizes of which this run wrote a file are looked at, so a run that
//! copied nothing reads nothing. Each pair is checked as the finder's actions check theirs: the
//! candidates are grouped by size and BLAKE3 digest, then compared byte for byte, and the
//! sharing itself is validated again (the kernel compares under lock before it shares extents;
//! a hard link replaces the file only if it is unchanged since it was read). Content never
//! changes. Hard links are made only between files whose metadata is the same in the source
//! (mode, owner, modification time, extended attributes), since linked files have one set of
//! metadata and the next run would otherwise "repair" one of them through the other. The access
//! time is not among them: every read moves it, the up-to-date test does not compare it, and
//! linked files keep the first copy's.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;

use dedup_fs::{open_dir_beneath, open_file_at, same_content, Entry, FsError, Opened};
use dedup_scan::EntryKind;
use rustix::fs::fstat;

use super::Exec;
use crate::change::{Change, ChangeKind, Item};
use crate::dry_run::path;
use crate::options::DedupMode;
use crate::plan::{Op, Plan};
use crate::rel_path::{join, split};
use crate::tree::Walked;

/// One destination file that may share storage, with the source's view of it.
struct Candidate<'a> {
    rel: Vec<u8>,
    src: &'a dedup_scan::Entry,
}

/// Make identical destination files share storage, as `mode` says.
pub fn run(x: &Exec<'_>, plan: &Plan, walked: &Walked, mode: DedupMode) {
    let written: HashSet<u64> = plan
        .dirs
        .iter()
        .flat_map(|d| &d.actions)
        .filter(|a| a.src.kind == EntryKind::File)
        .filter(|a| matches!(a.op, Op::Create | Op::CloneFrom { .. }))
        .filter_map(|a| a.src.meta.as_ref().map(|m| m.size))
        .filter(|&s| s > 0)
        .collect();
    if written.is_empty() {
        return;
    }
    let mut by_size: HashMap<u64, Vec<Candidate<'_>>> = HashMap::new();
    for (rel, dir) in &walked.src.dirs {
        for e in &dir.entries {
            let Some(m) = e.meta.as_ref() else { continue };
            if e.kind == EntryKind::File && written.contains(&m.size) {
                by_size
                    .entry(m.size)
                    .or_default()
                    .push(Candidate { rel: join(rel, &e.name), src: e });
            }
        }
    }
    let mut sizes: Vec<_> = by_size.into_iter().filter(|(_, c)| c.len() > 1).collect();
    sizes.sort_unstable_by_key(|(s, _)| *s);
    for (size, mut group) in sizes {
        group.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        share_size(x, size, group, mode);
    }
}

/// Share storage among the files of one size.
fn share_size(x: &Exec<'_>, size: u64, group: Vec<Candidate<'_>>, mode: DedupMode) {
    let mut by_digest: HashMap<[u8; 32], Vec<(Candidate<'_>, Opened)>> = HashMap::new();
    for c in group {
        let opened = match open_dst(x, &c.rel) {
            Ok(o) if o.stat.st_size as u64 == size => o,
            // Not what this run made (changed since, never made, or failed with its own
            // report): leave it alone.
            _ => continue,
        };
        match digest(&opened.file, size) {
            Ok(d) => by_digest.entry(d).or_default().push((c, opened)),
            Err(e) => x.failed(&c.rel, FsError::Io(e)),
        }
    }
    for (_, files) in by_digest {
        share_equal(x, size, files, mode);
    }
}

/// Share storage among files of one size and digest, each checked byte for byte against the
/// first before it shares that one's storage.
fn share_equal(x: &Exec<'_>, size: u64, files: Vec<(Candidate<'_>, Opened)>, mode: DedupMode) {
    let mut iter = files.into_iter();
    let Some((kept_c, kept)) = iter.next() else { return };
    for (c, target) in iter {
        if target.stat.st_dev == kept.stat.st_dev && target.stat.st_ino == kept.stat.st_ino {
            continue;
        }
        if mode == DedupMode::Hardlink && !same_metadata(kept_c.src, c.src) {
            continue;
        }
        match same_content(&kept.file, &target.file, size) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                x.failed(&c.rel, FsError::Io(e));
                continue;
            }
        }
        let shared = match mode {
            DedupMode::Reflink => dedup_fs::dedupe_file(&kept.file, &target.file, size).map(|_| ()),
            DedupMode::Hardlink => dedup_fs::replace_with_link(&kept, &target),
        };
        match shared {
            Ok(()) => {
                let kind = match mode {
                    DedupMode::Reflink => ChangeKind::Share,
                    DedupMode::Hardlink => ChangeKind::Link,
                };
                let item = Item::of_kind(Some(EntryKind::File), false);
                let change = Change::new(kind, path(&c.rel), Some(path(&kept_c.rel)), item);
                x.done(change, 1);
                if mode == DedupMode::Hardlink {
                    x.touch_parent(&c.rel);
                    x.touch_parent(&kept_c.rel);
                }
            }
            // Another file system, or one without reflinks: nothing to share, nothing wrong.
            Err(FsError::Unsupported(_)) => return,
            Err(FsError::ContentDiffers) => {}
            Err(e) => x.failed(&c.rel, e),
        }
    }
}

/// The source metadata that linked destination files would have to agree on.
fn same_metadata(a: &dedup_scan::Entry, b: &dedup_scan::Entry) -> bool {
    match (&a.meta, &b.meta) {
        (Some(m), Some(n)) => {
            m.mode == n.mode
                && m.uid == n.uid
                && m.gid == n.gid
                && m.mtime_ns == n.mtime_ns
                && a.xattrs == b.xattrs
        }
        _ => false,
    }
}

/// The destination file at `rel`, reached without following a symlink anywhere below DST.
fn open_dst(x: &Exec<'_>, rel: &[u8]) -> Result<Opened, FsError> {
    let (parent, name) = split(rel);
    let dir = open_dir_beneath(&x.dst_fd, parent)?;
    let name = OsStr::from_bytes(name);
    let file = open_file_at(&dir, name)?;
    let stat = fstat(&file)?;
    dedup_fs::regular(&stat)?;
    Ok(Opened { entry: Entry { dir, name: name.to_owned() }, file, stat })
}

/// BLAKE3 of the first `size` bytes of `file`.
fn digest(mut file: &File, size: u64) -> std::io::Result<[u8; 32]> {
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; usize::try_from(size.min(1 << 20)).unwrap_or(1 << 20)];
    let mut left = size;
    while left > 0 {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        left = left.saturating_sub(n as u64);
    }
    Ok(*hasher.finalize().as_bytes())
}
