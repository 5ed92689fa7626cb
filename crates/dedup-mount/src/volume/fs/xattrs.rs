//! Extended attributes, kept in the inode table and committed with the tree. POSIX ACLs are
//! refused, so that a copying program sets the mode bits instead.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use fuser::{Errno, ReplyXattr};
use rustix::io::Errno as Code;

use super::super::table::Ino;
use super::attrs::now_ns;
use super::{errno, VolumeFs};
use crate::snapshots::filesystem::xattr_reply;

/// `setxattr` flags.
const XATTR_CREATE: i32 = 1;
const XATTR_REPLACE: i32 = 2;

impl VolumeFs {
    pub(super) fn set_xattr(
        &self,
        ino: Ino,
        name: &OsStr,
        value: &[u8],
        flags: i32,
    ) -> Result<(), Errno> {
        let name = name.as_bytes();
        if name.starts_with(b"system.posix_acl_") {
            // No POSIX ACLs: refused, so that a copying program sets the mode bits instead
            // (cp -a sets permissions through the ACL attribute where it is taken).
            return Err(errno(Code::OPNOTSUPP));
        }
        if name.len() > 255 || value.len() > 1 << 16 {
            return Err(errno(Code::RANGE));
        }
        let mut table = self.volume.table();
        let inode = table.get_mut(ino).map_err(errno)?;
        let present = inode.xattrs.contains_key(name);
        if flags & XATTR_CREATE != 0 && present {
            return Err(errno(Code::EXIST));
        }
        if flags & XATTR_REPLACE != 0 && !present {
            return Err(Errno::NO_XATTR);
        }
        inode.xattrs.insert(name.to_vec(), value.to_vec());
        inode.ctime = now_ns();
        drop(table);
        self.volume.changed();
        Ok(())
    }

    pub(super) fn get_xattr(&self, ino: Ino, name: &OsStr, size: u32, reply: ReplyXattr) {
        let table = self.volume.table();
        let inode = match table.get(ino) {
            Ok(inode) => inode,
            Err(e) => return reply.error(errno(e)),
        };
        match inode.xattrs.get(name.as_bytes()) {
            Some(value) => xattr_reply(reply, size, value),
            None => reply.error(Errno::NO_XATTR),
        }
    }

    pub(super) fn list_xattrs(&self, ino: Ino, size: u32, reply: ReplyXattr) {
        let table = self.volume.table();
        let inode = match table.get(ino) {
            Ok(inode) => inode,
            Err(e) => return reply.error(errno(e)),
        };
        let mut names = Vec::new();
        for key in inode.xattrs.keys() {
            names.extend_from_slice(key);
            names.push(0);
        }
        xattr_reply(reply, size, &names);
    }

    pub(super) fn remove_xattr(&self, ino: Ino, name: &OsStr) -> Result<(), Errno> {
        let mut table = self.volume.table();
        let inode = table.get_mut(ino).map_err(errno)?;
        if inode.xattrs.remove(name.as_bytes()).is_none() {
            return Err(Errno::NO_XATTR);
        }
        inode.ctime = now_ns();
        drop(table);
        self.volume.changed();
        Ok(())
    }
}
