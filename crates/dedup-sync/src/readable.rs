//! Source files the plan would copy but this process may not read, found before anything
//! changes: a file whose permission bits deny this process reading it (checked with `access`,
//! which also weighs ACLs) is a source part that could not be read, like an entry the walk could
//! not examine. Found here, it makes the plan one without deletions and renames, and the dry run
//! says the same as the real run, instead of the copy failing halfway through the run. Only
//! files whose bits deny reading are asked about: the others cost nothing.

use std::io;
use std::path::Path;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use dedup_fs::{open_dir_beneath, FsError};
use dedup_scan::{open_dir, EntryKind, Metadata};
use rustix::fs::{accessat, Access, AtFlags};

use crate::plan::{Op, Plan};
use crate::rel_path::join;

/// Who this process is, for reading files.
#[derive(Debug, Clone)]
pub struct Ids {
    uid: u32,
    gid: u32,
    groups: Vec<u32>,
}

impl Ids {
    /// This process's effective ids and supplementary groups.
    pub fn current() -> Ids {
        let groups = rustix::process::getgroups().unwrap_or_default();
        Ids {
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
            groups: groups.into_iter().map(|g| g.as_raw()).collect(),
        }
    }

    /// False when the permission bits of `m` deny this process reading it.
    fn bits_allow(&self, m: &Metadata) -> bool {
        if self.uid == 0 {
            return true;
        }
        let bit = if m.uid == self.uid {
            0o400
        } else if m.gid == self.gid || self.groups.contains(&m.gid) {
            0o040
        } else {
            0o004
        };
        m.mode & bit != 0
    }
}

/// The source files the plan copies that cannot be read, with why.
pub fn unreadable(plan: &Plan, src_root: &Path) -> Vec<(Vec<u8>, io::Error)> {
    let mut out = Vec::new();
    let mut ids = None;
    for d in &plan.dirs {
        for a in &d.actions {
            let Some(m) = a.src.meta else { continue };
            if a.op != Op::Create || a.src.kind != EntryKind::File {
                continue;
            }
            if ids.get_or_insert_with(Ids::current).bits_allow(&m) {
                continue;
            }
            let rel = join(&d.rel, a.name());
            // Asked in its directory, reached from SRC's descriptor: no symlink on the way, and
            // no path too long for the kernel.
            let asked = open_dir(src_root, true).map_err(FsError::Io).and_then(|root| {
                let dir = open_dir_beneath(&root, &d.rel)?;
                Ok(accessat(&dir, OsStr::from_bytes(a.name()), Access::READ_OK, AtFlags::EACCESS)?)
            });
            match asked {
                Ok(()) => {}
                Err(FsError::Io(e)) => out.push((rel, e)),
                Err(e) => out.push((rel, io::Error::other(e.to_string()))),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(uid: u32, gid: u32, mode: u32) -> Metadata {
        Metadata {
            kind: EntryKind::File,
            mode,
            uid,
            gid,
            size: 1,
            blocks: 0,
            nlink: 1,
            dev: 1,
            ino: 1,
            rdev: 0,
            atime_ns: 0,
            mtime_ns: 0,
            ctime_ns: 0,
        }
    }

    #[test]
    fn the_class_that_applies_decides_and_root_reads_everything() {
        let ids = Ids { uid: 10, gid: 20, groups: vec![30] };
        assert!(ids.bits_allow(&meta(10, 99, 0o400)));
        assert!(!ids.bits_allow(&meta(10, 20, 0o044)), "the owner's bits apply to the owner");
        assert!(ids.bits_allow(&meta(1, 30, 0o040)), "a supplementary group");
        assert!(!ids.bits_allow(&meta(1, 20, 0o404)), "the group's bits apply to the group");
        assert!(ids.bits_allow(&meta(1, 2, 0o004)));
        assert!(!ids.bits_allow(&meta(1, 2, 0o440)));
        assert!(Ids { uid: 0, gid: 0, groups: vec![] }.bits_allow(&meta(1, 2, 0)));
    }
}
