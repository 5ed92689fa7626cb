//! The system's tables of mount points: `/etc/fstab`, what is meant to be mounted, against
//! `/proc/self/mountinfo`, what is. A directory the first names as a mount point and on which
//! nothing is mounted is, most often, a disk that failed to mount or was unplugged: backed up
//! or mirrored as it stands (empty, or whatever lies under the mount), it would stand for the
//! disk's data and replace it in a mirror or as the newest snapshot. `sync --delete` and
//! `store backup` look for such directories below their roots.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The table of file systems mounted at boot.
const FSTAB: &str = "/etc/fstab";

/// The mount points of this process's mount namespace.
const MOUNTINFO: &str = "/proc/self/mountinfo";

/// The directories strictly below `root` that `/etc/fstab` names as mount points and on which
/// nothing is mounted, as paths relative to `root` (resolved first, as the tables name resolved
/// places), sorted. Tables that cannot be read give none: without `/etc/fstab` there is
/// nothing to go by, and without the mount table every one would look unmounted.
pub fn unmounted_below(root: &Path) -> Vec<PathBuf> {
    let (Ok(fstab), Ok(mountinfo)) = (std::fs::read(FSTAB), std::fs::read(MOUNTINFO)) else {
        return Vec::new();
    };
    let Ok(root) = std::fs::canonicalize(root) else { return Vec::new() };
    let mounted = mount_points(&mountinfo, 4);
    let mut found: Vec<PathBuf> = mount_points(&fstab, 1)
        .into_iter()
        .filter(|point| point != &root && point.starts_with(&root) && !mounted.contains(point))
        .filter(|point| point.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .filter_map(|point| point.strip_prefix(&root).ok().map(Path::to_path_buf))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The paths in column `column` (from 0) of a table in the format of `fstab(5)` and
/// `proc_pid_mountinfo(5)`: fields split by blanks, `#` comments, octal escapes (`\040` for a
/// space). Only absolute paths: `none`, `swap` and the like are not places.
fn mount_points(table: &[u8], column: usize) -> Vec<PathBuf> {
    table
        .split(|&b| b == b'\n')
        .filter(|line| !line.trim_ascii_start().starts_with(b"#"))
        .filter_map(|line| {
            let field =
                line.split(u8::is_ascii_whitespace).filter(|f| !f.is_empty()).nth(column)?;
            let path = unescape(field);
            path.starts_with(b"/").then(|| normal(&path))
        })
        .collect()
}

/// `path` without a trailing `/` or `.` components, as `canonicalize` gives SRC.
fn normal(path: &[u8]) -> PathBuf {
    Path::new(OsStr::from_bytes(path)).components().collect()
}

/// A field with its `\NNN` octal escapes decoded.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) if field[i] == b'\\' => {
                let value = d.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            _ => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fstab_mount_points_are_read_with_their_escapes_and_without_comments() {
        let fstab = b"# /etc/fstab\n\
            UUID=1 / ext4 defaults 0 1\n\
            \t/dev/sdb1   /srv/My\\040Disk/  xfs noauto 0 2\n\
            /dev/sdc1 none swap sw 0 0\n\
            #/dev/sdd1 /old ext4 defaults 0 2\n\
            \n";
        assert_eq!(mount_points(fstab, 1), [PathBuf::from("/"), PathBuf::from("/srv/My Disk")]);
    }

    #[test]
    fn mountinfo_gives_the_mount_point_in_its_fifth_column() {
        let info = b"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
            40 22 8:17 / /mnt/back\\040up rw shared:9 - xfs /dev/sdb1 rw\n";
        assert_eq!(mount_points(info, 4), [PathBuf::from("/"), PathBuf::from("/mnt/back up")]);
    }

    #[test]
    fn a_backslash_without_three_octal_digits_stays() {
        assert_eq!(unescape(b"a\\b\\01"), b"a\\b\\01");
        assert_eq!(unescape(b"\\134x"), b"\\x");
    }
}
