//! Setting a restored entry's metadata, in the order that keeps each step from undoing another:
//! owner (which clears set-user-id), then mode, xattrs, and the times last. Also creating FIFOs
//! and device nodes.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use dedup_core::{Problem, ProblemKind};
use rustix::fs::{AtFlags, FileType, Gid, Mode, Timespec, Timestamps, Uid, XattrFlags, CWD};

use crate::format::{Node, NodeKind};

/// Whether ownership can be set, and whether the user was told it cannot.
pub struct Owner<'a> {
    pub is_root: bool,
    pub warned: &'a AtomicBool,
}

fn timespec(ns: i64) -> Timespec {
    Timespec { tv_sec: ns.div_euclid(1_000_000_000), tv_nsec: ns.rem_euclid(1_000_000_000) as _ }
}

/// Creates a FIFO or device node at `path`.
pub fn make_node(node: &Node, path: &Path) -> Result<(), String> {
    let kind = match node.kind {
        NodeKind::Fifo => FileType::Fifo,
        NodeKind::CharDevice => FileType::CharacterDevice,
        NodeKind::BlockDevice => FileType::BlockDevice,
        _ => return Ok(()),
    };
    rustix::fs::mknodat(CWD, path, kind, Mode::from_raw_mode(0o600), node.rdev).map_err(|e| match e
    {
        rustix::io::Errno::PERM if kind != FileType::Fifo => {
            "device nodes can only be created as root".to_string()
        }
        other => other.to_string(),
    })
}

/// Sets owner, mode, xattrs and times of the entry at `path`; returns the problems met.
pub fn apply(node: &Node, path: &Path, owner: Owner<'_>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let fail = |problems: &mut Vec<Problem>, what: &str, err: rustix::io::Errno| {
        problems.push(Problem::error(
            path,
            ProblemKind::Io(io::Error::other(format!("cannot set {what}: {err}"))),
        ));
    };
    if owner.is_root {
        if let Err(err) = rustix::fs::chownat(
            CWD,
            path,
            Some(Uid::from_raw(node.uid)),
            Some(Gid::from_raw(node.gid)),
            AtFlags::SYMLINK_NOFOLLOW,
        ) {
            fail(&mut problems, "owner", err);
        }
    } else if (node.uid != rustix::process::geteuid().as_raw()
        || node.gid != rustix::process::getegid().as_raw())
        && !owner.warned.swap(true, Ordering::Relaxed)
    {
        problems.push(Problem::warning(
            path,
            ProblemKind::Io(io::Error::other("owner and group are restored only as root; files are owned by the user restoring (said once)")),
        ));
    }
    if node.kind != NodeKind::Symlink {
        if let Err(err) =
            rustix::fs::chmodat(CWD, path, Mode::from_raw_mode(node.mode), AtFlags::empty())
        {
            fail(&mut problems, "mode", err);
        }
    }
    for (name, value) in &node.xattrs {
        if let Err(err) =
            rustix::fs::lsetxattr(path, OsStr::from_bytes(name), value, XattrFlags::empty())
        {
            fail(&mut problems, &format!("xattr {}", String::from_utf8_lossy(name)), err);
        }
    }
    let times =
        Timestamps { last_access: timespec(node.atime), last_modification: timespec(node.mtime) };
    if let Err(err) = rustix::fs::utimensat(CWD, path, &times, AtFlags::SYMLINK_NOFOLLOW) {
        fail(&mut problems, "times", err);
    }
    problems
}
