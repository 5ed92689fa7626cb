//! Our temporary names, and nobody else's. Every new entry is first created under a temporary
//! name in its final directory and then renamed into place, so a crash in between leaves that
//! name behind. There are two kinds, and the name says which, so that clean-up removes only what
//! a crash of ours could have left:
//!
//! - `.dedup-tmp.<16 hex digits>` ([`TempKind::Link`]) only ever holds a new hard link to an
//!   existing file or a new symlink; it is removed only when it still is one of those (a
//!   symlink, or a file with other links). A lone regular file of that name is left alone.
//! - `.dedup-new.<16 hex digits>` ([`TempKind::File`]) only ever holds a new regular file being
//!   written ([`crate::TempFile`]); it is removed only when it is a regular file.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_core::FileMeta;
use dedup_scan::meta_from_stat;
use rustix::fs::{AtFlags, FileType};

use crate::dirent::Entry;
use crate::error::{Found, FsError};

const LINK_PREFIX: &[u8] = b".dedup-tmp.";
const FILE_PREFIX: &[u8] = b".dedup-new.";
const HEX_DIGITS: usize = 16;

/// What a temporary name of ours may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TempKind {
    /// A new hard link or symlink about to replace an entry (`.dedup-tmp.<hex>`).
    Link,
    /// A new regular file being written (`.dedup-new.<hex>`).
    File,
}

impl TempKind {
    fn prefix(self) -> &'static [u8] {
        match self {
            TempKind::Link => LINK_PREFIX,
            TempKind::File => FILE_PREFIX,
        }
    }
}

/// The kind of temporary name `name` is, if it has the exact form of one that dedup makes.
pub fn temp_kind(name: &OsStr) -> Option<TempKind> {
    let b = name.as_bytes();
    [TempKind::Link, TempKind::File].into_iter().find(|kind| {
        let prefix = kind.prefix();
        b.len() == prefix.len() + HEX_DIGITS
            && b.starts_with(prefix)
            && b[prefix.len()..].iter().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    })
}

/// True when `name` has the form of a temporary name that dedup makes (of either kind).
pub fn is_temp_name(name: &OsStr) -> bool {
    temp_kind(name).is_some()
}

/// A fresh temporary name of `kind` (unique per process and call; creating it must still be
/// exclusive, since another process may pick the same name).
pub fn temp_name(kind: TempKind) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = (u64::from(process_id()) << 40) ^ (n << 20) ^ started().rotate_left(17);
    let mut name = Vec::with_capacity(kind.prefix().len() + HEX_DIGITS);
    name.extend_from_slice(kind.prefix());
    // By hand, not `format!`: a first copy makes one name per file, and the formatting
    // machinery cost ten times these shifts (1,360 instructions a name).
    name.extend(
        (0..HEX_DIGITS).rev().map(|i| b"0123456789abcdef"[(mixed >> (4 * i)) as usize & 0xf]),
    );
    OsString::from_vec(name)
}

/// When this process made its first name, in nanoseconds: with the id and the counter, it sets
/// apart the names of two processes that had the same id. Read once, not for every name (a
/// clock read per new file); a name found taken is passed over anyway.
fn started() -> u64 {
    static STARTED: OnceLock<u64> = OnceLock::new();
    *STARTED.get_or_init(|| {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
    })
}

/// This process's id, asked of the kernel once (every new file's temporary name carries it).
fn process_id() -> u32 {
    static PID: OnceLock<u32> = OnceLock::new();
    *PID.get_or_init(std::process::id)
}

/// Temporary names of ours left in `dirs` (not below them), sorted. Unreadable directories are
/// passed over.
pub fn find_strays<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
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

/// Whether a stray name may go: it must hold what its kind allows (see the module doc),
/// [`FsError::NotOurs`] otherwise. Returns the entry to hand to [`remove_stray`].
pub fn check_stray(path: &Path) -> Result<Entry, FsError> {
    let entry = Entry::open(path)?;
    check_stray_at(&entry)?;
    Ok(entry)
}

/// [`check_stray`] of an entry already opened relative to its directory.
pub fn check_stray_at(entry: &Entry) -> Result<(), FsError> {
    let kind = temp_kind(&entry.name).ok_or_else(|| {
        FsError::Io(io::Error::new(io::ErrorKind::InvalidInput, "not a temporary name of dedup"))
    })?;
    let st = entry.lstat()?;
    match (kind, FileType::from_raw_mode(st.st_mode)) {
        (TempKind::Link, FileType::Symlink) => Ok(()),
        (TempKind::Link, FileType::RegularFile) if st.st_nlink >= 2 => Ok(()),
        (TempKind::Link, FileType::RegularFile) => Err(FsError::NotOurs(Found::LoneFile)),
        (TempKind::File, FileType::RegularFile) => Ok(()),
        (_, FileType::Symlink) => Err(FsError::NotOurs(Found::Symlink)),
        (_, FileType::Directory) => Err(FsError::NotOurs(Found::Directory)),
        _ => Err(FsError::NotOurs(Found::Special)),
    }
}

/// Remove a stray name after [`check_stray`]. When it was an extra link of a file, that file's
/// link count and so its ctime change: the new metadata is returned so that a caller which
/// validates that file later expects exactly this change and no other.
pub fn remove_stray(entry: &Entry) -> Result<Option<FileMeta>, FsError> {
    let linked = entry.open_file().ok();
    rustix::fs::unlinkat(&entry.dir, entry.name.as_os_str(), AtFlags::empty())?;
    Ok(linked.and_then(|f| rustix::fs::fstat(&f).ok()).map(|st| meta_from_stat(&st)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised() {
        for kind in [TempKind::Link, TempKind::File] {
            let t = temp_name(kind);
            assert_eq!(temp_kind(&t), Some(kind), "{t:?}");
            assert_ne!(temp_name(kind), temp_name(kind));
        }
        assert!(is_temp_name(OsStr::new(".dedup-tmp.0123456789abcdef")));
        assert!(is_temp_name(OsStr::new(".dedup-new.0123456789abcdef")));
        assert!(!is_temp_name(OsStr::new(".dedup-tmp.0123")));
        assert!(!is_temp_name(OsStr::new(".dedup-new.0123456789abcdef0")));
        assert!(!is_temp_name(OsStr::new("photo.jpg")));
        assert!(!is_temp_name(OsStr::new(".dedup-tmp.0123456789ABCDEF")));
    }

    #[test]
    fn only_what_a_crash_of_ours_leaves_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("kept"), b"x").unwrap();
        std::fs::hard_link(d.join("kept"), d.join(".dedup-tmp.0000000000000001")).unwrap();
        std::os::unix::fs::symlink("kept", d.join(".dedup-tmp.0000000000000002")).unwrap();
        std::fs::write(d.join(".dedup-tmp.0000000000000003"), b"lone").unwrap();
        std::fs::write(d.join(".dedup-new.0000000000000004"), b"half written").unwrap();
        std::os::unix::fs::symlink("kept", d.join(".dedup-new.0000000000000005")).unwrap();
        std::fs::create_dir(d.join(".dedup-new.0000000000000006")).unwrap();
        let strays = find_strays([d]);
        assert_eq!(strays.len(), 6);
        // Sorted: the three `.dedup-new.` names, then the three `.dedup-tmp.` ones.
        let removable = [&strays[0], &strays[3], &strays[4]];
        for s in removable {
            remove_stray(&check_stray(s).unwrap()).unwrap();
        }
        let left: Vec<_> = strays.iter().filter(|s| !removable.contains(s)).cloned().collect();
        for s in &left {
            assert!(matches!(check_stray(s), Err(FsError::NotOurs(_))), "{s:?}");
        }
        assert_eq!(find_strays([d]), left);
        assert_eq!(std::fs::read(d.join("kept")).unwrap(), b"x");
    }
}
