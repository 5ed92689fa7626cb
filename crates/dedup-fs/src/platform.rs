//! What rustix does not wrap safely: the `ioctl` `FIDEDUPERANGE`, which asks the kernel to
//! compare a range of two files and, when equal, make the destination share the source's
//! extents (the kernel locks both ranges while it compares, so no write can slip in between the
//! comparison and the sharing); and a `close` whose answer is read ([`close_checked`]).
#![allow(unsafe_code)]

use std::fs::File;
use std::io;

use rustix::ioctl::{ioctl, opcode, Opcode, Updater};

/// `struct file_dedupe_range` (linux/fs.h) without its flexible array.
#[repr(C)]
struct RangeHeader {
    src_offset: u64,
    src_length: u64,
    dest_count: u16,
    reserved1: u16,
    reserved2: u32,
}

/// `struct file_dedupe_range_info`.
#[repr(C)]
struct RangeInfo {
    dest_fd: i64,
    dest_offset: u64,
    bytes_deduped: u64,
    status: i32,
    reserved: u32,
}

/// The header followed by exactly one destination, as the kernel reads it.
#[repr(C)]
struct OneRange {
    header: RangeHeader,
    info: RangeInfo,
}

/// `_IOWR(0x94, 54, struct file_dedupe_range)`: the size in the opcode is the header's.
const FIDEDUPERANGE: Opcode = opcode::read_write::<RangeHeader>(0x94, 54);
const FILE_DEDUPE_RANGE_SAME: i32 = 0;
const FILE_DEDUPE_RANGE_DIFFERS: i32 = 1;

/// What the kernel did with one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deduped {
    /// The ranges were equal; this many bytes now share extents.
    Same(u64),
    /// The ranges differ; nothing was shared.
    Differs,
}

/// Share `len` bytes at `offset` of `dest` with the same range of `src` if they are equal.
pub(crate) fn dedupe_range(src: &File, dest: &File, offset: u64, len: u64) -> io::Result<Deduped> {
    use std::os::fd::AsRawFd;
    let mut arg = OneRange {
        header: RangeHeader {
            src_offset: offset,
            src_length: len,
            dest_count: 1,
            reserved1: 0,
            reserved2: 0,
        },
        info: RangeInfo {
            dest_fd: i64::from(dest.as_raw_fd()),
            dest_offset: offset,
            bytes_deduped: 0,
            status: 0,
            reserved: 0,
        },
    };
    // SAFETY: FIDEDUPERANGE takes a pointer to a `struct file_dedupe_range` followed by
    // `dest_count` (= 1) `struct file_dedupe_range_info`; `OneRange` is exactly that layout
    // (`repr(C)`, field types and order as in linux/fs.h: 24 + 32 bytes, no padding), it lives
    // for the whole call, and the kernel writes only into `info` (bytes_deduped, status).
    // `dest_fd` is a descriptor we hold open (`dest` is borrowed) for the call.
    unsafe {
        let ctl = Updater::<FIDEDUPERANGE, OneRange>::new(&mut arg);
        ioctl(src, ctl)?;
    }
    match arg.info.status {
        FILE_DEDUPE_RANGE_SAME => Ok(Deduped::Same(arg.info.bytes_deduped)),
        FILE_DEDUPE_RANGE_DIFFERS => Ok(Deduped::Differs),
        negative if negative < 0 => Err(io::Error::from_raw_os_error(-negative)),
        other => Err(io::Error::other(format!("unexpected FIDEDUPERANGE status {other}"))),
    }
}

/// Closes `fd` and returns what the close met: a file system that writes back at close (NFS,
/// SMB, FUSE) reports a failed write there, which dropping an `OwnedFd` ignores.
pub fn close_checked(fd: std::os::fd::OwnedFd) -> io::Result<()> {
    let raw = std::os::fd::IntoRawFd::into_raw_fd(fd);
    // SAFETY: `raw` came out of an `OwnedFd`, so it is open and nothing else owns it; it is
    // closed exactly once, here, and never used again (on Linux it is released even when
    // close reports an error).
    if unsafe { libc::close(raw) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_linux() {
        assert_eq!(std::mem::size_of::<RangeHeader>(), 24);
        assert_eq!(std::mem::size_of::<RangeInfo>(), 32);
        assert_eq!(std::mem::size_of::<OneRange>(), 56);
        assert_eq!(FIDEDUPERANGE as u64, 0xC018_9436);
    }
}
