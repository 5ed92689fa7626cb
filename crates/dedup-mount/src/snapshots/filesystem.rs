//! The snapshot browser's answers to the kernel's requests (lookup, getattr, readdir,
//! readdirplus, readlink, open, read, xattrs), from the mounted tree and the file reader.
//! Read-only: whatever would write is refused by the kernel (the mount is `ro`) or answered with
//! EROFS. A tree or chunk that cannot be read is EIO for the reader and a problem for the
//! caller's [`MountEvents`], saying why.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dedup_store::file_reader::{FileReader, SnapshotFile};
use dedup_store::format::NodeKind;
use fuser::{
    Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenAccMode, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyXattr, Request,
};

use super::attrs::{self, Mounter};
use super::inodes::{Children, Ino, Inode, What};
use super::tree::MountTree;
use crate::events::{Doing, MountEvents, MountProblem};

/// How long the kernel may keep what it was told about a snapshot's entries: they never change.
const ENTRY_TTL: Duration = Duration::from_secs(3600);
/// ... and about the top (snapshots come and go while mounted; see `top`).
const TOP_TTL: Duration = Duration::from_secs(1);

fn ttl(inode: &Inode) -> Duration {
    match inode.what {
        What::Entry(_) => ENTRY_TTL,
        _ => TOP_TTL,
    }
}

thread_local! {
    /// Each serving thread's read buffer, kept from read to read (as large as the largest read
    /// the kernel asked for, 1 MiB or so): a read is not an allocation and a zeroing.
    static READ_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The mounted snapshots.
pub struct SnapshotFs {
    tree: MountTree,
    reader: FileReader,
    mounter: Mounter,
    events: Box<dyn MountEvents>,
    /// The open regular files.
    handles: Mutex<HashMap<u64, Arc<SnapshotFile>>>,
    next_handle: AtomicU64,
}

impl SnapshotFs {
    /// The file system of `tree`, reading content with `reader`, owned by `mounter`; problems
    /// go to `events`.
    pub(super) fn new(
        tree: MountTree,
        reader: FileReader,
        mounter: Mounter,
        events: Box<dyn MountEvents>,
    ) -> SnapshotFs {
        SnapshotFs {
            tree,
            reader,
            mounter,
            events,
            handles: Mutex::new(HashMap::new()),
            next_handle: AtomicU64::new(1),
        }
    }

    fn inode(&self, ino: INodeNo) -> Result<Arc<Inode>, Errno> {
        self.tree.get(ino.0).ok_or(Errno::ENOENT)
    }

    fn attr(&self, ino: Ino, inode: &Inode) -> fuser::FileAttr {
        attrs::attr(&self.tree, ino, inode, self.mounter)
    }

    /// Tells of a tree or chunk that could not be read.
    fn problem(&self, doing: Doing, ino: Ino, error: dedup_store::Error) {
        let place = self.tree.place_of(ino);
        self.events.problem(MountProblem { doing, ino, place, error });
    }

    /// Directory `ino`'s parent and entries (shared with the inode table, so reading a large
    /// directory buffer by buffer copies no names).
    fn listing(&self, ino: INodeNo) -> Result<(Ino, Arc<Children>), Errno> {
        let inode = self.inode(ino)?;
        if !inode.is_dir() {
            return Err(Errno::ENOTDIR);
        }
        let children = self.tree.children(ino.0).map_err(|err| {
            self.problem(Doing::Listing, ino.0, err);
            Errno::EIO
        })?;
        Ok((inode.parent, children))
    }

    fn handle(&self, fh: FileHandle) -> Option<Arc<SnapshotFile>> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).get(&fh.0).cloned()
    }
}

/// The entries of a directory from position `offset` on (`.` and `..` are 0 and 1), each with
/// its position.
fn entries_from<'a>(
    dir: Ino,
    parent: Ino,
    children: &'a Children,
    offset: u64,
) -> impl Iterator<Item = (u64, &'a [u8], Ino)> + 'a {
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let dots = [(0, &b"."[..], dir), (1, &b".."[..], parent)].into_iter().skip(skip);
    // Sliced, not skipped one by one: a large directory is read in hundreds of calls.
    let from = skip.saturating_sub(2).min(children.entries.len());
    let rest = children.entries[from..]
        .iter()
        .enumerate()
        .map(move |(n, (name, ino))| ((from + n) as u64 + 2, name.as_slice(), *ino));
    dots.chain(rest)
}

/// An xattr list or value as the kernel asks for it: its length when `size` is 0, else the
/// bytes if they fit.
pub(crate) fn xattr_reply(reply: ReplyXattr, size: u32, bytes: &[u8]) {
    if size == 0 {
        reply.size(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
    } else if bytes.len() > size as usize {
        reply.error(Errno::ERANGE);
    } else {
        reply.data(bytes);
    }
}

impl Filesystem for SnapshotFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // `ls -l` of a large directory in one round trip per buffer, not one per entry; the
        // kernel turns it on only where it helps.
        let wanted = InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO;
        let _ = config.add_capabilities(wanted & config.capabilities());
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let name = name.as_bytes();
        let found = match self.tree.children(parent.0) {
            Ok(children) => children.find(name).or_else(|| self.tree.by_id(parent.0, name)),
            Err(err) => {
                self.problem(Doing::Listing, parent.0, err);
                return reply.error(Errno::EIO);
            }
        };
        match found.and_then(|ino| Some((ino, self.tree.get(ino)?))) {
            Some((ino, inode)) => reply.entry(&ttl(&inode), &self.attr(ino, &inode), Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.inode(ino) {
            Ok(inode) => reply.attr(&ttl(&inode), &self.attr(ino.0, &inode)),
            Err(errno) => reply.error(errno),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let inode = match self.inode(ino) {
            Ok(inode) => inode,
            Err(errno) => return reply.error(errno),
        };
        match &inode.what {
            What::Link(target) => reply.data(target),
            What::Entry(node) if node.kind == NodeKind::Symlink => reply.data(&node.target),
            _ => reply.error(Errno::EINVAL),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        if flags.acc_mode() != OpenAccMode::O_RDONLY {
            return reply.error(Errno::EROFS);
        }
        let inode = match self.inode(ino) {
            Ok(inode) => inode,
            Err(errno) => return reply.error(errno),
        };
        if matches!(&inode.what, What::Entry(node) if node.incomplete) {
            // Its content is not what the file held: reading it must fail, not pass for it.
            let why = dedup_store::restore::NOT_READ_WHOLE;
            self.problem(Doing::Opening, ino.0, dedup_store::Error::Invalid(why.to_string()));
            return reply.error(Errno::EIO);
        }
        let Some(layout) = self.tree.layout(&inode) else {
            return reply.error(if inode.is_dir() { Errno::EISDIR } else { Errno::EINVAL });
        };
        let fh = self.next_handle.fetch_add(1, Ordering::Relaxed);
        let file = Arc::new(self.reader.open_layout(layout));
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).insert(fh, file);
        // The content never changes: pages the kernel cached stay valid across opens.
        reply.opened(FileHandle(fh), FopenFlags::FOPEN_KEEP_CACHE);
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let Some(file) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        READ_BUFFER.with_borrow_mut(|buffer| {
            // As large as asked even past the end: a file whose content ends early (a chunk
            // missing from the index) fails a read there, where an empty buffer would read as
            // its end.
            let size = size as usize;
            if buffer.len() < size {
                buffer.resize(size, 0);
            }
            match file.read_at(offset, &mut buffer[..size]) {
                Ok(read) => reply.data(&buffer[..read]),
                Err(err) => {
                    self.problem(Doing::Reading, ino.0, err);
                    reply.error(Errno::EIO)
                }
            }
        })
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
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).remove(&fh.0);
        reply.ok();
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.inode(ino) {
            // The top's folders change when snapshots come or go: listed anew each time.
            Ok(inode) if matches!(inode.what, What::Folder) => {
                reply.opened(FileHandle(0), FopenFlags::empty())
            }
            // A snapshot's listing never changes: the kernel may keep it and answer the next
            // `ls` itself.
            Ok(inode) if inode.is_dir() => reply
                .opened(FileHandle(0), FopenFlags::FOPEN_CACHE_DIR | FopenFlags::FOPEN_KEEP_CACHE),
            Ok(_) => reply.error(Errno::ENOTDIR),
            Err(errno) => reply.error(errno),
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
        let (parent, children) = match self.listing(ino) {
            Ok(listing) => listing,
            Err(errno) => return reply.error(errno),
        };
        for (at, name, child) in entries_from(ino.0, parent, &children, offset) {
            let kind = match self.tree.get(child) {
                Some(inode) => attrs::inode_type(&inode),
                None => FileType::Directory,
            };
            if reply.add(INodeNo(child), at + 1, kind, OsStr::from_bytes(name)) {
                break;
            }
        }
        reply.ok();
    }

    fn readdirplus(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let (parent, children) = match self.listing(ino) {
            Ok(listing) => listing,
            Err(errno) => return reply.error(errno),
        };
        for (at, name, child) in entries_from(ino.0, parent, &children, offset) {
            let Some(inode) = self.tree.get(child) else { continue };
            let attr = self.attr(child, &inode);
            let name = OsStr::from_bytes(name);
            if reply.add(INodeNo(child), at + 1, name, &ttl(&inode), &attr, Generation(0)) {
                break;
            }
        }
        reply.ok();
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let inode = match self.inode(ino) {
            Ok(inode) => inode,
            Err(errno) => return reply.error(errno),
        };
        let value = inode
            .node()
            .and_then(|node| node.xattrs.iter().find(|(key, _)| key.as_slice() == name.as_bytes()));
        match value {
            Some((_, value)) => xattr_reply(reply, size, value),
            None => reply.error(Errno::NO_XATTR),
        }
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let inode = match self.inode(ino) {
            Ok(inode) => inode,
            Err(errno) => return reply.error(errno),
        };
        let mut names = Vec::new();
        for (key, _) in inode.node().map(|node| node.xattrs.as_slice()).unwrap_or_default() {
            names.extend_from_slice(key);
            names.push(0);
        }
        xattr_reply(reply, size, &names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(offset: u64) -> Vec<(u64, Vec<u8>, Ino)> {
        let children = Children { entries: vec![(b"a".to_vec(), 10), (b"b".to_vec(), 11)] };
        entries_from(5, 4, &children, offset)
            .map(|(at, name, ino)| (at, name.to_vec(), ino))
            .collect()
    }

    #[test]
    fn a_listing_goes_on_from_any_offset() {
        let all = listed(0);
        let names: Vec<&[u8]> = all.iter().map(|e| e.1.as_slice()).collect();
        assert_eq!(names, [&b"."[..], b"..", b"a", b"b"]);
        assert_eq!(
            all.iter().map(|e| (e.0, e.2)).collect::<Vec<_>>(),
            [(0, 5), (1, 4), (2, 10), (3, 11)]
        );
        for offset in 0..=5 {
            assert_eq!(listed(offset), all[(offset as usize).min(4)..], "offset {offset}");
        }
    }
}
