//! The volume's answers to the kernel's requests: this file takes each request and replies;
//! the work is done by [`names`] (entries), [`attrs`] (attributes), [`xattrs`] and [`data`]
//! (content, `close`, `fsync`). Metadata requests change the inode table under its lock; reads
//! and writes lock only the file they touch. `fsync` and `fsyncdir` commit the volume (the
//! kernel never sends `syncfs` to a /dev/fuse mount, only to virtiofs). What is not supported answers with its proper errno.
//!
//! The kernel keeps written pages in its writeback cache where it can and sends them in
//! requests of up to [`MAX_WRITE`] bytes, several at once; it reads ahead in large requests.
//! Errors still reach the caller: a write the cache took is stored at `close` or `fsync` at
//! the latest, which return what storing it met.

mod attrs;
mod data;
mod listings;
mod names;
mod privileges;
mod xattrs;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use dedup_store::format::NodeKind;
use fuser::{
    AccessFlags, Errno, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    ReplyXattr, Request, TimeOrNow, WriteFlags,
};
use rustix::io::Errno as Code;

use super::Volume;
use crate::snapshots::attrs::file_type;
use attrs::AttrChange;
use names::kind_of_mode;

/// How long the kernel may keep attributes and names: only this mount changes them, and it
/// tells the kernel each change in its replies. Long, because each expiry costs a request per
/// name of a path the kernel walks again (a copy of many small files walks the same ones).
const TTL: Duration = Duration::from_secs(60);

/// The largest write request asked of the kernel (it may grant less): a chunk's worth of
/// bytes per request rather than 128 KiB.
const MAX_WRITE: u32 = 1 << 20;

/// How far the kernel may read ahead of a sequential reader, at most (it may grant less).
const MAX_READAHEAD: u32 = 4 << 20;

/// Requests the kernel may have in flight at once (written pages, reads ahead).
const MAX_BACKGROUND: u16 = 64;

/// The FUSE file system of a volume.
pub struct VolumeFs {
    volume: Arc<Volume>,
    /// Whether the kernel caches writes (FUSE's writeback cache): it then places appends itself.
    writeback: bool,
    /// Whether the kernel leaves clearing set-user-ID and set-group-ID to the volume
    /// (`FUSE_HANDLE_KILLPRIV_V2`; see [`privileges`]).
    clears_ids: bool,
    /// The open directories' listings.
    listings: listings::Listings,
}

fn errno(code: Code) -> Errno {
    Errno::from_i32(code.raw_os_error())
}

impl VolumeFs {
    pub(in super::super) fn new(volume: Arc<Volume>) -> VolumeFs {
        VolumeFs { volume, writeback: false, clears_ids: false, listings: Default::default() }
    }
}

/// Replies to an entry request.
fn entry(reply: ReplyEntry, made: Result<fuser::FileAttr, Errno>) {
    match made {
        Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
        Err(e) => reply.error(e),
    }
}

/// Replies to a request answered by success or an errno.
fn empty(reply: ReplyEmpty, done: Result<(), Errno>) {
    match done {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(e),
    }
}

impl Filesystem for VolumeFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Each is asked for and taken as far as the kernel grants it: none is needed to serve.
        self.writeback = config.add_capabilities(InitFlags::FUSE_WRITEBACK_CACHE).is_ok();
        self.clears_ids = config.add_capabilities(InitFlags::FUSE_HANDLE_KILLPRIV_V2).is_ok();
        // `ls -l`, `du` or `tar` of a directory the kernel does not know yet (after a remount,
        // or once its names expired) in a request per buffer of entries with their attributes,
        // not a lookup per name; the kernel uses it where it helps.
        let listings = InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO;
        let _ = config.add_capabilities(listings & config.capabilities());
        if let Err(most) = config.set_max_write(MAX_WRITE) {
            let _ = config.set_max_write(most);
        }
        if let Err(most) = config.set_max_readahead(MAX_READAHEAD) {
            let _ = config.set_max_readahead(most);
        }
        if let Err(most) = config.set_max_background(MAX_BACKGROUND) {
            let _ = config.set_max_background(most);
        }
        let _ = config.set_congestion_threshold(MAX_BACKGROUND * 3 / 4);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = self.volume.table().lookup(parent.0, name.as_bytes());
        entry(reply, found.map_err(errno).and_then(|ino| self.attr_of(ino)));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr_of(ino.0) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let change = AttrChange { mode, uid, gid, size, atime, mtime, ctime };
        match self.set_attr(ino.0, change, req.pid()) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let table = self.volume.table();
        match table.get(ino.0) {
            Ok(inode) if inode.kind == NodeKind::Symlink => reply.data(&inode.target),
            Ok(_) => reply.error(errno(Code::INVAL)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let Some(kind) = kind_of_mode(mode) else { return reply.error(errno(Code::INVAL)) };
        let made = self.make(req, parent.0, name, kind, mode & !umask, |inode| {
            inode.rdev = u64::from(rdev);
        });
        entry(reply, made.map(|(_, attr)| attr));
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let made = self.make(req, parent.0, name, NodeKind::Dir, mode & !umask, |_| {});
        entry(reply, made.map(|(_, attr)| attr));
    }

    // `batch_forget` comes here too (fuser's default).
    fn forget(&self, _req: &Request, ino: INodeNo, _nlookup: u64) {
        self.volume.forget(ino.0);
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(reply, self.remove(parent.0, name));
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(reply, self.remove_dir(parent.0, name));
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let target = target.as_os_str().as_bytes().to_vec();
        let made = self.make(req, parent.0, link_name, NodeKind::Symlink, 0o777, |inode| {
            inode.target = target;
        });
        entry(reply, made.map(|(_, attr)| attr));
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if flags.contains(RenameFlags::RENAME_WHITEOUT) {
            return reply.error(errno(Code::INVAL));
        }
        let renamed = self.rename_entry(
            (parent.0, name),
            (newparent.0, newname),
            flags.contains(RenameFlags::RENAME_NOREPLACE),
            flags.contains(RenameFlags::RENAME_EXCHANGE),
        );
        empty(reply, renamed);
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        entry(reply, self.link_entry(ino.0, newparent.0, newname));
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self.volume.open_handle(ino.0, flags.0) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let Some(kind) = kind_of_mode(mode) else { return reply.error(errno(Code::INVAL)) };
        let (ino, attr) = match self.make(req, parent.0, name, kind, mode & !umask, |_| {}) {
            Ok(made) => made,
            Err(e) => return reply.error(e),
        };
        match self.volume.open_handle(ino, flags) {
            Ok(fh) => {
                reply.created(&TTL, &attr, Generation(0), FileHandle(fh), FopenFlags::empty())
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.read_data(ino.0, offset, size) {
            Ok(bytes) => reply.data(&bytes),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let clear_ids = write_flags.contains(WriteFlags::FUSE_WRITE_KILL_SUIDGID);
        match self.write_data(ino.0, fh.0, offset, data, clear_ids) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // `close` reports what storing the file's written bytes met.
        empty(reply, self.flush_data(ino.0));
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.volume.close_handle(fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _data: bool,
        reply: ReplyEmpty,
    ) {
        empty(reply, self.volume.commit_for_caller());
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _data: bool,
        reply: ReplyEmpty,
    ) {
        empty(reply, self.volume.commit_for_caller());
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.volume.table().get(ino.0) {
            Ok(inode) if inode.dir.is_some() => {
                reply.opened(FileHandle(self.listings.open()), FopenFlags::empty())
            }
            Ok(_) => reply.error(errno(Code::NOTDIR)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let table = self.volume.table();
        let listing = match self.listings.for_read(&table, ino.0, fh.0, offset) {
            Ok(listing) => listing,
            Err(e) => return reply.error(errno(e)),
        };
        for (at, name, child) in listings::from(&listing, offset) {
            // A name removed since the listing was taken is still listed (POSIX leaves it open).
            let kind = table.get(child).map_or(fuser::FileType::Directory, |i| file_type(i.kind));
            if reply.add(INodeNo(child), at, kind, OsStr::from_bytes(name)) {
                break;
            }
        }
        reply.ok();
    }

    fn readdirplus(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let table = self.volume.table();
        let listing = match self.listings.for_read(&table, ino.0, fh.0, offset) {
            Ok(listing) => listing,
            Err(e) => return reply.error(errno(e)),
        };
        for (at, name, child) in listings::from(&listing, offset) {
            // An entry is listed with the attributes a lookup of it would answer; a name
            // removed since the listing was taken has none, and is left out.
            let Ok(inode) = table.get(child) else { continue };
            let attr = self.attr(child, inode);
            let name = OsStr::from_bytes(name);
            if reply.add(INodeNo(child), at, name, &TTL, &attr, Generation(0)) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.listings.release(fh.0);
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let files = self.volume.table().inode_count() as u64;
        let (blocks, bfree, bavail, bsize) = self.volume.space();
        reply.statfs(blocks, bfree, bavail, files, u64::from(u32::MAX), bsize, 255, bsize);
    }

    fn setxattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        empty(reply, self.set_xattr(ino.0, name, value, flags));
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        self.get_xattr(ino.0, name, size, reply);
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        self.list_xattrs(ino.0, size, reply);
    }

    fn removexattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(reply, self.remove_xattr(ino.0, name));
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        // Mounted with `default_permissions`: the kernel has checked the mode bits already.
        reply.ok();
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        empty(reply, self.allocate(ino.0, offset, length, mode));
    }
}
