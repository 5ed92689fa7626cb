//! What a file this run creates in a destination directory starts with, known without asking
//! the new file (`fstat`) for each one: its permission bits are those asked for less the
//! process's umask, and its owner this process's, on the local file systems that follow that
//! rule, in a directory without a default ACL. A default ACL shapes the new file's bits instead
//! and gives it an access ACL of its own, which the source may not have: there, a new entry's
//! attributes are read and those the source lacks removed, as for an entry that existed before.

use std::sync::Mutex;

use rustix::fd::BorrowedFd;
use rustix::io::Errno;

/// The attribute holding a directory's default ACL, which its new entries inherit.
const DEFAULT_ACL: &str = "system.posix_acl_default";

/// File systems whose new files get exactly the bits asked for less the umask (in a directory
/// without a default ACL) and the creating process's owner (or the directory's group): tmpfs,
/// ext2/3/4, XFS, btrfs. Others (network file systems squashing root, FUSE, FAT with fixed
/// modes) are asked.
const PREDICTABLE: [i64; 4] = [0x0102_1994, 0xEF53, 0x5846_5342, 0x9123_683E];

/// What a new file in a destination directory is known to start with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewFile {
    /// Bits asked for less this umask, owned by this process: nothing to ask.
    Known { umask: u32 },
    /// Not known: its status is taken after creation, and it has no attributes.
    Asked,
    /// The directory has a default ACL: the new file's status is taken and its attributes
    /// read, so that an inherited ACL the source lacks is removed.
    Inherits,
}

/// The process's umask and, per destination device, whether its file system is one of
/// [`PREDICTABLE`].
#[derive(Debug)]
pub struct Created {
    umask: Option<u32>,
    devices: Mutex<Vec<(u64, bool)>>,
}

impl Default for Created {
    fn default() -> Created {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        Created { umask: umask_of(&status), devices: Mutex::new(Vec::new()) }
    }
}

impl Created {
    /// What a new file in `dir` (on device `dev`) starts with.
    pub fn in_dir(&self, dir: BorrowedFd<'_>, dev: u64) -> NewFile {
        if has_default_acl(dir) {
            return NewFile::Inherits;
        }
        match self.umask {
            Some(umask) if self.predictable(dir, dev) => NewFile::Known { umask },
            _ => NewFile::Asked,
        }
    }

    /// Whether the file system of `dir` (device `dev`) is one of [`PREDICTABLE`], asked once
    /// per device.
    fn predictable(&self, dir: BorrowedFd<'_>, dev: u64) -> bool {
        let mut devices = self.devices.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, known)) = devices.iter().find(|(d, _)| *d == dev) {
            return known;
        }
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        let known =
            rustix::fs::fstatfs(dir).is_ok_and(|s| PREDICTABLE.contains(&(s.f_type as i64)));
        devices.push((dev, known));
        known
    }
}

/// Whether entries created in `dir` inherit a default ACL; an answer other than "none"
/// (`ENODATA`) or "no ACLs on this file system" counts as yes, so that the new entry is asked.
pub fn has_default_acl(dir: BorrowedFd<'_>) -> bool {
    let mut none: [u8; 0] = [];
    match rustix::fs::fgetxattr(dir, DEFAULT_ACL, &mut none[..]) {
        Err(Errno::NODATA) | Err(Errno::OPNOTSUPP) => false,
        Ok(_) | Err(_) => true,
    }
}

/// The umask in the text of `/proc/self/status` (Linux 4.7 and later).
fn umask_of(status: &str) -> Option<u32> {
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    u32::from_str_radix(line.trim(), 8).ok().filter(|m| *m <= 0o777)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn the_umask_is_read_from_the_process_status() {
        assert_eq!(umask_of("Name:\tx\nUmask:\t0022\nState:\tR\n"), Some(0o022));
        assert_eq!(umask_of("Umask:\t0077\n"), Some(0o077));
        assert_eq!(umask_of("Name:\tx\n"), None, "a kernel before 4.7");
        assert_eq!(umask_of("Umask:\tzz\n"), None);
    }

    #[test]
    fn a_directory_with_a_default_acl_is_told_apart() {
        let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
        let fd = std::fs::File::open(dir.path()).unwrap();
        let dev = rustix::fs::fstat(&fd).unwrap().st_dev;
        let created = Created::default();
        assert!(!has_default_acl(fd.as_fd()));
        assert!(matches!(created.in_dir(fd.as_fd(), dev), NewFile::Known { .. } | NewFile::Asked));
        // user::rwx, user nobody rwx, group::r-x, mask::rwx, other::r-x
        let mut acl = 2u32.to_le_bytes().to_vec();
        for (tag, perm, id) in
            [(1u16, 7u16, u32::MAX), (2, 7, 65534), (4, 5, u32::MAX), (0x10, 7, u32::MAX)]
                .into_iter()
                .chain([(0x20, 5, u32::MAX)])
        {
            acl.extend(tag.to_le_bytes());
            acl.extend(perm.to_le_bytes());
            acl.extend(id.to_le_bytes());
        }
        let flags = rustix::fs::XattrFlags::empty();
        if rustix::fs::fsetxattr(&fd, DEFAULT_ACL, &acl, flags).is_err() {
            eprintln!("skipped: this file system takes no ACLs");
            return;
        }
        assert!(has_default_acl(fd.as_fd()));
        assert_eq!(created.in_dir(fd.as_fd(), dev), NewFile::Inherits);
    }
}
