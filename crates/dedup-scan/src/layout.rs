//! Where a file's bytes lie on its device, and whether the device is one that seeks: what a job
//! needs to read many files in the order of the disk instead of the order it found them.
//!
//! On a spinning disk the time of a read is mostly getting there: a seek across the disk and
//! half a turn on average, 8-12 ms, against well under a millisecond to transfer a small file.
//! Files read in the order of their addresses make the head sweep across the disk once, each
//! read starting where the last one ended or a little further on the same track. The address
//! comes from `FIEMAP` (`crate::fiemap`), the first byte asked for; a file system without it
//! (tmpfs, NFS, most FUSE file systems) says so and the caller orders by inode number instead,
//! which on most file systems follows the order files were written in.
//!
//! The `rotational` flag says whether a block device has a spinning disk behind it, but virtual
//! disks often report 1 on solid-state storage: a caller should measure too (the finder times
//! its first reads) and use the flag only to rule seeking out.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use rustix::io::Errno;

use crate::fiemap::{extent_from, Extent};

/// The extent's location is not known yet (`FIEMAP_EXTENT_UNKNOWN`): data not yet written out.
const EXTENT_UNKNOWN: u32 = 0x2;
/// Delayed allocation: no place on the device yet (set with `EXTENT_UNKNOWN`).
const EXTENT_DELALLOC: u32 = 0x4;
/// Compressed or otherwise encoded: its bytes do not map one to one onto the device's.
const EXTENT_ENCODED: u32 = 0x8;

/// Where a byte of a file lies on its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Address {
    /// At this byte address (or, past a hole, where the file's next data lies).
    At(u64),
    /// Nowhere known: an empty file, a hole to its end, data not yet written out, or an error.
    Unknown,
    /// The file system cannot tell where anything lies: asking again for other files on it is
    /// wasted.
    Unsupported,
}

/// The device address of byte `offset` of `file`.
pub fn address_of(file: &File, offset: u64) -> Address {
    match extent_from(file, offset) {
        Ok(extent) => located(extent, offset).map_or(Address::Unknown, Address::At),
        Err(e) if unsupported(&e) => Address::Unsupported,
        Err(_) => Address::Unknown,
    }
}

/// The errors of a file system that does not map extents at all.
fn unsupported(e: &io::Error) -> bool {
    let code = e.raw_os_error();
    [Errno::OPNOTSUPP, Errno::NOTTY, Errno::NOSYS].iter().any(|n| code == Some(n.raw_os_error()))
}

/// The address of byte `offset` from the first extent ending after it.
fn located(extent: Option<Extent>, offset: u64) -> Option<u64> {
    let extent = extent?;
    if extent.flags & (EXTENT_UNKNOWN | EXTENT_DELALLOC) != 0 {
        return None;
    }
    // Inside a plain extent the bytes follow each other on the device; an encoded extent is read
    // from its start, and so is the first extent after a hole.
    let inside = offset.saturating_sub(extent.logical);
    if extent.flags & EXTENT_ENCODED != 0 || inside >= extent.length {
        return Some(extent.physical);
    }
    Some(extent.physical + inside)
}

/// Whether every page of the first `len` bytes of `file` is in the page cache, or on its way
/// there (read ahead and not yet arrived); `None` where the kernel cannot tell (before Linux
/// 6.5). A page evicted since it was read ahead makes it false.
pub fn all_cached(file: &File, len: u64) -> Option<bool> {
    let page = crate::cachestat::page_size();
    let cached = crate::cachestat::pages_cached(file, 0, len)?;
    Some(cached >= len.div_ceil(page))
}

/// First-page reads a job times to tell a disk that seeks from one that does not.
pub const PROBE_READS: usize = 8;

/// A read of one page taking this long (median) is a seek, or a device capping operations: well
/// above a solid-state read and below a spinning disk's (as the finder's own probe).
pub const SLOW_REQUEST: Duration = Duration::from_millis(2);

/// How long reading the first page of `file` took; `None` when the kernel says it was in the page
/// cache already (which says nothing of the device) or it could not be read.
pub fn first_page_read(file: &File) -> Option<Duration> {
    if all_cached(file, 4096) == Some(true) {
        return None;
    }
    let mut page = [0u8; 4096];
    let started = Instant::now();
    file.read_at(&mut page, 0).ok()?;
    Some(started.elapsed())
}

/// Whether first-page reads that took `took` say the device seeks: their median is at least
/// [`SLOW_REQUEST`] (one slow read among fast ones is the disk's cache missing, not a seek).
pub fn reads_seek(took: &[Duration]) -> bool {
    let mut sorted = took.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).is_some_and(|&t| t >= SLOW_REQUEST)
}

/// Whether the block device `dev` (`st_dev`) says a spinning disk is behind it; `None` for a
/// device without a block queue in sysfs (tmpfs, NFS, FUSE, a btrfs of several devices).
pub fn rotational(dev: u64) -> Option<bool> {
    match queue_attribute(dev, "rotational")?.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// Whether the block device `dev` is known to spin: it says it rotates, and it is not a
/// virtual disk whose driver says so by default whatever backs it (virtio-blk and Xen's
/// block front end report `rotational` 1 unless the host tells them otherwise, so a VM's
/// disk on flash says it rotates too). `None` where that cannot be told.
pub fn spins(dev: u64) -> Option<bool> {
    match rotational(dev)? {
        true if device_driver(dev).is_some_and(|d| says_it_rotates_by_default(&d)) => None,
        rotates => Some(rotates),
    }
}

/// Whether a disk of the block driver `driver` reports rotating whatever backs it.
fn says_it_rotates_by_default(driver: &str) -> bool {
    matches!(driver, "virtio_blk" | "vbd")
}

/// The name of the driver of the block device `dev` (its disk's, for a partition).
fn device_driver(dev: u64) -> Option<String> {
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let device = format!("/sys/dev/block/{major}:{minor}");
    let link = fs::read_link(format!("{device}/device/driver"))
        .or_else(|_| fs::read_link(format!("{device}/../device/driver")))
        .ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// Bytes the kernel reads at most for one read-ahead hint on the device `dev`: the larger of its
/// largest request (`max_sectors_kb`) and its read-ahead window (`read_ahead_kb`); 128 KiB, the
/// usual window, when sysfs does not say.
pub fn read_ahead_piece(dev: u64) -> u64 {
    let kib = |name| queue_attribute(dev, name).and_then(|t| t.trim().parse::<u64>().ok());
    let largest = kib("max_sectors_kb").into_iter().chain(kib("read_ahead_kb")).max();
    largest.unwrap_or(128).max(4) * 1024
}

/// The text of `/sys/dev/block/MAJOR:MINOR/queue/NAME` for the device `dev`; a partition has
/// no queue of its own, so its disk's, one level up, stands for it.
pub(crate) fn queue_attribute(dev: u64, name: &str) -> Option<String> {
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let device = format!("/sys/dev/block/{major}:{minor}");
    fs::read_to_string(format!("{device}/queue/{name}"))
        .or_else(|_| fs::read_to_string(format!("{device}/../queue/{name}")))
        .ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn the_median_of_the_timed_reads_decides_whether_a_device_seeks() {
        let ms = Duration::from_millis;
        assert!(!super::reads_seek(&[]));
        assert!(super::reads_seek(&[ms(9), ms(1), ms(8)]));
        // One slow outlier among fast reads does not make a disk slow.
        assert!(!super::reads_seek(&[ms(0), ms(0), ms(12), ms(0)]));
    }

    use super::*;
    use std::io::Write;

    fn extent(logical: u64, physical: u64, length: u64, flags: u32) -> Option<Extent> {
        Some(Extent { logical, physical, length, flags })
    }

    #[test]
    fn a_byte_inside_an_extent_lies_as_far_into_it_on_the_device() {
        assert_eq!(located(extent(0, 1 << 30, 8192, 0), 0), Some(1 << 30));
        assert_eq!(located(extent(4096, 1 << 30, 8192, 1), 6000), Some((1 << 30) + 1904));
    }

    #[test]
    fn past_a_hole_the_next_extent_says_where_reading_resumes() {
        assert_eq!(located(extent(65536, 7 << 20, 4096, 1), 100), Some(7 << 20));
    }

    #[test]
    fn encoded_extents_are_read_from_their_start() {
        assert_eq!(located(extent(0, 5 << 20, 131072, EXTENT_ENCODED), 70000), Some(5 << 20));
    }

    #[test]
    fn unknown_places_and_missing_extents_have_no_address() {
        assert_eq!(located(None, 0), None);
        assert_eq!(located(extent(0, 0, 4096, EXTENT_UNKNOWN | EXTENT_DELALLOC), 0), None);
        assert_eq!(located(extent(0, 0, 4096, EXTENT_UNKNOWN), 0), None);
    }

    #[test]
    fn only_a_missing_ioctl_counts_as_unsupported() {
        assert!(unsupported(&io::Error::from_raw_os_error(Errno::OPNOTSUPP.raw_os_error())));
        assert!(unsupported(&io::Error::from_raw_os_error(Errno::NOTTY.raw_os_error())));
        assert!(!unsupported(&io::Error::from_raw_os_error(Errno::IO.raw_os_error())));
        assert!(!unsupported(&io::Error::from(io::ErrorKind::UnexpectedEof)))
    }

    /// On a file system of the test's temporary directory: an address where it maps extents
    /// (the data was written out first), `Unsupported` where it does not (tmpfs), and no address
    /// for an empty file.
    #[test]
    fn a_written_file_has_an_address_or_its_file_system_says_it_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut file = File::create(&path).unwrap();
        file.write_all(&vec![7u8; 3 * 4096]).unwrap();
        file.sync_all().unwrap();
        let file = File::open(&path).unwrap();
        match address_of(&file, 0) {
            Address::At(at) => {
                assert_eq!(address_of(&file, 4096), Address::At(at + 4096), "one extent");
            }
            Address::Unsupported => {}
            Address::Unknown => panic!("a written file on a file system that maps extents"),
        }
        let empty = File::create(dir.path().join("empty")).unwrap();
        assert_ne!(
            std::mem::discriminant(&address_of(&empty, 0)),
            std::mem::discriminant(&Address::At(0))
        );
    }

    #[test]
    // `f_type` is an i64 on x86_64 but narrower elsewhere: the cast is needed.
    #[allow(clippy::unnecessary_cast)]
    fn tmpfs_cannot_tell_where_a_file_lies() {
        const TMPFS_MAGIC: i64 = 0x0102_1994;
        let shm = std::path::Path::new("/dev/shm");
        if !rustix::fs::statfs(shm).is_ok_and(|s| s.f_type as i64 == TMPFS_MAGIC) {
            eprintln!("skipped tmpfs_cannot_tell_where_a_file_lies: /dev/shm is not a tmpfs");
            return;
        }
        let dir = tempfile::tempdir_in(shm).unwrap();
        let path = dir.path().join("f");
        fs::write(&path, [1u8; 4096]).unwrap();
        assert_eq!(address_of(&File::open(&path).unwrap(), 0), Address::Unsupported);
    }

    /// A file written moments ago is all in the page cache; one whose pages were never read
    /// (a new sparse file) is not.
    #[test]
    fn a_file_is_all_cached_only_when_every_page_is() {
        let dir = tempfile::tempdir().unwrap();
        let len = 8 * 4096;
        let written = dir.path().join("written");
        fs::write(&written, vec![9u8; len as usize]).unwrap();
        let Some(whole) = all_cached(&File::open(&written).unwrap(), len) else {
            eprintln!("skipped: this kernel cannot tell what is cached (cachestat, Linux 6.5)");
            return;
        };
        assert!(whole);
        let sparse = dir.path().join("sparse");
        File::create(&sparse).unwrap().set_len(len).unwrap();
        assert_eq!(all_cached(&File::open(&sparse).unwrap(), len), Some(false));
    }

    #[test]
    fn a_virtual_disks_default_rotation_says_nothing_and_a_real_disks_does() {
        assert!(says_it_rotates_by_default("virtio_blk") && says_it_rotates_by_default("vbd"));
        assert!(!says_it_rotates_by_default("sd") && !says_it_rotates_by_default("nvme"));
        // tmpfs has no block device: neither question has an answer.
        assert_eq!(spins(rustix::fs::makedev(0, 1)), None);
    }

    #[test]
    fn a_device_without_a_block_queue_is_not_said_to_rotate() {
        // Device 0:1 is an anonymous device number, with no entry under /sys/dev/block.
        assert_eq!(rotational(rustix::fs::makedev(0, 1)), None);
        assert_eq!(read_ahead_piece(rustix::fs::makedev(0, 1)), 128 << 10);
    }
}
