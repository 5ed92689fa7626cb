//! Creating entries of every kind relative to an open directory, and reading a symlink's text:
//! what a restore or a mirror needs besides regular files ([`crate::TempFile`]). A name is one
//! component, so nothing is ever followed on the way; an existing name is
//! [`FsError::Exists`], never replaced. The process's umask applies to the mode given, as for
//! any creation: set the exact mode afterwards with [`crate::set_mode`].

use std::ffi::OsStr;
use std::os::fd::AsFd;

use rustix::fs::{linkat, mkdirat, mknodat, readlinkat, symlinkat, AtFlags, FileType, Mode};
use rustix::io::Errno;

use crate::dirent::check_name;
use crate::error::FsError;

/// A file that is neither regular, a directory nor a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// A named pipe.
    Fifo,
    /// A socket's name (useless without the process that listened on it, but part of a tree).
    Socket,
    /// A character device with its device number (`st_rdev`).
    CharDevice(u64),
    /// A block device with its device number (`st_rdev`).
    BlockDevice(u64),
}

/// `mkdirat`: a new directory `name` in `dir`.
pub fn create_dir_at(dir: impl AsFd, name: &OsStr, mode: u32) -> Result<(), FsError> {
    check_name(name)?;
    created(mkdirat(dir, name, Mode::from_raw_mode(mode)))
}

/// `symlinkat`: a new symlink `name` in `dir` whose text is `text` (any bytes but NUL, taken
/// as they are; it is never resolved here).
pub fn create_symlink_at(dir: impl AsFd, name: &OsStr, text: &OsStr) -> Result<(), FsError> {
    check_name(name)?;
    created(symlinkat(text, dir, name))
}

/// `mknodat`: a new FIFO, socket or device `name` in `dir` (devices need privilege).
pub fn create_special_at(
    dir: impl AsFd,
    name: &OsStr,
    kind: Special,
    mode: u32,
) -> Result<(), FsError> {
    check_name(name)?;
    let (file_type, rdev) = match kind {
        Special::Fifo => (FileType::Fifo, 0),
        Special::Socket => (FileType::Socket, 0),
        Special::CharDevice(rdev) => (FileType::CharacterDevice, rdev),
        Special::BlockDevice(rdev) => (FileType::BlockDevice, rdev),
    };
    created(mknodat(dir, name, file_type, Mode::from_raw_mode(mode), rdev))
}

/// `linkat`: a new name `name` in `dir` for the entry `from_name` in `from_dir`. A symlink at
/// `from_name` is linked itself, not followed. [`FsError::CrossDevice`] across file systems.
pub fn hard_link_at(
    from_dir: impl AsFd,
    from_name: &OsStr,
    dir: impl AsFd,
    name: &OsStr,
) -> Result<(), FsError> {
    check_name(from_name)?;
    check_name(name)?;
    match linkat(from_dir, from_name, dir, name, AtFlags::empty()) {
        Err(Errno::XDEV) => Err(FsError::CrossDevice),
        other => created(other),
    }
}

/// `readlinkat`: the text of the symlink `name` in `dir`, as the bytes stored.
pub fn read_link_at(dir: impl AsFd, name: &OsStr) -> Result<Vec<u8>, FsError> {
    check_name(name)?;
    Ok(readlinkat(dir, name, Vec::new())?.into_bytes())
}

fn created(result: rustix::io::Result<()>) -> Result<(), FsError> {
    match result {
        Ok(()) => Ok(()),
        Err(Errno::EXIST) => Err(FsError::Exists),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_scan::open_dir;
    use std::fs;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    #[test]
    fn every_kind_is_created_relative_to_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let dir = open_dir(d, true).unwrap();
        let n = OsStr::new;
        create_dir_at(&dir, n("sub"), 0o755).unwrap();
        let text = OsStr::from_bytes(b"../somewhere/\xff\xfe not utf-8");
        create_symlink_at(&dir, n("link"), text).unwrap();
        create_special_at(&dir, n("fifo"), Special::Fifo, 0o644).unwrap();
        fs::write(d.join("file"), b"x").unwrap();
        hard_link_at(&dir, n("file"), &dir, n("second")).unwrap();
        hard_link_at(&dir, n("link"), &dir, n("link2")).unwrap();

        assert!(fs::symlink_metadata(d.join("sub")).unwrap().is_dir());
        assert_eq!(read_link_at(&dir, n("link")).unwrap(), text.as_bytes());
        assert_eq!(read_link_at(&dir, n("link2")).unwrap(), text.as_bytes());
        assert!(fs::symlink_metadata(d.join("fifo")).unwrap().file_type().is_fifo());
        assert_eq!(fs::metadata(d.join("file")).unwrap().nlink(), 2);
        assert_eq!(
            fs::metadata(d.join("second")).unwrap().ino(),
            fs::metadata(d.join("file")).unwrap().ino()
        );

        for name in ["sub", "link", "fifo", "file"] {
            assert!(matches!(create_dir_at(&dir, n(name), 0o755), Err(FsError::Exists)), "{name}");
            let e = create_special_at(&dir, n(name), Special::Fifo, 0o644);
            assert!(matches!(e, Err(FsError::Exists)), "{name}");
        }
        assert_eq!(fs::read(d.join("file")).unwrap(), b"x");
        assert!(read_link_at(&dir, n("file")).is_err());
    }

    #[test]
    fn devices_are_made_with_their_numbers() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIPPED devices_are_made_with_their_numbers: mknod of a device needs root");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path(), true).unwrap();
        let null = rustix::fs::makedev(1, 3);
        create_special_at(&dir, OsStr::new("null"), Special::CharDevice(null), 0o600).unwrap();
        create_special_at(&dir, OsStr::new("blk"), Special::BlockDevice(null), 0o600).unwrap();
        let m = fs::symlink_metadata(tmp.path().join("null")).unwrap();
        assert!(m.file_type().is_char_device());
        assert_eq!(m.rdev(), null);
        let m = fs::symlink_metadata(tmp.path().join("blk")).unwrap();
        assert!(m.file_type().is_block_device());
        assert_eq!(m.rdev(), null);
    }
}
