//! The volume's answers to the kernel's requests. Metadata requests change the inode table
//! under its lock; reads and writes lock only the file they touch. A write lands in memory and
//! is cut into chunks (stored through the volume's sink) once enough of it has come, at
//! `close` and at a commit; a store error is returned to the write, `close` (flush) or `fsync`
//! that meets it, and written bytes stay in memory until they are stored. `fsync`, `fsyncdir`
//! and `syncfs` commit the volume. What is not supported answers with its proper errno.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dedup_store::format::NodeKind;
use fuser::{
    AccessFlags, Errno, FileAttr, FileHandle, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
    WriteFlags,
};
use rustix::io::Errno as Code;

use super::table::{Ino, Inode};
use super::Volume;
use crate::snapshots::attrs::{file_type, system_time};
use crate::snapshots::filesystem::xattr_reply;

/// How long the kernel may keep attributes and names: only this mount changes them, and it
/// tells the kernel each change in its replies.
const TTL: Duration = Duration::from_secs(1);

/// Written bytes of one file from which the decided part is cut and stored during the writes.
const CUT_FROM: u64 = 32 << 20;

/// The FUSE file system of a volume.
pub struct VolumeFs {
    volume: Arc<Volume>,
}

fn errno(code: Code) -> Errno {
    Errno::from_i32(code.raw_os_error())
}

fn now_ns() -> i64 {
    dedup_store::repo::now_ns()
}

fn ns_of(time: SystemTime) -> i64 {
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

/// The kind and permission bits of a `mode` given to mknod.
fn kind_of_mode(mode: u32) -> Option<NodeKind> {
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

/// `fallocate` modes.
const FALLOC_FL_KEEP_SIZE: i32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: i32 = 0x02;
const FALLOC_FL_ZERO_RANGE: i32 = 0x10;

/// `setxattr` flags.
const XATTR_CREATE: i32 = 1;
const XATTR_REPLACE: i32 = 2;

impl VolumeFs {
    pub(super) fn new(volume: Arc<Volume>) -> VolumeFs {
        VolumeFs { volume }
    }

    fn attr(&self, ino: Ino, inode: &Inode) -> FileAttr {
        let (size, allocated) = match (&inode.file, &inode.damaged) {
            (_, Some((_, size))) => (*size, *size),
            (Some(file), None) => {
                let content = file.lock().unwrap_or_else(|e| e.into_inner());
                (content.size(), content.allocated())
            }
            (None, None) => (inode.target.len() as u64, 0),
        };
        let nlink = match &inode.dir {
            Some(_) => 2 + self.volume.table().subdirs(ino),
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

    /// The attributes of `ino`, read under the table lock.
    fn attr_of(&self, ino: Ino) -> Result<FileAttr, Errno> {
        let table = self.volume.table();
        let inode = table.get(ino).map_err(errno)?.clone();
        drop(table);
        Ok(self.attr(ino, &inode))
    }

    /// Makes a new entry `name` in `parent` of `kind`, as `req`'s user; replies with it.
    fn make(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        kind: NodeKind,
        mode: u32,
        fill: impl FnOnce(&mut Inode),
    ) -> Result<(Ino, FileAttr), Errno> {
        let now = now_ns();
        let mut table = self.volume.table();
        let parent_inode = table.get(parent.0).map_err(errno)?;
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
        let ino = table.create(parent.0, name.as_bytes(), inode).map_err(errno)?;
        touch_dir(&mut table, parent.0, now);
        let inode = table.get(ino).map_err(errno)?.clone();
        drop(table);
        self.volume.changed();
        Ok((ino, self.attr(ino, &inode)))
    }

    /// Runs `change` on `ino`'s content with the store's fetch, and marks the volume changed.
    fn with_content<T>(
        &self,
        ino: Ino,
        change: impl FnOnce(&mut super::content::Content, &Volume) -> Result<T, Errno>,
    ) -> Result<T, Errno> {
        let file = {
            let table = self.volume.table();
            let inode = table.get(ino).map_err(errno)?;
            if inode.damaged.is_some() {
                return Err(errno(Code::IO));
            }
            match (&inode.file, &inode.dir) {
                (Some(file), _) => Arc::clone(file),
                (None, Some(_)) => return Err(errno(Code::ISDIR)),
                (None, None) => return Err(errno(Code::INVAL)),
            }
        };
        let mut content = file.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut content, &self.volume)
    }

    fn handle(&self, fh: FileHandle) -> Option<(Ino, bool)> {
        self.volume.handles().get(&fh.0).copied()
    }
}

/// Sets a directory's mtime and ctime to `now` (an entry came or went).
fn touch_dir(table: &mut super::table::Table, ino: Ino, now: i64) {
    if let Ok(inode) = table.get_mut(ino) {
        inode.mtime = now;
        inode.ctime = now;
    }
}

impl Filesystem for VolumeFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = self.volume.table().lookup(parent.0, name.as_bytes());
        match found.map_err(errno).and_then(|ino| self.attr_of(ino)) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr_of(ino.0) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
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
        let now = now_ns();
        if let Some(size) = size {
            let resized = self.with_content(ino.0, |content, volume| {
                content
                    .set_size(size, &mut |id| volume.store().fetch(id))
                    .map_err(|e| volume.failure(e))
            });
            if let Err(e) = resized {
                return reply.error(e);
            }
        }
        let mut table = self.volume.table();
        let inode = match table.get_mut(ino.0) {
            Ok(inode) => inode,
            Err(e) => return reply.error(errno(e)),
        };
        if let Some(mode) = mode {
            inode.mode = mode & 0o7777;
        }
        if uid.is_some() || gid.is_some() {
            inode.uid = uid.unwrap_or(inode.uid);
            inode.gid = gid.unwrap_or(inode.gid);
            // chown clears set-user-ID and set-group-ID of a file, as Linux does.
            if inode.kind != NodeKind::Dir {
                inode.mode &= !0o6000;
            }
        }
        if let Some(atime) = atime {
            inode.atime = time_of(atime);
        }
        if let Some(mtime) = mtime {
            inode.mtime = time_of(mtime);
        }
        if size.is_some() && mtime.is_none() {
            inode.mtime = now;
        }
        inode.ctime = ctime.map_or(now, ns_of);
        let inode = inode.clone();
        drop(table);
        self.volume.changed();
        reply.attr(&TTL, &self.attr(ino.0, &inode));
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
        let made = self.make(req, parent, name, kind, mode & !umask, |inode| {
            inode.rdev = u64::from(rdev);
        });
        match made {
            Ok((_, attr)) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
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
        match self.make(req, parent, name, NodeKind::Dir, mode & !umask, |_| {}) {
            Ok((_, attr)) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let now = now_ns();
        let mut table = self.volume.table();
        match table.unlink(parent.0, name.as_bytes()) {
            Ok(ino) => {
                touch_dir(&mut table, parent.0, now);
                if let Ok(inode) = table.get_mut(ino) {
                    inode.ctime = now;
                }
                drop(table);
                self.volume.changed();
                reply.ok()
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut table = self.volume.table();
        match table.rmdir(parent.0, name.as_bytes()) {
            Ok(()) => {
                touch_dir(&mut table, parent.0, now_ns());
                drop(table);
                self.volume.changed();
                reply.ok()
            }
            Err(e) => reply.error(errno(e)),
        }
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
        match self.make(req, parent, link_name, NodeKind::Symlink, 0o777, |inode| {
            inode.target = target;
        }) {
            Ok((_, attr)) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
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
        let now = now_ns();
        let mut table = self.volume.table();
        let renamed = table.rename(
            (parent.0, name.as_bytes()),
            (newparent.0, newname.as_bytes()),
            flags.contains(RenameFlags::RENAME_NOREPLACE),
            flags.contains(RenameFlags::RENAME_EXCHANGE),
        );
        match renamed {
            Ok(()) => {
                touch_dir(&mut table, parent.0, now);
                touch_dir(&mut table, newparent.0, now);
                if let Ok(ino) = table.lookup(newparent.0, newname.as_bytes()) {
                    if let Ok(inode) = table.get_mut(ino) {
                        inode.ctime = now;
                    }
                }
                drop(table);
                self.volume.changed();
                reply.ok()
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let now = now_ns();
        let mut table = self.volume.table();
        if let Err(e) = table.link(ino.0, newparent.0, newname.as_bytes()) {
            return reply.error(errno(e));
        }
        touch_dir(&mut table, newparent.0, now);
        let inode = match table.get_mut(ino.0) {
            Ok(inode) => {
                inode.ctime = now;
                inode.clone()
            }
            Err(e) => return reply.error(errno(e)),
        };
        drop(table);
        self.volume.changed();
        reply.entry(&TTL, &self.attr(ino.0, &inode), Generation(0));
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
        let (ino, attr) = match self.make(req, parent, name, kind, mode & !umask, |_| {}) {
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
        let read = self.with_content(ino.0, |content, volume| {
            let mut buffer = vec![0; size as usize];
            let n = content
                .read(offset, &mut buffer, &mut |id| volume.store().fetch(id))
                .map_err(|e| volume.failure(e))?;
            buffer.truncate(n);
            Ok(buffer)
        });
        match read {
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
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let append = self.handle(fh).is_some_and(|(_, append)| append);
        let written = self.with_content(ino.0, |content, volume| {
            let at = if append { content.size() } else { offset };
            if at.checked_add(data.len() as u64).is_none_or(|end| end > i64::MAX as u64) {
                return Err(errno(Code::FBIG));
            }
            content
                .write(at, data, &mut |id| volume.store().fetch(id))
                .map_err(|e| volume.failure(e))?;
            if content.fresh_bytes() >= CUT_FROM {
                volume.cut(content, false)?;
            }
            Ok(())
        });
        if let Err(e) = written {
            return reply.error(e);
        }
        let now = now_ns();
        if let Ok(inode) = self.volume.table().get_mut(ino.0) {
            inode.mtime = now;
            inode.ctime = now;
            // A write by anyone clears set-user-ID (and set-group-ID with group execute).
            if inode.mode & 0o4000 != 0 || inode.mode & 0o2010 == 0o2010 {
                inode.mode &= !0o6000;
            }
        }
        self.volume.changed();
        reply.written(data.len() as u32);
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
        let cut = self.with_content(ino.0, |content, volume| volume.cut(content, true));
        match cut.and_then(|()| self.volume.take_failure()) {
            Ok(()) => reply.ok(),
            Err(e) if e.code() == Code::ISDIR.raw_os_error() => reply.ok(),
            Err(e) => reply.error(e),
        }
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
        match self.volume.commit_for_caller() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _data: bool,
        reply: ReplyEmpty,
    ) {
        match self.volume.commit_for_caller() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.volume.table().get(ino.0) {
            Ok(inode) if inode.dir.is_some() => reply.opened(FileHandle(0), FopenFlags::empty()),
            Ok(_) => reply.error(errno(Code::NOTDIR)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let table = self.volume.table();
        let (parent, entries) = match table.listing(ino.0) {
            Ok(listing) => listing,
            Err(e) => return reply.error(errno(e)),
        };
        let dots = [(b".".to_vec(), ino.0), (b"..".to_vec(), parent)];
        let all = dots.into_iter().chain(entries);
        for (n, (name, child)) in all.enumerate().skip(offset as usize) {
            let kind = table.get(child).map_or(fuser::FileType::Directory, |i| file_type(i.kind));
            if reply.add(INodeNo(child), n as u64 + 1, kind, OsStr::from_bytes(&name)) {
                break;
            }
        }
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
        let name = name.as_bytes();
        if name.starts_with(b"system.posix_acl_") {
            // No POSIX ACLs: refused, so that a copying program sets the mode bits instead
            // (cp -a sets permissions through the ACL attribute where it is taken).
            return reply.error(errno(Code::OPNOTSUPP));
        }
        if name.len() > 255 || value.len() > 1 << 16 {
            return reply.error(errno(Code::RANGE));
        }
        let mut table = self.volume.table();
        let inode = match table.get_mut(ino.0) {
            Ok(inode) => inode,
            Err(e) => return reply.error(errno(e)),
        };
        let present = inode.xattrs.contains_key(name);
        if flags & XATTR_CREATE != 0 && present {
            return reply.error(errno(Code::EXIST));
        }
        if flags & XATTR_REPLACE != 0 && !present {
            return reply.error(Errno::NO_XATTR);
        }
        inode.xattrs.insert(name.to_vec(), value.to_vec());
        inode.ctime = now_ns();
        drop(table);
        self.volume.changed();
        reply.ok();
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let table = self.volume.table();
        let inode = match table.get(ino.0) {
            Ok(inode) => inode,
            Err(e) => return reply.error(errno(e)),
        };
        match inode.xattrs.get(name.as_bytes()) {
            Some(value) => xattr_reply(reply, size, value),
            None => reply.error(Errno::NO_XATTR),
        }
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let table = self.volume.table();
        let inode = match table.get(ino.0) {
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

    fn removexattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut table = self.volume.table();
        let inode = match table.get_mut(ino.0) {
            Ok(inode) => inode,
            Err(e) => return reply.error(errno(e)),
        };
        if inode.xattrs.remove(name.as_bytes()).is_none() {
            return reply.error(Errno::NO_XATTR);
        }
        inode.ctime = now_ns();
        drop(table);
        self.volume.changed();
        reply.ok();
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
        let keep_size = mode & FALLOC_FL_KEEP_SIZE != 0;
        let zero = mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0;
        if mode & !(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0
            || (mode & FALLOC_FL_PUNCH_HOLE != 0 && !keep_size)
        {
            // Collapsing and inserting ranges move data: not supported.
            return reply.error(errno(Code::OPNOTSUPP));
        }
        let Some(end) = offset.checked_add(length).filter(|&end| end <= i64::MAX as u64) else {
            return reply.error(errno(Code::FBIG));
        };
        // Space cannot be reserved in a deduplicating store: allocating extends the file with
        // a hole, as on a file system with compression; the bytes are paid for when written.
        let changed = self.with_content(ino.0, |content, volume| {
            let mut fetch = |id: &dedup_store::Id| volume.store().fetch(id);
            if zero {
                content.punch(offset, length, &mut fetch).map_err(|e| volume.failure(e))?;
            }
            if !keep_size && end > content.size() {
                content.set_size(end, &mut fetch).map_err(|e| volume.failure(e))?;
            }
            Ok(())
        });
        match changed {
            Ok(()) => {
                let now = now_ns();
                if let Ok(inode) = self.volume.table().get_mut(ino.0) {
                    inode.mtime = now;
                    inode.ctime = now;
                }
                self.volume.changed();
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mknod_modes_name_their_kinds() {
        assert_eq!(kind_of_mode(0o100644), Some(NodeKind::File));
        assert_eq!(kind_of_mode(0o010600), Some(NodeKind::Fifo));
        assert_eq!(kind_of_mode(0o140755), Some(NodeKind::Socket));
        assert_eq!(kind_of_mode(0o040755), None);
        assert_eq!(ns_of(system_time(-1_500_000_000)), -1_500_000_000);
    }
}
