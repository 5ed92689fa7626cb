//! Temporary names. A replacement is first created as `.dedup-tmp.<16 hex digits>` in the
//! duplicate's directory and then renamed over it; a crash in between leaves that name behind.
//! Such a name only ever holds a new hard link to a kept file or a new symlink, so a later run
//! removes it, but only when it still is one of those (a symlink, or a file with other links):
//! a lone regular file of that name is left alone.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_core::FileMeta;
use dedup_scan::meta_from_stat;
use rustix::fs::{AtFlags, FileType};

use crate::dirent::Entry;
use crate::skip::SkipReason;

const PREFIX: &[u8] = b".dedup-tmp.";

/// True when `name` has the form of a temporary name that dedup makes.
pub fn is_temp_name(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.len() == PREFIX.len() + 16
        && b.starts_with(PREFIX)
        && b[PREFIX.len()..].iter().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// A fresh temporary name (unique per process and call; creation still uses exclusive calls).
pub(crate) fn temp_name() -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let mixed = (u64::from(std::process::id()) << 40) ^ (n << 20) ^ t.rotate_left(17);
    let mut name = PREFIX.to_vec();
    name.extend_from_slice(format!("{mixed:016x}").as_bytes());
    OsString::from(std::ffi::OsStr::from_bytes(&name))
}

/// Temporary names left in `dirs`, sorted.
pub(crate) fn find_strays<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(list) = std::fs::read_dir(dir) else { continue };
        for entry in list.flatten() {
            if is_temp_name(&entry.file_name()) {
                found.push(dir.join(entry.file_name()));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Whether a stray name may go: it must be a symlink, or a regular file with other links.
pub(crate) fn check_stray(path: &Path) -> Result<Entry, SkipReason> {
    let entry = Entry::open(path)?;
    let st = entry.lstat()?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => Ok(entry),
        FileType::RegularFile if st.st_nlink >= 2 => Ok(entry),
        FileType::RegularFile => Err(SkipReason::NotRegular(
            "a file with no other link (not one dedup left behind; left alone)",
        )),
        _ => Err(SkipReason::NotRegular("not a file dedup left behind (left alone)")),
    }
}

/// Remove a stray name after [`check_stray`]. When it was an extra link of a file, that file's
/// link count and so its ctime change: the new metadata is returned so that the steps which
/// validate that file expect exactly this change and no other.
pub(crate) fn remove_stray(entry: &Entry) -> Result<Option<FileMeta>, SkipReason> {
    let linked = entry.open_file().ok();
    rustix::fs::unlinkat(&entry.dir, entry.name.as_os_str(), AtFlags::empty())?;
    Ok(linked.and_then(|f| rustix::fs::fstat(&f).ok()).map(|st| meta_from_stat(&st)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised() {
        let t = temp_name();
        assert!(is_temp_name(&t), "{t:?}");
        assert_ne!(temp_name(), temp_name());
        assert!(!is_temp_name(OsStr::new(".dedup-tmp.0123")));
        assert!(!is_temp_name(OsStr::new("photo.jpg")));
        assert!(!is_temp_name(OsStr::new(".dedup-tmp.0123456789ABCDEF")));
    }

    #[test]
    fn only_extra_links_and_symlinks_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("kept"), b"x").unwrap();
        std::fs::hard_link(d.join("kept"), d.join(".dedup-tmp.0000000000000001")).unwrap();
        std::os::unix::fs::symlink("kept", d.join(".dedup-tmp.0000000000000002")).unwrap();
        std::fs::write(d.join(".dedup-tmp.0000000000000003"), b"lone").unwrap();
        let strays = find_strays([d]);
        assert_eq!(strays.len(), 3);
        for s in &strays[..2] {
            remove_stray(&check_stray(s).unwrap()).unwrap();
        }
        assert!(check_stray(&strays[2]).is_err());
        assert_eq!(find_strays([d]), vec![strays[2].clone()]);
        assert_eq!(std::fs::read(d.join("kept")).unwrap(), b"x");
    }
}
