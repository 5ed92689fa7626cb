//! Whether a kept file may be the duplicate itself seen through another mount. A stacking file
//! system (overlayfs, FUSE mirrors such as bindfs, eCryptfs) shows the files of another tree
//! under another device number: a file there and the file it is backed by look like two copies,
//! and removing the "duplicate" (or replacing it with a symlink to the kept name) removes the
//! kept file's only data. Such a pair is skipped; keeping the other file is always safe.

use std::fs::File;

/// `f_type` values of file systems that may show another tree's files.
const STACKING: [i64; 3] = [
    0x794c_7630, // overlayfs
    0x6573_5546, // FUSE
    0xf15f,      // eCryptfs
];

/// True when `kept` lies on a stacking file system and `target` on another device: `kept` may
/// be `target` itself, seen through the stack.
pub(crate) fn may_show(kept: &File, kept_dev: u64, target_dev: u64) -> bool {
    // `f_type` is an i64 on x86_64 but narrower elsewhere: the cast is needed.
    #[allow(clippy::unnecessary_cast)]
    let stacked = rustix::fs::fstatfs(kept).is_ok_and(|s| STACKING.contains(&(s.f_type as i64)));
    kept_dev != target_dev && stacked
}
