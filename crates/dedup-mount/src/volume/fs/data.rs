//! File content: reads, writes, `close` (flush), `fsync` and `fallocate`. Reads and writes lock
//! only the file they touch. A write lands in memory and is cut into chunks (stored through the
//! volume's sink) once enough of it has come, at `close` and at a commit; a store error is
//! returned to the write, `close` (flush) or `fsync` that meets it, and written bytes stay in
//! memory until they are stored.

use std::cell::Cell;
use std::ops::{Deref, Range};
use std::sync::Arc;

use fuser::Errno;
use rustix::io::Errno as Code;

use super::super::content::Content;
use super::super::store::READ_AHEAD_BYTES;
use super::super::table::Ino;
use super::super::Volume;
use super::attrs::now_ns;
use super::privileges;
use super::{errno, VolumeFs};
use crate::events::Doing;

/// Written bytes of one file from which the decided part is cut and stored during the writes
/// (the longest chunk: less would hold no cut to make; more holds more memory per file).
const CUT_FROM: u64 = 8 << 20;

thread_local! {
    /// The reply buffer of this FUSE thread, kept between reads: a fresh one of a request's
    /// size (up to 1 MiB) would be faulted in page by page for every read.
    static REPLY_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The bytes a read answers with.
pub(super) enum ReadBytes {
    /// A range of an opened chunk, shared with the chunk cache.
    Chunk { chunk: Arc<Vec<u8>>, range: Range<usize> },
    /// Copied into the thread's reply buffer, which goes back to it when the reply is sent.
    Buffer(Vec<u8>),
}

impl ReadBytes {
    /// This thread's reply buffer, empty (it goes back to the thread when a
    /// [`ReadBytes::Buffer`] holding it is dropped).
    fn spare_buffer() -> Vec<u8> {
        let mut bytes = REPLY_BUFFER.with(Cell::take);
        bytes.clear();
        bytes
    }
}

impl Deref for ReadBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ReadBytes::Chunk { chunk, range } => &chunk[range.clone()],
            ReadBytes::Buffer(bytes) => bytes,
        }
    }
}

impl Drop for ReadBytes {
    fn drop(&mut self) {
        if let ReadBytes::Buffer(bytes) = self {
            let bytes = std::mem::take(bytes);
            REPLY_BUFFER.with(|spare| spare.set(bytes));
        }
    }
}

/// `fallocate` modes.
const FALLOC_FL_KEEP_SIZE: i32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: i32 = 0x02;
const FALLOC_FL_ZERO_RANGE: i32 = 0x10;

impl VolumeFs {
    /// Runs `change` on `ino`'s content with the volume, under the file's lock.
    pub(super) fn with_content<T>(
        &self,
        ino: Ino,
        change: impl FnOnce(&mut Content, &Volume) -> Result<T, Errno>,
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

    /// Up to `size` bytes of `ino` from `offset`. A read going on in order first asks the
    /// read-ahead threads for the chunks after it, so that they are opened while this one is.
    /// A read within one stored chunk is answered from the opened chunk; any other is copied
    /// into this thread's reply buffer.
    pub(super) fn read_data(&self, ino: Ino, offset: u64, size: u32) -> Result<ReadBytes, Errno> {
        self.with_content(ino, |content, volume| {
            let end = offset.saturating_add(u64::from(size));
            if content.read_in_order(offset, end) {
                volume.store().read_ahead(&content.stored_within(end, READ_AHEAD_BYTES));
            }
            if let Some((id, at, len)) = content.stored_span(offset, u64::from(size)) {
                let chunk = volume
                    .store()
                    .fetch(&id)
                    .map_err(|e| volume.problem(Doing::Reading, ino, e))?;
                // `fetch` checked the chunk's length against the index, the piece's against
                // the file: a span that does not fit is damage, not a panic.
                let range = usize::try_from(at).ok().zip(usize::try_from(at + len).ok());
                return match range.filter(|(_, to)| *to <= chunk.len()) {
                    Some((from, to)) => Ok(ReadBytes::Chunk { chunk, range: from..to }),
                    None => {
                        let object = format!("data blob {id}");
                        let reason =
                            format!("{} bytes, shorter than the file's piece", chunk.len());
                        let damage = dedup_store::Error::damaged(object, reason);
                        Err(volume.problem(Doing::Reading, ino, damage))
                    }
                };
            }
            let mut bytes = ReadBytes::spare_buffer();
            content
                .read(offset, u64::from(size), &mut bytes, &mut |id| volume.store().fetch(id))
                .map_err(|e| volume.problem(Doing::Reading, ino, e))?;
            Ok(ReadBytes::Buffer(bytes))
        })
    }

    /// Writes `data` to `ino` at `offset`, or at its end for a handle opened to append (where
    /// the kernel does not place the writes itself, as it does with its writeback cache).
    /// `clear_ids`: the kernel asks the volume to clear set-user-ID and set-group-ID (the
    /// writer lacks CAP_FSETID).
    pub(super) fn write_data(
        &self,
        ino: Ino,
        fh: u64,
        offset: u64,
        data: &[u8],
        clear_ids: bool,
    ) -> Result<(), Errno> {
        let append =
            !self.writeback && self.volume.handles().get(&fh).is_some_and(|(_, append)| *append);
        self.with_content(ino, |content, volume| {
            let at = if append { content.size() } else { offset };
            if at
                .checked_add(data.len() as u64)
                .is_none_or(|end| end > volume.store().largest_file())
            {
                return Err(errno(Code::FBIG));
            }
            content
                .write(at, data, &mut |id| volume.store().fetch(id))
                .map_err(|e| volume.failure(e))?;
            if content.fresh_bytes() >= CUT_FROM {
                volume.cut(content, false)?;
            }
            Ok(())
        })?;
        let now = now_ns();
        if let Ok(inode) = self.volume.table().get_mut(ino) {
            inode.mtime = now;
            inode.ctime = now;
            // Without FUSE_HANDLE_KILLPRIV_V2 the kernel has cleared them before the write.
            if self.clears_ids && clear_ids {
                privileges::clear_on_write(inode);
            }
        }
        self.volume.changed();
        Ok(())
    }

    /// At `close`: stores the written bytes of `ino`, reporting what that (or a background
    /// commit) met. It waits for this file's chunks only, outside the file's lock: other
    /// files' chunks in the sealing queue are theirs to wait for.
    pub(super) fn flush_data(&self, ino: Ino) -> Result<(), Errno> {
        let sealing = self.with_content(ino, |content, volume| {
            volume.cut(content, true)?;
            Ok(content.sealing.clone())
        });
        let stored = sealing.and_then(|sealing| {
            let settled = self.volume.settled(sealing.as_deref());
            if let Some(sealing) = sealing.filter(|s| s.is_clear()) {
                // Nothing of the file in flight: it lets go of its sealing, unless a write
                // queued more meanwhile (then the next `close` waits for it).
                let _ = self.with_content(ino, |content, _| {
                    let same = content.sealing.as_ref().is_some_and(|s| Arc::ptr_eq(s, &sealing));
                    if same && sealing.is_clear() {
                        content.sealing = None;
                    }
                    Ok(())
                });
            }
            settled
        });
        match stored.and_then(|()| self.volume.take_failure()) {
            Err(e) if e.code() == Code::ISDIR.raw_os_error() => Ok(()),
            done => done,
        }
    }

    /// `fallocate`: zeroes (punches) a range or extends the file with a hole; moving data
    /// (collapsing, inserting ranges) is not supported.
    pub(super) fn allocate(
        &self,
        ino: Ino,
        offset: u64,
        length: u64,
        mode: i32,
    ) -> Result<(), Errno> {
        let keep_size = mode & FALLOC_FL_KEEP_SIZE != 0;
        let zero = mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0;
        if mode & !(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0
            || (mode & FALLOC_FL_PUNCH_HOLE != 0 && !keep_size)
        {
            return Err(errno(Code::OPNOTSUPP));
        }
        let Some(end) =
            offset.checked_add(length).filter(|&end| end <= self.volume.store().largest_file())
        else {
            return Err(errno(Code::FBIG));
        };
        // Space cannot be reserved in a deduplicating store: allocating extends the file with
        // a hole, as on a file system with compression; the bytes are paid for when written.
        self.with_content(ino, |content, volume| {
            let mut fetch = |id: &dedup_store::Id| volume.store().fetch(id);
            if zero {
                content.punch(offset, length, &mut fetch).map_err(|e| volume.failure(e))?;
            }
            if !keep_size && end > content.size() {
                content.set_size(end, &mut fetch).map_err(|e| volume.failure(e))?;
            }
            Ok(())
        })?;
        let now = now_ns();
        if let Ok(inode) = self.volume.table().get_mut(ino) {
            inode.mtime = now;
            inode.ctime = now;
        }
        self.volume.changed();
        Ok(())
    }
}
