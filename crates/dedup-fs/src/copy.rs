//! Copying a file's content into another: a clone where the file system can share extents,
//! otherwise a copy of the data ranges only (`SEEK_DATA`/`SEEK_HOLE`), so holes stay holes. The
//! data moves inside the kernel where it can: `copy_file_range` within a file system (also when
//! cloning is refused: the kernel's copy may share extents too), `sendfile` between two kinds of
//! file system, where `copy_file_range` is refused (ext4 to XFS or tmpfs: one call a range and
//! no copy through user space); else through a buffer of up to 1 MiB.

use std::fs::File;
use std::os::unix::fs::FileExt;

use dedup_scan::ReadBuf;
use rustix::fs::{copy_file_range, fstat, ftruncate, seek, sendfile, SeekFrom, Stat};
use rustix::io::Errno;

use crate::error::{unsupported, FsError};
use crate::share::clone_file;
use crate::TempFile;

/// Bytes moved per `copy_file_range` or `sendfile` call, or per buffered read and write.
const CHUNK: usize = 1 << 20;

/// Whether [`copy_contents`] may clone instead of copying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reflink {
    /// Clone where the file system can, copy otherwise.
    #[default]
    Auto,
    /// Clone or fail with [`FsError::Unsupported`].
    Always,
    /// Always copy the bytes, so that the copy has extents of its own (a copy to guard
    /// against damage to the original's blocks).
    Never,
}

/// What [`copy_contents`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// The copy shares the source's extents.
    pub cloned: bool,
    /// Bytes cloned, or bytes of data copied (holes are not counted: nothing was read there).
    pub bytes: u64,
    /// The kernel's copy (`copy_file_range`) was refused for a reason that holds for every
    /// file between these two file systems (`EXDEV`, `EOPNOTSUPP`, `ENOSYS`), so that a caller
    /// copying many files can stop asking ([`copy_data`] with `kernel` false).
    pub kernel_refused: bool,
}

/// Make the new file `dst` (a [`TempFile`] nothing was written to yet and whose offset was not
/// moved, so neither `src` nor holding old bytes) hold exactly the first `len` bytes of `src`. `dense` says that `src` has
/// no hole to keep ([`has_no_holes`] of a status the caller took, its own `fstat` or a walk's);
/// otherwise holes of `src` stay holes in the copy. [`FsError::Changed`] when `src` ends before
/// `len` (it shrank since its length was taken); bytes past `len` are not copied. `src`'s file
/// offset is moved (positioned I/O and seeks are used).
pub fn copy_contents(
    src: &File,
    dense: bool,
    dst: &TempFile<'_>,
    len: u64,
    reflink: Reflink,
) -> Result<Copied, FsError> {
    if reflink != Reflink::Never {
        match clone_file(src, dst.file()) {
            Ok(()) => return cut_clone(dst.file(), len),
            Err(FsError::Unsupported(_)) if reflink == Reflink::Auto => {}
            Err(e) => return Err(e),
        }
    }
    // Where the file system can share extents, `copy_file_range` does so for whole blocks:
    // `Never` must not use it.
    copy_data(src, dense, dst, len, reflink != Reflink::Never)
}

/// What [`copy_contents`] does when no clone is to be tried: the data ranges of the first
/// `len` bytes of `src` copied into the new file `dst`, through the kernel's copy when `kernel`
/// (which may share extents where the file system does so on its own), else through a buffer.
/// For a caller that already saw clones refused between these two file systems.
pub fn copy_data(
    src: &File,
    dense: bool,
    dst: &TempFile<'_>,
    len: u64,
    kernel: bool,
) -> Result<Copied, FsError> {
    let mut copier = Copier::new(kernel);
    let bytes = copier.copy(src, dst.file(), len, false, dense)?;
    Ok(Copied { cloned: false, bytes, kernel_refused: copier.refused_for_every_file })
}

/// Whether a file of status `st` has no hole to keep: as many blocks as bytes (preallocation
/// past its end can hide a small one, then copied as zeros: the same bytes), so that its data
/// ranges need no seeks.
pub fn has_no_holes(st: &Stat) -> bool {
    blocks_cover(st.st_blocks.max(0) as u64, st.st_size.max(0) as u64)
}

/// Whether `blocks` 512-byte units allocated cover `size` bytes: no hole to keep.
pub fn blocks_cover(blocks: u64, size: u64) -> bool {
    blocks.saturating_mul(512) >= size
}

/// A clone has the source's whole length, which must be at least `len`; cut it there.
fn cut_clone(dst: &File, len: u64) -> Result<Copied, FsError> {
    let size = fstat(dst)?.st_size as u64;
    if size < len {
        return Err(FsError::Changed);
    }
    if size > len {
        ftruncate(dst, len)?;
    }
    Ok(Copied { cloned: true, bytes: len, kernel_refused: false })
}

/// How a [`Copier`] moves bytes; each refusal moves it one step down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `copy_file_range`.
    Kernel,
    /// `sendfile`: writes at `dst`'s file offset, which the copier keeps track of.
    Sendfile,
    /// A positioned read into a buffer and a positioned write from it.
    Buffer,
}

/// A sparse-aware copy, remembering how the kernel copies for it.
struct Copier {
    mode: Mode,
    /// `copy_file_range` was refused for a reason of the two file systems, not of this file.
    refused_for_every_file: bool,
    buf: Option<ReadBuf>,
    /// `dst`'s file offset where known (the place `sendfile` writes at).
    dst_offset: Option<u64>,
}

impl Copier {
    fn new(kernel: bool) -> Copier {
        let mode = if kernel { Mode::Kernel } else { Mode::Sendfile };
        Copier::in_mode(mode)
    }

    fn in_mode(mode: Mode) -> Copier {
        Copier { mode, refused_for_every_file: false, buf: None, dst_offset: None }
    }

    /// Copy the data ranges of `src` below `len` (all of it when `dense`), then set the length
    /// (a trailing hole). `dst` is emptied first when it is not already (`dst_has_bytes`).
    fn copy(
        &mut self,
        src: &File,
        dst: &File,
        len: u64,
        dst_has_bytes: bool,
        dense: bool,
    ) -> Result<u64, FsError> {
        // Old bytes of `dst` would show through the holes left unwritten.
        if dst_has_bytes {
            ftruncate(dst, 0)?;
        }
        // A new file nothing was written to is at offset 0; another may be anywhere.
        self.dst_offset = (!dst_has_bytes).then_some(0);
        let mut copied = 0;
        let mut pos = 0;
        loop {
            let range =
                if dense { (pos < len).then_some((pos, len)) } else { data_range(src, pos, len)? };
            let Some((start, end)) = range else { break };
            self.copy_range(src, dst, start, end)?;
            copied += end - start;
            pos = end;
        }
        if pos == len {
            // Written up to `len`: the source had that many bytes, and `dst` has that length.
            return Ok(copied);
        }
        // Past the last data range there is only a hole, unless the file ends before `len`.
        if (fstat(src)?.st_size as u64) < len {
            return Err(FsError::Changed);
        }
        ftruncate(dst, len)?;
        Ok(copied)
    }

    fn copy_range(&mut self, src: &File, dst: &File, start: u64, end: u64) -> Result<(), FsError> {
        let mut at = start;
        while at < end {
            let want = CHUNK.min(usize::try_from(end - at).unwrap_or(CHUNK));
            let n = match self.mode {
                Mode::Kernel => {
                    let (mut from, mut to) = (at, at);
                    match copy_file_range(src, Some(&mut from), dst, Some(&mut to), want) {
                        Ok(n) => n,
                        Err(e) if unsupported(e, &[Errno::NOSYS]) => {
                            self.mode = Mode::Sendfile;
                            // EINVAL can be this file's own (a special file); the others hold
                            // for every file between these file systems.
                            self.refused_for_every_file = e != Errno::INVAL && e != Errno::NOTTY;
                            continue;
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                Mode::Sendfile => {
                    if self.dst_offset != Some(at) {
                        seek(dst, SeekFrom::Start(at))?;
                        self.dst_offset = Some(at);
                    }
                    let mut from = at;
                    match sendfile(dst, src, Some(&mut from), want) {
                        Ok(n) => {
                            self.dst_offset = Some(at + n as u64);
                            n
                        }
                        // Nothing was written: a file system that cannot splice takes the
                        // buffer.
                        Err(e) if unsupported(e, &[Errno::NOSYS]) => {
                            self.mode = Mode::Buffer;
                            continue;
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                Mode::Buffer => {
                    // As long as this read, not a whole chunk: a buffer is zeroed when made, and
                    // a mirror of small files makes one per file (zeroing a megabyte for each
                    // was most of a first copy's processor time).
                    let buf = match &mut self.buf {
                        Some(buf) if buf.room() >= want => buf,
                        slot => slot.insert(ReadBuf::new(want)),
                    };
                    buf.set_len(want);
                    let n = src.read_at(buf.bytes_mut(), at)?;
                    dst.write_all_at(&buf.bytes()[..n], at)?;
                    n
                }
            };
            if n == 0 {
                return Err(FsError::Changed);
            }
            at += n as u64;
        }
        Ok(())
    }
}

/// The next range of data at or after `pos` and below `len`; `None` when only a hole is left.
/// A file system without `SEEK_DATA` is all data.
fn data_range(src: &File, pos: u64, len: u64) -> Result<Option<(u64, u64)>, FsError> {
    if pos >= len {
        return Ok(None);
    }
    let start = match seek(src, SeekFrom::Data(pos)) {
        Ok(start) => start,
        // No data at or after `pos`: a hole up to the end of the file.
        Err(Errno::NXIO) => return Ok(None),
        Err(Errno::INVAL | Errno::OPNOTSUPP) => return Ok(Some((pos, len))),
        Err(e) => return Err(e.into()),
    };
    if start >= len {
        return Ok(None);
    }
    let end = seek(src, SeekFrom::Hole(start))?.min(len);
    // A hole where data just was (the file is being changed): copy to the end rather than loop.
    Ok(Some((start, if end > start { end } else { len })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::same_content;
    use crate::test_fs::Reflinks;
    use std::fs;
    use std::path::Path;

    const LEN: u64 = 64 << 20;
    const MODES: [Mode; 3] = [Mode::Kernel, Mode::Sendfile, Mode::Buffer];
    const DATA_AT: [u64; 2] = [1 << 20, 40 << 20];

    /// A 64 MiB file of two 4 KiB data blocks and holes, ending in a hole.
    fn sparse_source(dir: &Path) -> File {
        let p = dir.join("sparse");
        let f = File::create(&p).unwrap();
        f.set_len(LEN).unwrap();
        for (i, at) in DATA_AT.into_iter().enumerate() {
            f.write_all_at(&[i as u8 + 1; 4096], at).unwrap();
        }
        File::open(&p).unwrap()
    }

    /// A destination already holding other bytes, to see they do not survive.
    fn destination(dir: &Path) -> File {
        let p = dir.join("copy");
        fs::write(&p, vec![0xAA; 3 << 20]).unwrap();
        fs::OpenOptions::new().read(true).write(true).open(p).unwrap()
    }

    fn allocated(f: &File) -> u64 {
        fstat(f).unwrap().st_blocks as u64 * 512
    }

    #[test]
    fn holes_stay_holes_through_the_kernel_and_through_the_buffer() {
        let tmp = tempfile::tempdir().unwrap();
        let src = sparse_source(tmp.path());
        for mode in MODES {
            let dst = destination(tmp.path());
            let copied = Copier::in_mode(mode).copy(&src, &dst, LEN, true, false).unwrap();
            assert_eq!(copied, 8192, "{mode:?}: data bytes");
            assert_eq!(fstat(&dst).unwrap().st_size as u64, LEN);
            assert!(allocated(&dst) <= 64 << 10, "{mode:?}: {}", allocated(&dst));
            assert!(same_content(&src, &dst, LEN).unwrap(), "{mode:?}");
        }
    }

    #[test]
    fn bytes_land_at_their_places_whatever_the_destinations_offset() {
        use std::io::Write;
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("src");
        let data: Vec<u8> = (0..(CHUNK + 77)).map(|i| (i % 253) as u8).collect();
        fs::write(&p, &data).unwrap();
        let src = File::open(&p).unwrap();
        for mode in MODES {
            let mut dst = destination(tmp.path());
            // Its offset left past the end by a write through the same descriptor.
            dst.write_all(&[0xBB; 5000]).unwrap();
            let len = data.len() as u64;
            assert_eq!(Copier::in_mode(mode).copy(&src, &dst, len, true, true).unwrap(), len);
            assert!(fs::read(tmp.path().join("copy")).unwrap() == data, "{mode:?}");
        }
    }

    /// A new temporary file in `dir`, as [`copy_contents`] wants its destination.
    fn temp_in(dir: &File) -> TempFile<'_> {
        TempFile::new_in(std::os::fd::AsFd::as_fd(dir)).unwrap()
    }

    fn copy(src: &File, dst: &TempFile<'_>, len: u64, reflink: Reflink) -> Result<Copied, FsError> {
        copy_contents(src, has_no_holes(&fstat(src).unwrap()), dst, len, reflink)
    }

    #[test]
    fn copy_contents_without_reflinks_copies_and_always_refuses() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = File::open(tmp.path()).unwrap();
        let src = sparse_source(tmp.path());
        if clone_file(&src, &destination(tmp.path())).is_ok() {
            return; // a file system with reflinks: the btrfs test covers it
        }
        let e = copy(&src, &temp_in(&dir), LEN, Reflink::Always).unwrap_err();
        assert!(matches!(e, FsError::Unsupported(_)), "{e:?}");
        for reflink in [Reflink::Auto, Reflink::Never] {
            let dst = temp_in(&dir);
            let copied = copy(&src, &dst, LEN, reflink).unwrap();
            assert_eq!(copied, Copied { cloned: false, bytes: 8192, kernel_refused: false });
            assert!(same_content(&src, dst.file(), LEN).unwrap());
            assert!(allocated(dst.file()) <= 64 << 10);
        }
    }

    #[test]
    fn a_prefix_is_copied_and_a_shrunk_source_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("src");
        let data: Vec<u8> = (0..(3 * CHUNK + 5)).map(|i| (i % 251) as u8).collect();
        fs::write(&p, &data).unwrap();
        let src = File::open(&p).unwrap();
        for mode in MODES {
            let dst = destination(tmp.path());
            Copier::in_mode(mode).copy(&src, &dst, 2 * CHUNK as u64 + 1, true, true).unwrap();
            assert_eq!(fs::read(tmp.path().join("copy")).unwrap(), data[..2 * CHUNK + 1]);
            let longer = data.len() as u64 + 1;
            for dense in [true, false] {
                let e = Copier::in_mode(mode).copy(&src, &dst, longer, true, dense).unwrap_err();
                assert!(matches!(e, FsError::Changed), "{e:?}");
            }
        }
    }

    #[test]
    fn on_btrfs_auto_and_always_clone() {
        let Some(fs) = Reflinks::mount("on_btrfs_auto_and_always_clone") else { return };
        let dir = File::open(&fs.dir).unwrap();
        let src = sparse_source(&fs.dir);
        for reflink in [Reflink::Auto, Reflink::Always] {
            let dst = temp_in(&dir);
            let copied = copy(&src, &dst, LEN - 1, reflink).unwrap();
            assert_eq!(copied, Copied { cloned: true, bytes: LEN - 1, kernel_refused: false });
            let whole = fs::read(fs.dir.join("sparse")).unwrap();
            let cut = fs::read(fs.dir.join(dst.name())).unwrap();
            assert!(cut[..] == whole[..whole.len() - 1], "{reflink:?}");
        }
        let dst = temp_in(&dir);
        let copied = copy(&src, &dst, LEN, Reflink::Never).unwrap();
        assert_eq!(copied, Copied { cloned: false, bytes: 8192, kernel_refused: false });
        assert!(same_content(&src, dst.file(), LEN).unwrap());
        assert!(allocated(dst.file()) <= 64 << 10);
        // Never: the copy's blocks are its own, on a file system that could share them.
        let full = fs.dir.join("full");
        fs::write(&full, vec![7u8; 8 << 20]).unwrap();
        let src = File::open(&full).unwrap();
        let before = fs.free_bytes();
        let kept = temp_in(&dir);
        copy(&src, &kept, 8 << 20, Reflink::Never).unwrap();
        assert!(fs.free_bytes() + (6 << 20) < before, "the copy shares the original's blocks");
    }
}
