//! Whether a kept file and its duplicate may be one file seen twice. A stacking file system
//! (overlayfs, FUSE mirrors such as bindfs, eCryptfs) shows the files of another tree under
//! another device number: a file there and the file it is backed by look like two copies.
//! Removing the lower file (or replacing it with a symlink) takes the data the overlay's file
//! shows; removing the overlay's file removes the upper file it is. Such a pair, one side on a
//! stacking file system and the other on another device, is skipped for `remove` and `symlink`.

use std::fs::File;

/// `f_type` values of file systems that may show another tree's files.
const STACKING: [i64; 3] = [
    0x794c_7630, // overlayfs
    0x6573_5546, // FUSE
    0xf15f,      // eCryptfs
];

/// True when the two files are on different devices and one of them lies on a stacking file
/// system: each may be the other, seen through the stack.
pub(crate) fn may_be_one_file(a: (&File, u64), b: (&File, u64)) -> bool {
    a.1 != b.1 && (stacking(a.0) || stacking(b.0))
}

fn stacking(file: &File) -> bool {
    // `f_type` is an i64 on x86_64 but narrower elsewhere: the cast is needed.
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::fstatfs(file).is_ok_and(|s| STACKING.contains(&(s.f_type as i64)))
}
