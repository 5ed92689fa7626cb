//! Setting a restored entry's metadata through dedup-fs, on its open descriptor or by its name in
//! an open directory (never through a symlink), in the order that keeps each step from undoing
//! another: owner (which clears set-user-id), then mode, xattrs, and the times last. Also making
//! FIFOs and device nodes.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use dedup_core::{Problem, ProblemKind};
use dedup_fs::{FsError, Special, Target};

use crate::format::{Node, NodeKind};

/// Whether ownership can be set, and whether the user was told it cannot.
pub struct Owner<'a> {
    pub is_root: bool,
    pub warned: &'a AtomicBool,
}

/// What dedup-fs creates for a FIFO or device node (its mode is set afterwards).
pub fn special_kind(node: &Node) -> Option<Special> {
    match node.kind {
        NodeKind::Fifo => Some(Special::Fifo),
        NodeKind::CharDevice => Some(Special::CharDevice(node.rdev)),
        NodeKind::BlockDevice => Some(Special::BlockDevice(node.rdev)),
        _ => None,
    }
}

/// The message for a special file that could not be made.
pub fn special_error(node: &Node, err: &FsError) -> String {
    let denied = err.raw_os_error() == Some(rustix::io::Errno::PERM.raw_os_error());
    if denied && node.kind != NodeKind::Fifo {
        "device nodes can only be created as root".to_string()
    } else {
        err.to_string()
    }
}

/// The mode `node` is restored with: without set-user-id when its owner could not be given
/// back, without set-group-id when its group could not (a directory's set-group-id only makes
/// new entries inherit its group, and stays).
fn set_id_bits_kept(node: &Node, uid_kept: bool, gid_kept: bool) -> u32 {
    let mut mode = node.mode;
    if !uid_kept {
        mode &= !0o4000;
    }
    if !gid_kept && node.kind != NodeKind::Dir {
        mode &= !0o2000;
    }
    mode
}

/// Sets owner, mode, xattrs and times of the entry `target` (shown as `path`); returns the
/// problems met.
pub fn apply(node: &Node, target: Target<'_>, path: &Path, owner: &Owner<'_>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let fail = |problems: &mut Vec<Problem>, err: FsError| {
        problems.push(Problem::error(path, ProblemKind::Io(io::Error::other(err.to_string()))));
    };
    // Whether the entry got the snapshot's owner and group: only then may it carry their
    // set-user-id and set-group-id bits, else a program meant to run as one user would run as
    // another (the user restoring, or root where a chown was refused): cp -p's rule.
    let (uid_kept, gid_kept) = if owner.is_root {
        match dedup_fs::set_owner(target, Some(node.uid), Some(node.gid)) {
            Ok(()) => (true, true),
            Err(err) => {
                fail(&mut problems, err);
                (false, false)
            }
        }
    } else {
        let uid_kept = node.uid == rustix::process::geteuid().as_raw();
        let gid_kept = node.gid == rustix::process::getegid().as_raw();
        if (!uid_kept || !gid_kept) && !owner.warned.swap(true, Ordering::Relaxed) {
            problems.push(Problem::warning(
                path,
                ProblemKind::Io(io::Error::other(
                    "owner and group are restored only as root; files are owned by the user \
                     restoring (said once)",
                )),
            ));
        }
        (uid_kept, gid_kept)
    };
    if node.kind != NodeKind::Symlink {
        let mode = set_id_bits_kept(node, uid_kept, gid_kept);
        if mode != node.mode {
            problems.push(Problem::warning(
                path,
                ProblemKind::Io(io::Error::other(
                    "set-user-id/set-group-id bits not restored: the file does not have the \
                     snapshot's owner and group",
                )),
            ));
        }
        if let Err(err) = dedup_fs::set_mode(target, mode) {
            fail(&mut problems, err);
        }
    }
    for (name, value) in &node.xattrs {
        if let Err(err) = dedup_fs::set_xattr(
            target,
            <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name),
            value,
        ) {
            let name = String::from_utf8_lossy(name);
            problems.push(Problem::error(
                path,
                ProblemKind::Io(io::Error::other(format!("xattr {name}: {err}"))),
            ));
        }
    }
    if let Err(err) = dedup_fs::set_times(target, node.atime, node.mtime) {
        fail(&mut problems, err);
    }
    problems
}
