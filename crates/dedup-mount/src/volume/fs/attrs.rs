//! Attributes as the kernel sees them: an inode's `stat`, the times it is given, and the
//! changes `setattr` makes (mode, owner, size, times).

use std::time::{SystemTime, UNIX_EPOCH};

use fuser::{Errno, FileAttr, INodeNo, TimeOrNow};
use rustix::io::Errno as Code;

use super::super::table::{Ino, Inode};
use super::{errno, privileges, VolumeFs};
use crate::snapshots::attrs::{file_type, system_time};

pub(super) fn now_ns() -> i64 {
    dedup_store::repo::now_ns()
}

pub(super) fn ns_of(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

fn time_of(time: TimeOrNow) -> i64 {
    match time {
        TimeOrNow::Now => now_ns(),
        TimeOrNow::SpecificTime(time) => ns_of(time),
    }
}

/// What a `setattr` asks to change.
pub(super) struct AttrChange {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<TimeOrNow>,
    pub mtime: Option<TimeOrNow>,
    pub ctime: Option<SystemTime>,
}

impl VolumeFs {
    /// The attributes of `ino`, whose inode is `inode`; called under the table's lock (it takes
    /// a file's own lock, which is always taken after the table's).
    pub(super) fn attr(&self, ino: Ino, inode: &Inode) -> FileAttr {
        let (size, allocated) = match (&inode.file, inode.damaged.as_deref()) {
            (_, Some((_, size))) => (*size, *size),
            (Some(file), None) => {
                let content = file.lock().unwrap_or_else(|e| e.into_inner());
                (content.size(), content.allocated())
            }
            (None, None) => (inode.target.len() as u64, 0),
        };
        let nlink = match &inode.dir {
            Some(dir) => 2 + dir.subdirs(),
            None => inode.links,
        };
        FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: allocated.div_ceil(512),
            atime: system_time(inode.atime),
            mtime: system_time(inode.mtime),
            ctime: system_time(inode.ctime),
            crtime: system_time(inode.ctime),
            kind: file_type(inode.kind),
            perm: (inode.mode & 0o7777) as u16,
            nlink,
            uid: inode.uid,
            gid: inode.gid,
            rdev: inode.rdev as u32,
            blksize: 128 << 10,
            flags: 0,
        }
    }

    /// The attributes of `ino`, read under the table lock (not from a copy of the inode: a
    /// directory's copy is a copy of every name in it).
    pub(super) fn attr_of(&self, ino: Ino) -> Result<FileAttr, Errno> {
        let table = self.volume.table();
        Ok(self.attr(ino, table.get(ino).map_err(errno)?))
    }

    /// Makes the changes of a `setattr` to `ino` asked by process `pid`; its attributes after
    /// them.
    pub(super) fn set_attr(
        &self,
        ino: Ino,
        change: AttrChange,
        pid: u32,
    ) -> Result<FileAttr, Errno> {
        let now = now_ns();
        if let Some(size) = change.size {
            if size > self.volume.store().largest_file() {
                return Err(errno(Code::FBIG));
            }
            self.with_content(ino, |content, volume| {
                content
                    .set_size(size, &mut |id| volume.store().fetch(id))
                    .map_err(|e| volume.failure(e))
            })?;
        }
        let mut table = self.volume.table();
        let inode = table.get_mut(ino).map_err(errno)?;
        if let Some(mode) = change.mode {
            inode.mode = mode & 0o7777;
        }
        // Without FUSE_HANDLE_KILLPRIV_V2 the kernel sends the cleared mode itself.
        if self.clears_ids && change.size.is_some() && privileges::has_ids(inode) {
            // A truncate: the kernel's flag saying the caller lacks CAP_FSETID does not reach
            // the volume through fuser, so the caller is looked at.
            if !privileges::Caller::of(pid).may_keep_ids {
                privileges::clear_on_write(inode);
            }
        }
        if change.uid.is_some() || change.gid.is_some() {
            if self.clears_ids {
                privileges::clear_on_chown(inode, || privileges::Caller::of(pid));
            }
            inode.uid = change.uid.unwrap_or(inode.uid);
            inode.gid = change.gid.unwrap_or(inode.gid);
        }
        if let Some(atime) = change.atime {
            inode.atime = time_of(atime);
        }
        if let Some(mtime) = change.mtime {
            inode.mtime = time_of(mtime);
        }
        if change.size.is_some() && change.mtime.is_none() {
            inode.mtime = now;
        }
        inode.ctime = change.ctime.map_or(now, ns_of);
        let attr = self.attr(ino, inode);
        drop(table);
        self.volume.changed();
        Ok(attr)
    }
}
