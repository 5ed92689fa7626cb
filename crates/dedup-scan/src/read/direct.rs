//! Reads around the page cache, in requests of the device's own size, for devices where every
//! request costs a seek or an operation of a capped budget.
//!
//! Through the page cache, the kernel's readahead decides the size of each request to the
//! device, not the reader: it ramps up from the first read in growing windows, and the block
//! layer cuts each window at the device's largest request (`max_sectors_kb`), so a window a
//! little over that size costs two requests where one would do. Pages allocated one at a time
//! can also cut a request early, at the segment limit. On the HDD proxy of
//! docs/benchmarks/find.md a large file took more requests through the page cache than its size
//! needs. A direct read (`O_DIRECT`) of a multiple of the device's request size, into a buffer
//! backed by huge pages so that it is a few physically contiguous segments, goes to the device
//! as exactly that many requests (the figures, against a buffer of small pages, are in
//! docs/benchmarks/find.md).
//!
//! Only devices measured slow per request read this way (the finder measures that per device),
//! and only where the kernel can give huge pages: elsewhere the page cache's readahead is what
//! keeps a fast device busy, and warm data is read from memory. A file system that refuses direct reads is
//! read through the page cache as before, and so is everything once the kernel has not given a
//! buffer its huge pages (memory too fragmented): direct reads into small pages cost more
//! requests than the page cache's readahead.

use std::fs::{self, File};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use memmap2::{Advice, MmapMut};
use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};

/// Offsets, lengths and buffer addresses of direct reads are multiples of this: the largest
/// logical block size of common devices, and the page size.
const ALIGN: usize = 4096;

/// The size of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Requests smaller than this are not worth reading around the cache: a device that splits
/// reads so finely is not one whose requests are slow.
const REQUEST_MIN: u64 = 64 << 10;

/// The largest request the block device `dev` (`st_dev`) accepts, from sysfs, when direct reads
/// of that size can be given contiguous buffers; `None` for devices without a block queue (a
/// btrfs subvolume, a network or FUSE file system) or without huge pages.
pub fn request_size(dev: u64) -> Option<u64> {
    if !huge_pages_on_request(&fs::read_to_string(THP_ENABLED).ok()?) {
        return None;
    }
    request_bytes(&crate::layout::queue_attribute(dev, "max_sectors_kb")?)
}

const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Whether the kernel's transparent huge page setting (`always [madvise] never`) gives huge
/// pages to a buffer that asks for them.
fn huge_pages_on_request(setting: &str) -> bool {
    setting.contains("[always]") || setting.contains("[madvise]")
}

/// A request size from `max_sectors_kb`'s text, in bytes and a multiple of 64 KiB, so that
/// chunks of whole requests stay aligned for direct reads.
fn request_bytes(max_sectors_kb: &str) -> Option<u64> {
    let kib: u64 = max_sectors_kb.trim().parse().ok()?;
    let bytes = kib * 1024 / REQUEST_MIN * REQUEST_MIN;
    (bytes >= REQUEST_MIN).then_some(bytes)
}

/// Ask for reads of `file` to go around the page cache; false if its file system cannot.
pub fn set_direct(file: &File) -> bool {
    match fcntl_getfl(file) {
        Ok(flags) => fcntl_setfl(file, flags | OFlags::DIRECT).is_ok(),
        Err(_) => false,
    }
}

/// Whether reads of `file` go around the page cache.
pub fn is_direct(file: &File) -> bool {
    fcntl_getfl(file).is_ok_and(|flags| flags.contains(OFlags::DIRECT))
}

/// Read `file` through the page cache again, after a direct read was refused.
pub fn clear_direct(file: &File) {
    if let Ok(flags) = fcntl_getfl(file) {
        let _ = fcntl_setfl(file, flags - OFlags::DIRECT);
    }
}

/// A read buffer of whole huge pages, aligned to one, for direct reads.
pub struct DirectBuf {
    map: MmapMut,
    /// Where the first huge page starts in `map`.
    start: usize,
    room: usize,
}

impl DirectBuf {
    /// A buffer for direct reads of up to `len` bytes, backed by huge pages; an error when the
    /// kernel gave it small pages.
    fn new(len: usize) -> io::Result<DirectBuf> {
        let room = len.next_multiple_of(HUGE_PAGE);
        // An anonymous map starts on a page, not a huge page: map one more and start inside.
        let mut map = MmapMut::map_anon(room + HUGE_PAGE)?;
        let start = (map.as_ptr() as usize).next_multiple_of(HUGE_PAGE) - map.as_ptr() as usize;
        map.advise_range(Advice::HugePage, start, room)?;
        // One write per huge page faults it in, as one huge page if the kernel can give one.
        for page in (start..start + room).step_by(HUGE_PAGE) {
            map[page] = 0;
        }
        let address = map.as_ptr() as usize + start;
        let smaps = fs::read_to_string("/proc/self/smaps")?;
        match huge_kib_at(&smaps, address) {
            Some(kib) if kib * 1024 >= room as u64 => Ok(DirectBuf { map, start, room }),
            _ => Err(io::Error::other("the kernel gave a direct read buffer small pages")),
        }
    }

    /// Read `len` bytes of `file` at `offset` (a multiple of [`ALIGN`]); the bytes read. A file
    /// that ends before `offset + len` has shrunk since the walk (`UnexpectedEof`).
    pub fn read_at(&mut self, file: &File, offset: u64, len: usize) -> io::Result<&[u8]> {
        use std::os::unix::fs::FileExt;
        // The last chunk of a file ends anywhere: ask for whole blocks, and the read stops at
        // the end of the file.
        let want = len.next_multiple_of(ALIGN);
        assert!(want <= self.room, "a direct buffer for {} bytes cannot hold {want}", self.room);
        let buf = &mut self.map[self.start..self.start + want];
        let mut got = 0;
        while got < len {
            let n = file.read_at(&mut buf[got..], offset + got as u64)?;
            got += n;
            // A short read ends the file, or it would have been whole blocks.
            if n == 0 || (got < len && got % ALIGN != 0) {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(&buf[..len])
    }
}

/// The huge pages (`AnonHugePages`, in KiB) of the mapping that holds `address`, from the text
/// of `/proc/self/smaps`.
fn huge_kib_at(smaps: &str, address: usize) -> Option<u64> {
    let mut lines = smaps.lines();
    // Each mapping is a header line (`start-end perms ...`, in hex) and then its fields.
    let range = |line: &str| {
        let (start, rest) = line.split_once('-')?;
        let end = rest.split_once(' ')?.0;
        Some(usize::from_str_radix(start, 16).ok()?..usize::from_str_radix(end, 16).ok()?)
    };
    lines.find(|line| range(line).is_some_and(|r| r.contains(&address)))?;
    let field = lines.find_map(|line| line.strip_prefix("AnonHugePages:"))?;
    field.trim().strip_suffix("kB")?.trim().parse().ok()
}

/// Direct buffers kept for reuse by the threads of one comparison: mapping and faulting in
/// huge pages costs more than the copy a reused buffer saves.
#[derive(Default)]
pub struct DirectBufs {
    spare: Mutex<Vec<DirectBuf>>,
    /// Set once a buffer did not get its huge pages: memory is fragmented, and asking again for
    /// every read would only add the cost of mapping and faulting.
    refused: AtomicBool,
}

impl DirectBufs {
    /// A buffer with room for a direct read of `len` bytes; an error when none can be had with
    /// huge pages.
    pub fn take(&self, len: usize) -> io::Result<DirectBuf> {
        let want = len.next_multiple_of(ALIGN);
        let mut spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = spare.iter().position(|buf| buf.room >= want) {
            return Ok(spare.swap_remove(at));
        }
        drop(spare);
        if self.refused.load(Ordering::Relaxed) {
            return Err(io::Error::other("direct read buffers get no huge pages"));
        }
        DirectBuf::new(want).inspect_err(|_| self.refused.store(true, Ordering::Relaxed))
    }

    /// Whether a buffer was refused for want of huge pages.
    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    /// Hand a buffer back for the next read.
    pub fn give(&self, buf: DirectBuf) {
        self.spare.lock().unwrap_or_else(PoisonError::into_inner).push(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn request_sizes_are_whole_multiples_of_64_kib() {
        assert_eq!(request_bytes("1280\n"), Some(1280 << 10));
        assert_eq!(request_bytes("512"), Some(512 << 10));
        assert_eq!(request_bytes("100"), Some(64 << 10));
        assert_eq!(request_bytes("32"), None);
        assert_eq!(request_bytes("none"), None);
    }

    #[test]
    fn the_huge_pages_of_a_mapping_are_read_from_smaps() {
        let smaps = "\
55d0a0000000-55d0a0021000 rw-p 00000000 00:00 0                          [heap]
Size:                132 kB
AnonHugePages:         0 kB
7f0000200000-7f0000600000 rw-p 00000000 00:00 0 
Size:               4096 kB
Rss:                4096 kB
AnonHugePages:      4096 kB
7f0000600000-7f0000800000 rw-p 00000000 00:00 0 
AnonHugePages:         0 kB
";
        assert_eq!(huge_kib_at(smaps, 0x7f00_0020_0000), Some(4096));
        assert_eq!(huge_kib_at(smaps, 0x7f00_0040_0000), Some(4096));
        assert_eq!(huge_kib_at(smaps, 0x7f00_0060_0000), Some(0));
        assert_eq!(huge_kib_at(smaps, 0x55d0_a000_0000), Some(0));
        assert_eq!(huge_kib_at(smaps, 0x1000), None, "in no mapping");
    }

    #[test]
    fn huge_pages_count_only_when_a_buffer_can_ask_for_them() {
        assert!(huge_pages_on_request("always [madvise] never\n"));
        assert!(huge_pages_on_request("[always] madvise never\n"));
        assert!(!huge_pages_on_request("always madvise [never]\n"));
    }

    /// Whether the kernel gives buffers huge pages, which direct read buffers need. Where it
    /// does not the test skips, unless `DEDUP_TEST_REQUIRE_ALL=1` (CI) makes that a failure.
    fn huge_pages_or_skip(test: &str) -> bool {
        let on = fs::read_to_string(THP_ENABLED).is_ok_and(|s| huge_pages_on_request(&s));
        let required = std::env::var("DEDUP_TEST_REQUIRE_ALL").is_ok_and(|v| v == "1");
        assert!(on || !required, "{test}: transparent huge pages are off");
        if !on {
            eprintln!("skipped {test}: transparent huge pages are off");
        }
        on
    }

    #[test]
    fn the_check_tells_a_buffer_of_huge_pages_from_one_of_small_pages() {
        if !huge_pages_or_skip("the_check_tells_a_buffer_of_huge_pages_from_one_of_small_pages") {
            return;
        }
        let buf = DirectBuf::new(HUGE_PAGE).unwrap();
        let address = buf.map.as_ptr() as usize + buf.start;
        let smaps = fs::read_to_string("/proc/self/smaps").unwrap();
        assert!(huge_kib_at(&smaps, address).unwrap() >= HUGE_PAGE as u64 / 1024);
        // The same check on a mapping of small pages.
        let mut small = MmapMut::map_anon(2 * HUGE_PAGE).unwrap();
        small.advise(Advice::NoHugePage).unwrap();
        small.iter_mut().step_by(4096).for_each(|byte| *byte = 1);
        let smaps = fs::read_to_string("/proc/self/smaps").unwrap();
        assert_eq!(huge_kib_at(&smaps, small.as_ptr() as usize), Some(0));
    }

    /// A file of `len` bytes of a pattern that differs at every offset. Where the temporary
    /// directory refuses direct reads (memory before Linux 6.6), the reads go through the cache.
    fn patterned(len: usize) -> (tempfile::TempDir, File, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        let path = dir.path().join("f");
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        (dir, File::open(&path).unwrap(), bytes)
    }

    #[test]
    fn a_direct_read_returns_the_bytes_of_a_chunk_and_of_a_last_chunk_of_any_length() {
        if !huge_pages_or_skip("a_direct_read_returns_the_bytes_of_a_chunk_and_of_a_last_chunk") {
            return;
        }
        let len = 3 * HUGE_PAGE + 12_345;
        let (_dir, file, bytes) = patterned(len);
        let direct = set_direct(&file);
        assert_eq!(direct, is_direct(&file));
        let bufs = DirectBufs::default();
        let mut buf = bufs.take(HUGE_PAGE).unwrap();
        assert_eq!(buf.read_at(&file, 0, HUGE_PAGE).unwrap(), &bytes[..HUGE_PAGE]);
        let last = len - 2 * HUGE_PAGE;
        bufs.give(buf);
        let mut buf = bufs.take(last).unwrap();
        let start = 2 * HUGE_PAGE as u64;
        assert_eq!(buf.read_at(&file, start, last).unwrap(), &bytes[2 * HUGE_PAGE..]);
        // A file shorter than the walk saw has shrunk.
        let err = buf.read_at(&file, start, last + ALIGN).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        clear_direct(&file);
        assert!(!is_direct(&file));
    }

    #[test]
    fn buffers_are_reused_when_they_have_room() {
        if !huge_pages_or_skip("buffers_are_reused_when_they_have_room") {
            return;
        }
        let bufs = DirectBufs::default();
        let buf = bufs.take(HUGE_PAGE + 1).unwrap();
        let address = buf.map.as_ptr();
        assert_eq!((address as usize + buf.start) % HUGE_PAGE, 0);
        bufs.give(buf);
        assert_eq!(bufs.take(ALIGN).unwrap().map.as_ptr(), address);
        let bigger = bufs.take(3 * HUGE_PAGE).unwrap();
        assert!(bigger.room >= 3 * HUGE_PAGE);
    }
}
