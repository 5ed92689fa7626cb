//! `FS_IOC_FIEMAP`, which rustix does not wrap: the extent of an open file that holds a given
//! byte, with where it lies on the device. Reading in physical order (`crate::layout`) asks it
//! once per file; everything it needs is in the answer's first extent.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `_IOWR('f', 11, struct fiemap)`: the header is 32 bytes on every architecture.
const FS_IOC_FIEMAP: u32 = 0xC020_660B;

/// `struct fiemap_extent` of `<linux/fiemap.h>`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct RawExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

/// `struct fiemap` with room for one extent.
#[repr(C)]
#[derive(Debug, Default)]
struct Request {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [RawExtent; 1],
}

/// One extent as the file system mapped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extent {
    /// Offset in the file of its first byte.
    pub logical: u64,
    /// Byte address on the device of its first byte.
    pub physical: u64,
    /// Bytes.
    pub length: u64,
    /// `FIEMAP_EXTENT_*`.
    pub flags: u32,
}

/// The first extent of `file` that ends after `offset` (the one holding it, or the next one
/// after a hole); `None` when there is none (an empty file, a hole to the end). The error is the
/// kernel's: `EOPNOTSUPP` or `ENOTTY` where the file system cannot map extents.
pub(crate) fn extent_from(file: &File, offset: u64) -> io::Result<Option<Extent>> {
    let mut request = Request {
        start: offset,
        // To the end of the file: the kernel clamps it to the largest offset it allows.
        length: u64::MAX,
        extent_count: 1,
        ..Request::default()
    };
    // SAFETY: FS_IOC_FIEMAP reads the header of `request` and writes the header's counts and at
    // most `extent_count` (1) extents after it; `Request` has the layout of the kernel's
    // `struct fiemap` followed by room for exactly one `struct fiemap_extent` (the sizes are
    // checked by a test), and we hold it mutably for the call. The descriptor is open for the
    // call's duration (borrowed from `file`).
    let result =
        unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, &mut request as *mut Request) };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    if request.mapped_extents == 0 {
        return Ok(None);
    }
    let raw = request.extents[0];
    Ok(Some(Extent {
        logical: raw.logical,
        physical: raw.physical,
        length: raw.length,
        flags: raw.flags,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structures_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<RawExtent>(), 56);
        assert_eq!(std::mem::size_of::<Request>(), 32 + 56);
        // _IOWR('f', 11, 32 bytes): direction 3, size 32, type 'f', number 11.
        assert_eq!(FS_IOC_FIEMAP, (3 << 30) | (32 << 16) | ((b'f' as u32) << 8) | 11);
    }
}
