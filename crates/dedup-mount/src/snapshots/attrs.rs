//! What `stat` shows for each inode of the mount: an entry of a snapshot as it was backed up
//! (kind, permission bits, owner, size, times, link count, device number); the mount's own
//! directories and links read-only, owned by the user who mounted, dated by their snapshot.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dedup_store::format::{Node, NodeKind};
use fuser::{FileAttr, FileType, INodeNo};

use super::inodes::{Ino, Inode, What};
use super::tree::MountTree;

/// `st_blksize`: what `cp` and `cat` take as a good read size.
const BLOCK_SIZE: u32 = 128 << 10;

/// A time in ns since the epoch.
pub fn system_time(ns: i64) -> SystemTime {
    let magnitude = Duration::from_nanos(ns.unsigned_abs());
    if ns >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH.checked_sub(magnitude).unwrap_or(UNIX_EPOCH)
    }
}

/// The kind `stat` shows for a snapshot entry.
pub fn file_type(kind: NodeKind) -> FileType {
    match kind {
        NodeKind::File => FileType::RegularFile,
        NodeKind::Dir => FileType::Directory,
        NodeKind::Symlink => FileType::Symlink,
        NodeKind::Fifo => FileType::NamedPipe,
        NodeKind::CharDevice => FileType::CharDevice,
        NodeKind::BlockDevice => FileType::BlockDevice,
        NodeKind::Socket => FileType::Socket,
    }
}

/// The kind of an inode.
pub fn inode_type(inode: &Inode) -> FileType {
    match &inode.what {
        What::Folder | What::SnapshotRoot(_) => FileType::Directory,
        What::Link(_) => FileType::Symlink,
        What::Entry(node) => file_type(node.kind),
    }
}

/// A device number as glibc's `dev_t` (what backup recorded) in the kernel's 32-bit encoding
/// (what FUSE passes on): 12 bits of major, 20 of minor.
fn kernel_dev(rdev: u64) -> u32 {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    ((minor & 0xff) | ((major & 0xfff) << 8) | ((minor & !0xff) << 12)) as u32
}

/// Who mounted: the owner of the mount's own inodes.
#[derive(Clone, Copy)]
pub struct Mounter {
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
    /// When the mount was made.
    pub time: SystemTime,
}

/// The attributes of `inode` (number `ino`); `size` is a regular file's content length.
pub fn attr(tree: &MountTree, ino: Ino, inode: &Inode, mounter: Mounter) -> FileAttr {
    let mut attr = FileAttr {
        ino: INodeNo(ino),
        size: 0,
        blocks: 0,
        atime: mounter.time,
        mtime: mounter.time,
        ctime: mounter.time,
        crtime: mounter.time,
        kind: inode_type(inode),
        perm: 0o555,
        nlink: 1,
        uid: mounter.uid,
        gid: mounter.gid,
        rdev: 0,
        blksize: BLOCK_SIZE,
        flags: 0,
    };
    match &inode.what {
        What::Folder => {
            let time = tree.top().newest_time().map_or(mounter.time, system_time);
            (attr.atime, attr.mtime, attr.ctime, attr.crtime) = (time, time, time, time);
        }
        What::SnapshotRoot(n) => {
            let time = system_time(tree.top().snapshot_time_and_tree(*n).0);
            (attr.atime, attr.mtime, attr.ctime, attr.crtime) = (time, time, time, time);
        }
        What::Link(target) => {
            attr.perm = 0o777;
            attr.size = target.len() as u64;
        }
        What::Entry(node) => entry_attr(&mut attr, node, tree, inode),
    }
    attr
}

fn entry_attr(attr: &mut FileAttr, node: &Node, tree: &MountTree, inode: &Inode) {
    attr.perm = (node.mode & 0o7777) as u16;
    attr.uid = node.uid;
    attr.gid = node.gid;
    attr.atime = system_time(node.atime);
    attr.mtime = system_time(node.mtime);
    // Trees of version 2 do not keep the ctime (it reads 0): the mtime is the last change known.
    attr.ctime = system_time(if node.ctime == 0 { node.mtime } else { node.ctime });
    attr.crtime = attr.mtime;
    attr.size = match node.kind {
        NodeKind::File if node.incomplete => tree.layout(inode).map_or(node.size, |l| l.len()),
        NodeKind::File => node.size,
        NodeKind::Symlink => node.target.len() as u64,
        _ => 0,
    };
    attr.blocks = attr.size.div_ceil(512);
    attr.nlink = match node.kind {
        // A directory's count of subdirectories is not known until it is read: 1 says so
        // (fts and find then do not count on it).
        NodeKind::Dir => 1,
        _ => u32::try_from(node.nlink.max(1)).unwrap_or(u32::MAX),
    };
    if matches!(node.kind, NodeKind::CharDevice | NodeKind::BlockDevice) {
        attr.rdev = kernel_dev(node.rdev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_keep_major_and_minor() {
        // glibc's makedev(major, minor).
        let makedev = |major: u64, minor: u64| {
            ((major & 0xfff) << 8)
                | ((major & !0xfff) << 32)
                | (minor & 0xff)
                | ((minor & !0xff) << 12)
        };
        assert_eq!(kernel_dev(makedev(8, 1)), 0x801);
        assert_eq!(kernel_dev(makedev(259, 0x10003)), 3 | (259 << 8) | (0x10000 << 12));
    }

    #[test]
    fn times_before_the_epoch_stay_before_it() {
        assert_eq!(system_time(1_500_000_000), UNIX_EPOCH + Duration::new(1, 500_000_000));
        assert_eq!(system_time(-1_000_000_000), UNIX_EPOCH - Duration::from_secs(1));
    }
}
