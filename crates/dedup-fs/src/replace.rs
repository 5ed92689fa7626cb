//! Changes to a validated file, made on files held open. Replacements are made under a
//! temporary name in the replaced file's directory, checked, then renamed over it, so the path
//! always names a complete file: the old one or its replacement.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;

use rustix::fs::{linkat, renameat, renameat_with, symlinkat, unlinkat, AtFlags, RenameFlags};
use rustix::io::Errno;

use crate::dirent::Entry;
use crate::error::FsError;
use crate::stray::{temp_name, TempKind};
use crate::validate::Opened;

/// Replace `target` with a hard link to `kept`. The new name is checked to be `kept`'s inode
/// ([`FsError::SourceReplaced`] otherwise) and `target` to be unchanged before the rename.
pub fn replace_with_link(kept: &Opened, target: &Opened) -> Result<(), FsError> {
    let tmp = create_temp(|name| {
        linkat(
            &kept.entry.dir,
            kept.entry.name.as_os_str(),
            &target.entry.dir,
            name,
            AtFlags::empty(),
        )
    })?;
    // The new name must be the kept inode itself, not whatever stood at the kept path by then.
    let made = target.entry.lstat_sibling(&tmp);
    if !made.is_ok_and(|st| st.st_dev == kept.stat.st_dev && st.st_ino == kept.stat.st_ino) {
        discard(&target.entry, &tmp);
        return Err(FsError::SourceReplaced);
    }
    replace_with(target, &tmp)
}

/// Replace `target` with a symlink whose text is `text`, after checking `target` is unchanged.
pub fn replace_with_symlink(text: &Path, target: &Opened) -> Result<(), FsError> {
    let tmp = create_temp(|name| symlinkat(text, &target.entry.dir, name))?;
    replace_with(target, &tmp)
}

/// Delete `target`, after checking it is unchanged.
pub fn remove(target: &Opened) -> Result<(), FsError> {
    target.still_there()?;
    Ok(unlinkat(&target.entry.dir, target.entry.name.as_os_str(), AtFlags::empty())?)
}

/// Move `target` to `dest`, whose directory must exist: never over an existing file
/// ([`FsError::Exists`]), never by copying ([`FsError::CrossDevice`]).
pub fn move_to(target: &Opened, dest: &Path) -> Result<(), FsError> {
    let to = Entry::open(dest)?;
    target.still_there()?;
    let flags = RenameFlags::NOREPLACE;
    let from = target.entry.name.as_os_str();
    match renameat_with(&target.entry.dir, from, &to.dir, to.name.as_os_str(), flags) {
        Ok(()) => Ok(()),
        Err(Errno::XDEV) => Err(FsError::CrossDevice),
        Err(Errno::EXIST) => Err(FsError::Exists),
        Err(e) => Err(e.into()),
    }
}

/// What [`move_to`] would meet at `dest`, checked without changing anything: the destination
/// must not exist, and its nearest existing ancestor must be on `target`'s file system.
pub fn move_precheck(target: &Opened, dest: &Path) -> Result<(), FsError> {
    match std::fs::symlink_metadata(dest) {
        Ok(_) => return Err(FsError::Exists),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(FsError::Io(e)),
    }
    let mut dir = dest.parent();
    while let Some(d) = dir {
        match std::fs::metadata(d) {
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                if m.dev() != target.stat.st_dev {
                    return Err(FsError::CrossDevice);
                }
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => dir = d.parent(),
            Err(e) => return Err(FsError::Io(e)),
        }
    }
    Ok(())
}

/// Create a new entry next to `target` under a fresh temporary name of the link kind.
fn create_temp(make: impl Fn(&OsStr) -> rustix::io::Result<()>) -> Result<OsString, FsError> {
    for _ in 0..16 {
        let name = temp_name(TempKind::Link);
        match make(&name) {
            Ok(()) => return Ok(name),
            Err(Errno::EXIST) => continue,
            Err(Errno::XDEV) => return Err(FsError::CrossDevice),
            Err(e) => return Err(e.into()),
        }
    }
    Err(FsError::Io(io::Error::other("cannot find a free temporary name")))
}

/// Check the replaced file one last time, then rename the temporary name over it.
fn replace_with(target: &Opened, tmp: &OsStr) -> Result<(), FsError> {
    if let Err(reason) = target.still_there() {
        discard(&target.entry, tmp);
        return Err(reason);
    }
    let dir = &target.entry.dir;
    if let Err(e) = renameat(dir, tmp, dir, target.entry.name.as_os_str()) {
        discard(&target.entry, tmp);
        return Err(e.into());
    }
    Ok(())
}

/// Remove a temporary name we made (best effort: a later clean-up removes what is left).
fn discard(entry: &Entry, tmp: &OsStr) {
    let _ = unlinkat(&entry.dir, tmp, AtFlags::empty());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::open_expected;
    use dedup_core::FileMeta;
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::path::PathBuf;

    fn opened(p: &Path) -> Opened {
        open_expected(p, &FileMeta::of(&fs::symlink_metadata(p).unwrap())).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn two(dir: &Path) -> (PathBuf, PathBuf) {
        let (a, b) = (dir.join("a"), dir.join("b"));
        fs::write(&a, b"same").unwrap();
        fs::write(&b, b"same").unwrap();
        (a, b)
    }

    #[test]
    fn link_and_symlink_replace_the_name_and_leave_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = two(tmp.path());
        replace_with_link(&opened(&a), &opened(&b)).unwrap();
        assert_eq!(fs::metadata(&a).unwrap().ino(), fs::metadata(&b).unwrap().ino());
        fs::remove_file(&b).unwrap();
        fs::write(&b, b"same").unwrap();
        replace_with_symlink(Path::new("a"), &opened(&b)).unwrap();
        assert_eq!(fs::read_link(&b).unwrap(), Path::new("a"));
        assert_eq!(names(tmp.path()), ["a", "b"]);
    }

    #[test]
    fn a_target_changed_before_the_rename_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = two(tmp.path());
        let target = opened(&b);
        std::thread::sleep(std::time::Duration::from_millis(5));
        fs::write(&b, b"SAME").unwrap();
        assert!(matches!(replace_with_link(&opened(&a), &target), Err(FsError::Changed)));
        assert!(matches!(remove(&target), Err(FsError::Changed)));
        assert_eq!(fs::read(&b).unwrap(), b"SAME");
        assert_eq!(names(tmp.path()), ["a", "b"]);
    }

    #[test]
    fn a_link_source_replaced_after_validation_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = two(tmp.path());
        let kept = opened(&a);
        fs::remove_file(&a).unwrap();
        fs::write(&a, b"other").unwrap();
        assert!(matches!(replace_with_link(&kept, &opened(&b)), Err(FsError::SourceReplaced)));
        assert_eq!(fs::read(&b).unwrap(), b"same");
        assert_eq!(names(tmp.path()), ["a", "b"]);
    }

    #[test]
    fn move_never_replaces_an_existing_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = two(tmp.path());
        let target = opened(&a);
        assert!(matches!(move_precheck(&target, &b), Err(FsError::Exists)));
        assert!(matches!(move_to(&target, &b), Err(FsError::Exists)));
        let c = tmp.path().join("c");
        move_precheck(&target, &c).unwrap();
        move_to(&target, &c).unwrap();
        assert_eq!(names(tmp.path()), ["b", "c"]);
    }
}
