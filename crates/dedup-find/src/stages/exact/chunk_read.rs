//! Reading one member's chunk in the exact stage, and telling whether it equals the step's lead
//! representative or else what its hash is.
//!
//! A chunk read whole into a multi-MiB buffer is written out to memory by the kernel's copy and
//! read back by the comparison. When the lead is worth trying and the data is in the page
//! cache, the chunk is read a piece at a time into a small buffer instead, each piece compared
//! with the lead's bytes while both are in the core's own cache; a chunk equal to the lead is
//! then never held whole (docs/benchmarks/find.md). Data not in the page cache is read
//! whole, so that the device gets one large request; on a device measured slow per request, it
//! is read around the page cache, in requests of the device's size (`dedup_scan::read::direct`).

use std::fs::File;
use std::io::{self, IoSliceMut};
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt;

use dedup_scan::ReadBuf;
use rustix::fs::{fadvise, Advice};
use rustix::io::{preadv2, ReadWriteFlags};
use xxhash_rust::xxh3::xxh3_64;

use super::split::{Lead, Seen};
use super::{Comparer, Member};
use dedup_scan::read::direct;

/// Bytes read at a time when a chunk is compared with the lead as it is read: a piece and the
/// lead's bytes beside it fit in a core's own cache.
const PIECE: usize = 128 << 10;

/// A buffer of the chunk's length for a member's chunk, taken only when the chunk must be held
/// whole.
pub(super) struct Slot<'a> {
    pub buf: Option<ReadBuf>,
    pub take: &'a (dyn Fn() -> ReadBuf + Sync),
}

impl Slot<'_> {
    fn get(&mut self) -> &mut ReadBuf {
        self.buf.get_or_insert_with(self.take)
    }
}

impl Comparer<'_> {
    /// Read the member's chunk of `len` bytes at `offset` and say what it holds; on the last
    /// chunk also check that the file did not change while it was read.
    pub(super) fn read_chunk(
        &self,
        member: &mut Member,
        offset: u64,
        len: usize,
        keep_open: bool,
        slot: &mut Slot,
        lead: Option<&Lead>,
    ) -> Seen {
        let ctx = self.ctx;
        // A file read whole in one request through the page cache (most are) is checked once,
        // after the read: that it is the file the walk saw and that it did not change.
        let whole = offset == 0 && len as u64 == self.size && self.direct_request.is_none();
        if member.file.is_none() {
            member.file =
                if whole { ctx.open_unchecked(&member.inode) } else { ctx.open(&member.inode) };
            match &member.file {
                // A file system that refuses direct reads is read through the cache, and so is
                // a file already all there (one a timed whole read brought in): read around the
                // cache, it would be read from the device a second time.
                Some(file)
                    if self.direct_request.is_some() && !all_in_page_cache(file, self.size) =>
                {
                    _ = direct::set_direct(file)
                }
                // Tell the kernel to read ahead aggressively: this file is read start to end.
                Some(file) if keep_open => {
                    let _ = fadvise(file, 0, NonZeroU64::new(self.size), Advice::Sequential);
                }
                _ => {}
            }
        }
        let Some(file) = &member.file else { return Seen::Dropped };
        let direct = self.direct_request.is_some() && direct::is_direct(file);
        let read = || match lead {
            _ if direct => self.read_direct(file, offset, len, slot, lead),
            Some(lead) if len >= 2 * PIECE => self.compare_in_pieces(file, offset, slot, lead),
            _ => read_whole(file, offset, slot.get(), lead),
        };
        let read = if whole {
            ctx.read_then_check(&member.inode, file, read)
        } else {
            ctx.read_with(&member.inode, len as u64, read)
        };
        let mut seen = read.unwrap_or(Seen::Dropped);
        let last = offset + len as u64 == self.size;
        let read_ok = !matches!(seen, Seen::Dropped);
        if last && !whole && read_ok && !ctx.unchanged_after_read(&member.inode, file) {
            seen = Seen::Dropped;
        }
        if matches!(seen, Seen::Dropped) || !keep_open || last {
            member.file = None;
        }
        seen
    }

    /// Read a chunk around the page cache (`dedup_scan::read::direct`), and copy it to the slot only if it
    /// differs from the lead. A direct read refused (`EINVAL`: the file system wants other
    /// alignments) turns the file back to reads through the cache.
    fn read_direct(
        &self,
        file: &File,
        offset: u64,
        len: usize,
        slot: &mut Slot,
        lead: Option<&Lead>,
    ) -> io::Result<Seen> {
        // Without memory to map, the file is read through the cache.
        let Ok(mut buf) = self.direct_bufs.take(len) else {
            direct::clear_direct(file);
            return read_whole(file, offset, slot.get(), lead);
        };
        let seen = match (buf.read_at(file, offset, len), lead) {
            (Ok(bytes), Some(lead)) if lead.chunk.bytes() == bytes => Ok(Seen::Equal(lead.rep)),
            (Ok(bytes), _) => {
                slot.get().bytes_mut().copy_from_slice(bytes);
                Ok(Seen::Hashed(xxh3_64(bytes)))
            }
            (Err(e), _) if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => {
                direct::clear_direct(file);
                read_whole(file, offset, slot.get(), lead)
            }
            (Err(e), _) => Err(e),
        };
        self.direct_bufs.give(buf);
        seen
    }

    /// Compare a chunk with the lead (of the chunk's length) a piece at a time if its first
    /// piece is in the page cache; otherwise read it whole.
    fn compare_in_pieces(
        &self,
        file: &File,
        offset: u64,
        slot: &mut Slot,
        lead: &Lead,
    ) -> io::Result<Seen> {
        let mut piece = self.buffers.take(PIECE);
        let first = piece.bytes_mut();
        let cached = matches!(
            preadv2(file, &mut [IoSliceMut::new(first)], offset, ReadWriteFlags::NOWAIT),
            Ok(n) if n == PIECE
        );
        let seen = if cached {
            compare_cached(file, offset, slot, lead, piece.bytes_mut())
        } else {
            read_whole(file, offset, slot.get(), Some(lead))
        };
        self.buffers.give(piece);
        seen
    }
}

/// `compare_in_pieces` once the first piece is in `piece`.
fn compare_cached(
    file: &File,
    offset: u64,
    slot: &mut Slot,
    lead: &Lead,
    piece: &mut [u8],
) -> io::Result<Seen> {
    let (rep, lead) = (lead.rep, lead.chunk.bytes());
    let len = lead.len();
    let mut start = 0;
    loop {
        let end = (start + piece.len()).min(len);
        let bytes = &mut piece[..end - start];
        if start > 0 {
            file.read_exact_at(bytes, offset + start as u64)?;
        }
        if *bytes != lead[start..end] {
            // Equal to the lead before this piece: the chunk is the lead's bytes so far, this
            // piece, and the rest read whole.
            let chunk = slot.get().bytes_mut();
            chunk[..start].copy_from_slice(&lead[..start]);
            chunk[start..end].copy_from_slice(bytes);
            file.read_exact_at(&mut chunk[end..], offset + end as u64)?;
            return Ok(Seen::Hashed(xxh3_64(chunk)));
        }
        if end == len {
            return Ok(Seen::Equal(rep));
        }
        start = end;
    }
}

/// Read a chunk whole into `buf` (of the chunk's length); compare it with the lead if there is
/// one worth trying, and hash it if it differs.
fn read_whole(
    file: &File,
    offset: u64,
    buf: &mut ReadBuf,
    lead: Option<&Lead>,
) -> io::Result<Seen> {
    let chunk = buf.bytes_mut();
    file.read_exact_at(chunk, offset)?;
    match lead {
        Some(lead) if lead.chunk.bytes() == &chunk[..] => Ok(Seen::Equal(lead.rep)),
        _ => Ok(Seen::Hashed(xxh3_64(chunk))),
    }
}

/// Whether every page of the file's `size` bytes is in the page cache (false where the kernel
/// cannot tell).
fn all_in_page_cache(file: &File, size: u64) -> bool {
    size > 0 && dedup_scan::layout::all_cached(file, size) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file read a moment ago is read from the page cache, not around it; one whose pages
    /// were never read is not all there.
    #[test]
    fn only_a_file_all_in_the_page_cache_counts_as_there() {
        let dir = tempfile::tempdir().unwrap();
        let read = dir.path().join("read");
        std::fs::write(&read, vec![3u8; 20_000]).unwrap();
        let file = File::open(&read).unwrap();
        if dedup_scan::layout::all_cached(&file, 20_000).is_none() {
            eprintln!("skipped: this kernel cannot tell what is cached (cachestat, Linux 6.5)");
            return;
        }
        assert!(all_in_page_cache(&file, 20_000));
        let sparse = dir.path().join("sparse");
        File::create(&sparse).unwrap().set_len(1 << 20).unwrap();
        assert!(!all_in_page_cache(&File::open(&sparse).unwrap(), 1 << 20));
        assert!(!all_in_page_cache(&file, 0), "nothing to read: nothing decided");
    }
}
