//! What a directory holds besides what the walk kept. The walk records regular files (of the
//! selected sizes) and directories only; two directories that hold the same files but differ in
//! an empty file, a symlink or an excluded entry are not duplicates of each other. So every
//! directory that looks duplicated is listed once more and its other entries compared too: empty
//! files and symlinks (by target) take part, anything else (special files, entries excluded by
//! the selection, an entry that vanished) makes the directory's contents unknown.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// An entry the walk did not keep.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Extra {
    /// An empty regular file.
    EmptyFile,
    /// A symbolic link with this target.
    Symlink(Vec<u8>),
}

/// The entries of `dir` that are not among `known` (the names the walk kept, sorted), sorted by
/// name; `None` when the directory holds something whose content is unknown, or a kept name has
/// gone.
pub(crate) fn extras(dir: &Path, known: &[&[u8]]) -> Option<Vec<(Vec<u8>, Extra)>> {
    let mut found = 0;
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let name = name.as_bytes();
        if known.binary_search(&name).is_ok() {
            found += 1;
            continue;
        }
        let kind = entry.file_type().ok()?;
        let extra = if kind.is_symlink() {
            Extra::Symlink(fs::read_link(entry.path()).ok()?.as_os_str().as_bytes().to_vec())
        } else if kind.is_file() && entry.metadata().ok()?.size() == 0 {
            Extra::EmptyFile
        } else {
            // Unscanned content, a directory not walked, or a special file.
            return None;
        };
        out.push((name.to_vec(), extra));
    }
    if found != known.len() {
        return None;
    }
    out.sort();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_files_and_symlinks_are_extras_others_make_it_unknown() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("kept"), b"x").unwrap();
        fs::write(d.path().join("empty"), b"").unwrap();
        std::os::unix::fs::symlink("kept", d.path().join("link")).unwrap();
        let got = extras(d.path(), &[b"kept"]).unwrap();
        assert_eq!(
            got,
            [
                (b"empty".to_vec(), Extra::EmptyFile),
                (b"link".to_vec(), Extra::Symlink(b"kept".to_vec()))
            ]
        );
        // A kept name that is gone, or an unscanned non-empty file: unknown.
        assert_eq!(extras(d.path(), &[b"gone", b"kept"]), None);
        fs::write(d.path().join("big"), b"unscanned").unwrap();
        assert_eq!(extras(d.path(), &[b"kept"]), None);
    }
}
