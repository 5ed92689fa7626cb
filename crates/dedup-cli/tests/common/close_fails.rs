//! A file system whose `close` fails, as NFS and SMB report a write-back that failed after
//! `write` returned: a flat, in-memory directory served over FUSE in the test's own process,
//! whose every FLUSH (sent by the kernel at each `close`) answers `EIO`. `write` succeeds and
//! the bytes are kept, so only a tool that looks at what `close` says can tell that its file
//! did not land. Enough of a file system for a report or a log written into it: files in one
//! directory, created, written, read, renamed, truncated and removed.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, LockOwner, MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};

const ROOT: u64 = 1;
const TTL: Duration = Duration::from_secs(0);

/// The mounted file system; unmounted when dropped.
pub struct CloseFails {
    pub point: PathBuf,
    _session: BackgroundSession,
}

impl CloseFails {
    /// Mounts it on `point`, an empty directory; `None` (skipped, or a failure under
    /// DEDUP_TEST_REQUIRE_ALL=1) where FUSE cannot be used.
    pub fn mount(test: &str, point: &Path) -> Option<CloseFails> {
        if !super::require(Path::new("/dev/fuse").exists(), test, "/dev/fuse is missing") {
            return None;
        }
        let mut config = Config::default();
        config.mount_options = vec![MountOption::RW, MountOption::FSName("close-fails".into())];
        let session = fuser::spawn_mount(Flat::default(), point, &config);
        let session = match session {
            Ok(session) => session,
            Err(e) => {
                super::require(false, test, &format!("cannot mount FUSE: {e}"));
                return None;
            }
        };
        Some(CloseFails { point: point.to_path_buf(), _session: session })
    }

    /// The bytes the file `name` holds (kept although its close failed).
    pub fn path(&self, name: &str) -> PathBuf {
        self.point.join(name)
    }
}

#[derive(Default)]
struct Flat {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    names: BTreeMap<OsString, u64>,
    files: BTreeMap<u64, Vec<u8>>,
    last: u64,
}

fn attr(ino: u64, size: u64) -> FileAttr {
    let now = SystemTime::now();
    let (kind, perm, nlink) = if ino == ROOT {
        (FileType::Directory, 0o777, 2)
    } else {
        (FileType::RegularFile, 0o644, 1)
    };
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind,
        perm,
        nlink,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl State {
    fn attr(&self, ino: u64) -> Option<FileAttr> {
        if ino == ROOT {
            return Some(attr(ROOT, 0));
        }
        self.files.get(&ino).map(|data| attr(ino, data.len() as u64))
    }
}

impl Flat {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Filesystem for Flat {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let state = self.state();
        match state.names.get(name).filter(|_| parent.0 == ROOT).and_then(|&i| state.attr(i)) {
            Some(attr) => reply.entry(&TTL, &attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.state().attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut state = self.state();
        if let (Some(size), Some(data)) = (size, state.files.get_mut(&ino.0)) {
            data.resize(size as usize, 0);
        }
        match state.attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        if parent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        let mut state = self.state();
        state.last = state.last.max(ROOT) + 1;
        let ino = state.last;
        state.names.insert(name.to_owned(), ino);
        state.files.insert(ino, Vec::new());
        reply.created(&TTL, &attr(ino, 0), Generation(0), FileHandle(0), FopenFlags::empty());
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut state = self.state();
        match state.files.get_mut(&ino.0) {
            Some(data) => {
                if flags.0 & libc::O_TRUNC != 0 {
                    data.clear();
                }
                reply.opened(FileHandle(0), FopenFlags::empty())
            }
            None => reply.error(Errno::ENOENT),
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
        let state = self.state();
        let Some(data) = state.files.get(&ino.0) else { return reply.error(Errno::ENOENT) };
        let start = (offset as usize).min(data.len());
        let end = (start + size as usize).min(data.len());
        reply.data(&data[start..end]);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        bytes: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut state = self.state();
        let Some(data) = state.files.get_mut(&ino.0) else { return reply.error(Errno::ENOENT) };
        let end = offset as usize + bytes.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[offset as usize..end].copy_from_slice(bytes);
        reply.written(bytes.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // What NFS says when the server refused the write-back of the file's pages.
        reply.error(Errno::EIO);
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut state = self.state();
        match state.names.remove(name).filter(|_| parent.0 == ROOT) {
            Some(ino) => {
                state.files.remove(&ino);
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        _flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut state = self.state();
        if parent.0 != ROOT || newparent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        match state.names.remove(name) {
            Some(ino) => {
                if let Some(old) = state.names.insert(newname.to_owned(), ino) {
                    state.files.remove(&old);
                }
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
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
        if ino.0 != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let state = self.state();
        let dots = [
            (ROOT, FileType::Directory, OsStr::new(".")),
            (ROOT, FileType::Directory, OsStr::new("..")),
        ];
        let files = state.names.iter().map(|(n, &i)| (i, FileType::RegularFile, n.as_os_str()));
        for (k, (ino, kind, name)) in
            dots.into_iter().chain(files).enumerate().skip(offset as usize)
        {
            if reply.add(INodeNo(ino), (k + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
