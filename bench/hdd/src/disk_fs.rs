//! The FUSE file system: one directory holding `disk.img`, the image file whose reads and
//! writes the disk model delays, and `stats`, the model's running totals (read at no cost;
//! writing `reset` to it empties the drive's cache and parks the head, for a cold run).
//!
//! The session runs on one thread, so requests are served one at a time, in the order the
//! kernel queued them, like a disk without command queueing. Each reply leaves when the model
//! says the disk would have finished: the request starts when it arrives or when the request
//! before it finished, whichever is later, and the sleep runs to an absolute deadline, so the
//! time spent copying data counts inside the modeled time rather than on top of it.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use fuser::{
    BsdFileFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, InitFlags, KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::account::{RequestLog, Served, Totals};
use crate::model::{Disk, Op};

const IMAGE_INO: INodeNo = INodeNo(2);
const STATS_INO: INodeNo = INodeNo(3);
const IMAGE_NAME: &str = "disk.img";
const STATS_NAME: &str = "stats";
/// The size `stats` reports: more than its text ever takes, so that a reader asks for all of it.
const STATS_SIZE: u64 = 4096;
const TTL: Duration = Duration::from_secs(3600);

/// The model's state: the image, the disk, and where its time went.
struct State {
    image: File,
    disk: Disk,
    totals: Totals,
    log: Option<RequestLog>,
    /// When the disk finishes the request it is on (the last one served).
    busy_until: Instant,
    /// How many times the totals were read.
    marks: u64,
    buffer: Vec<u8>,
}

pub struct DiskFs {
    state: Mutex<State>,
    image_len: u64,
    /// Whether requests are delayed (without: the model only counts, for filling an image).
    delay: bool,
    epoch: Instant,
    created: SystemTime,
}

impl DiskFs {
    pub fn new(
        image: File,
        disk: Disk,
        log: Option<RequestLog>,
        delay: bool,
    ) -> std::io::Result<Self> {
        let image_len = image.metadata()?.len();
        let epoch = Instant::now();
        Ok(DiskFs {
            state: Mutex::new(State {
                image,
                disk,
                totals: Totals::default(),
                log,
                busy_until: epoch,
                marks: 0,
                buffer: Vec::new(),
            }),
            image_len,
            delay,
            epoch,
            created: SystemTime::now(),
        })
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o755, 0, 2),
            IMAGE_INO => (FileType::RegularFile, 0o600, self.image_len, 1),
            STATS_INO => (FileType::RegularFile, 0o644, STATS_SIZE, 1),
            _ => return None,
        };
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: self.created,
            mtime: self.created,
            ctime: self.created,
            crtime: self.created,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// Serves one request on the image: runs `io` on the image and the request's data buffer,
    /// charges the model, waits out the modeled time, and accounts for it.
    fn serve<T>(
        &self,
        op: Op,
        offset: u64,
        len: u64,
        io: impl FnOnce(&File, &mut Vec<u8>) -> std::io::Result<T>,
        reply: impl FnOnce(std::io::Result<T>, &[u8]),
    ) {
        let arrival = Instant::now();
        let mut guard = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let state = &mut *guard;
        let start = arrival.max(state.busy_until);
        let cost = state.disk.serve(op, offset, len);
        let deadline = start + Duration::from_secs_f64(cost.total_s());
        let result = io(&state.image, &mut state.buffer);
        let mut late_s = 0.0;
        if self.delay {
            let now = Instant::now();
            if deadline > now {
                std::thread::sleep(deadline - now);
            }
            late_s = Instant::now().saturating_duration_since(deadline).as_secs_f64();
            state.busy_until = deadline;
        }
        reply(result, &state.buffer);
        let served = Served {
            op,
            offset,
            len,
            cost,
            start_s: start.duration_since(self.epoch).as_secs_f64(),
            queued_s: start.duration_since(arrival).as_secs_f64(),
            late_s,
        };
        state.totals.add(&served);
        if let Some(log) = state.log.as_mut() {
            if let Err(e) = log.record(&served) {
                eprintln!("hdd-model: cannot write the request log ({e}); logging stops");
                state.log = None;
            }
        }
    }

    /// The totals and a new mark number, also written to the log (flushed: a reader of the
    /// totals may read the log next).
    fn stats_text(&self) -> String {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        state.marks += 1;
        let mark = state.marks;
        if let Some(log) = state.log.as_mut() {
            if let Err(e) = log.mark(mark) {
                eprintln!("hdd-model: cannot write the request log ({e}); logging stops");
                state.log = None;
            }
        }
        format!("{}mark {mark}\n", state.totals.render())
    }
}

/// Reads `buffer.len()` bytes at `offset`, fewer only at the end of the file.
fn read_full(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buffer.len() {
        match file.read_at(&mut buffer[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

fn errno(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

impl Filesystem for DiskFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Reads and writes as large as the kernel allows (fs.fuse.max_pages_limit caps them).
        let _ = config.set_max_readahead(1 << 20);
        // Direct I/O submitted asynchronously (the loop device's) reaches us as soon as it is
        // issued, so the next request is already queued when the disk finishes one, as it would
        // be at a disk; without this the kernel sends one request and waits for its answer.
        let _ = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO);
        Ok(())
    }

    fn destroy(&mut self) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(log) = state.log.as_mut() {
            if let Err(e) = log.flush() {
                eprintln!("hdd-model: cannot write the request log: {e}");
            }
        }
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match name.to_str() {
            Some(IMAGE_NAME) if parent == INodeNo::ROOT => IMAGE_INO,
            Some(STATS_NAME) if parent == INodeNo::ROOT => STATS_INO,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr(ino) {
            Some(attr) => reply.entry(&TTL, &attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    /// Only what opening for writing asks: truncating `stats` (ignored: it is not stored) and
    /// setting the image to the size it has.
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
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if ino == IMAGE_INO && size.is_some_and(|size| size != self.image_len) {
            // The disk's size is fixed.
            return reply.error(Errno::EPERM);
        }
        match self.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            // Never the page cache: every read and write of the image reaches the model, and
            // every read of the totals sees them as they are.
            IMAGE_INO | STATS_INO => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            _ => reply.error(Errno::EISDIR),
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
        match ino {
            IMAGE_INO => self.serve(
                Op::Read,
                offset,
                u64::from(size),
                |image, buffer| {
                    buffer.resize(size as usize, 0);
                    read_full(image, buffer, offset)
                },
                |result, buffer| match result {
                    Ok(n) => reply.data(&buffer[..n]),
                    Err(e) => reply.error(errno(&e)),
                },
            ),
            STATS_INO => {
                // One mark per read of the file: its first piece (the text fits in one).
                if offset != 0 {
                    return reply.data(&[]);
                }
                let text = self.stats_text();
                let bytes = text.as_bytes();
                let from = (offset as usize).min(bytes.len());
                let to = (from + size as usize).min(bytes.len());
                reply.data(&bytes[from..to]);
            }
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino == STATS_INO {
            return match data.trim_ascii() {
                b"reset" => {
                    let mut state =
                        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    state.disk.reset();
                    reply.written(data.len() as u32);
                }
                _ => reply.error(Errno::EINVAL),
            };
        }
        if ino != IMAGE_INO {
            return reply.error(Errno::EACCES);
        }
        let len = data.len() as u64;
        if offset.saturating_add(len) > self.image_len {
            // The image's size is the disk's: a write past it has nowhere to go.
            return reply.error(Errno::ENOSPC);
        }
        self.serve(
            Op::Write,
            offset,
            len,
            |image, _| image.write_all_at(data, offset),
            |result, _| match result {
                Ok(()) => reply.written(data.len() as u32),
                Err(e) => reply.error(errno(&e)),
            },
        );
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        if ino != IMAGE_INO {
            return reply.ok();
        }
        // A disk without a volatile write cache: a write is on the platter when it is answered,
        // so a cache flush costs the model nothing; the image's own file is synced all the same.
        let state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let synced = if datasync { state.image.sync_data() } else { state.image.sync_all() };
        match synced {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
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
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (IMAGE_INO, FileType::RegularFile, IMAGE_NAME),
            (STATS_INO, FileType::RegularFile, STATS_NAME),
        ];
        for (index, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, index as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
