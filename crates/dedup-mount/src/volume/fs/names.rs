//! Names in the tree: making entries (files, directories, nodes, symlinks) as the calling user,
//! with the set-group-ID rules of Linux, and removing, renaming and linking them; a directory's
//! times move when an entry comes or goes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use dedup_store::format::NodeKind;
use fuser::{Errno, FileAttr, Request};

use super::super::table::{Ino, Inode, Table};
use super::attrs::now_ns;
use super::{errno, VolumeFs};

/// The kind and permission bits of a `mode` given to mknod.
pub(super) fn kind_of_mode(mode: u32) -> Option<NodeKind> {
    Some(match mode & libc_ifmt::MASK {
        libc_ifmt::REG | 0 => NodeKind::File,
        libc_ifmt::FIFO => NodeKind::Fifo,
        libc_ifmt::CHR => NodeKind::CharDevice,
        libc_ifmt::BLK => NodeKind::BlockDevice,
        libc_ifmt::SOCK => NodeKind::Socket,
        _ => return None,
    })
}

/// The `S_IF*` file type bits.
mod libc_ifmt {
    pub const MASK: u32 = 0o170000;
    pub const REG: u32 = 0o100000;
    pub const FIFO: u32 = 0o010000;
    pub const CHR: u32 = 0o020000;
    pub const BLK: u32 = 0o060000;
    pub const SOCK: u32 = 0o140000;
}

/// Sets a directory's mtime and ctime to `now` (an entry came or went).
fn touch_dir(table: &mut Table, ino: Ino, now: i64) {
    if let Ok(inode) = table.get_mut(ino) {
        inode.mtime = now;
        inode.ctime = now;
    }
}

impl VolumeFs {
    /// Makes a new entry `name` in `parent` of `kind`, as `req`'s user; its inode and attributes.
    pub(super) fn make(
        &self,
        req: &Request,
        parent: Ino,
        name: &OsStr,
        kind: NodeKind,
        mode: u32,
        fill: impl FnOnce(&mut Inode),
    ) -> Result<(Ino, FileAttr), Errno> {
        let now = now_ns();
        let mut table = self.volume.table();
        let parent_inode = table.get(parent).map_err(errno)?;
        // A directory with the set-group-ID bit gives its group, and to directories the bit.
        let (gid, mut mode) = if parent_inode.mode & 0o2000 != 0 {
            let bit = if kind == NodeKind::Dir { 0o2000 } else { 0 };
            (parent_inode.gid, mode | bit)
        } else {
            (req.gid(), mode)
        };
        if req.uid() != 0 && kind != NodeKind::Dir && gid != req.gid() {
            mode &= !0o2000;
        }
        let mut inode = Inode::new(kind, mode, req.uid(), gid, now);
        fill(&mut inode);
        let ino = table.create(parent, name.as_bytes(), inode).map_err(errno)?;
        touch_dir(&mut table, parent, now);
        let attr = self.attr(ino, table.get(ino).map_err(errno)?);
        drop(table);
        self.volume.changed();
        Ok((ino, attr))
    }

    /// Removes the name `name` of a file (not a directory) from `parent`.
    pub(super) fn remove(&self, parent: Ino, name: &OsStr) -> Result<(), Errno> {
        let now = now_ns();
        let mut table = self.volume.table();
        let ino = table.unlink(parent, name.as_bytes()).map_err(errno)?;
        touch_dir(&mut table, parent, now);
        if let Ok(inode) = table.get_mut(ino) {
            inode.ctime = now;
        }
        drop(table);
        self.volume.changed();
        Ok(())
    }

    /// Removes the empty directory `name` from `parent`.
    pub(super) fn remove_dir(&self, parent: Ino, name: &OsStr) -> Result<(), Errno> {
        let mut table = self.volume.table();
        table.rmdir(parent, name.as_bytes()).map_err(errno)?;
        touch_dir(&mut table, parent, now_ns());
        drop(table);
        self.volume.changed();
        Ok(())
    }

    /// Renames `from` to `to` (each a directory and a name): `noreplace` refuses an existing
    /// target, `exchange` swaps the two.
    pub(super) fn rename_entry(
        &self,
        from: (Ino, &OsStr),
        to: (Ino, &OsStr),
        noreplace: bool,
        exchange: bool,
    ) -> Result<(), Errno> {
        let now = now_ns();
        let mut table = self.volume.table();
        table
            .rename((from.0, from.1.as_bytes()), (to.0, to.1.as_bytes()), noreplace, exchange)
            .map_err(errno)?;
        touch_dir(&mut table, from.0, now);
        touch_dir(&mut table, to.0, now);
        if let Ok(ino) = table.lookup(to.0, to.1.as_bytes()) {
            if let Ok(inode) = table.get_mut(ino) {
                inode.ctime = now;
            }
        }
        drop(table);
        self.volume.changed();
        Ok(())
    }

    /// Gives `ino` the new name `name` in `parent`; its attributes after.
    pub(super) fn link_entry(
        &self,
        ino: Ino,
        parent: Ino,
        name: &OsStr,
    ) -> Result<FileAttr, Errno> {
        let now = now_ns();
        let mut table = self.volume.table();
        table.link(ino, parent, name.as_bytes()).map_err(errno)?;
        touch_dir(&mut table, parent, now);
        let inode = table.get_mut(ino).map_err(errno)?;
        inode.ctime = now;
        let attr = self.attr(ino, inode);
        drop(table);
        self.volume.changed();
        Ok(attr)
    }
}

#[cfg(test)]
mod tests {
    use super::super::attrs::ns_of;
    use super::*;
    use crate::snapshots::attrs::system_time;

    #[test]
    fn mknod_modes_name_their_kinds() {
        assert_eq!(kind_of_mode(0o100644), Some(NodeKind::File));
        assert_eq!(kind_of_mode(0o010600), Some(NodeKind::Fifo));
        assert_eq!(kind_of_mode(0o140755), Some(NodeKind::Socket));
        assert_eq!(kind_of_mode(0o040755), None);
        assert_eq!(ns_of(system_time(-1_500_000_000)), -1_500_000_000);
    }
}
