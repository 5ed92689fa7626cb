//! Where `-b/--backup` and `--backup-dir` keep what a run replaces or deletes, checked before
//! anything is made. As in rsync, a relative `--backup-dir` lies below DST, and the backup of a
//! DST entry is moved (renamed, never copied) to the same path below it, a file's name with the
//! suffix appended; without `--backup-dir` it is renamed beside itself, its name with the suffix
//! (`~` by default). A rename cannot cross file systems, so a backup directory on another one
//! than DST is refused; so is one inside SRC, one holding SRC or DST, and one reached inside
//! DST by another path than below it. A backup directory inside DST is left out of the mirror on
//! both sides and never deleted; with backups beside their files, DST names ending with the
//! suffix are never deleted (rsync's `--filter 'P *~'`).

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::roots::{chain_of, existing_part};
use crate::SyncError;

/// What the user asked to keep backups with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackupOptions {
    /// `--backup-dir`: where backups go (relative: below DST); `None`: beside each entry.
    pub dir: Option<PathBuf>,
    /// Appended to the name of each backup (of a file; of any entry kept beside).
    pub suffix: Vec<u8>,
}

/// Where the backups of a run go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In the entry's own directory, its name with the suffix.
    Beside,
    /// In a directory below DST, at this path below it.
    InDst(Vec<u8>),
    /// In a directory outside DST, at this path.
    Outside(PathBuf),
}

/// The backups of a run, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// Where they go.
    pub place: Place,
    /// The suffix.
    pub suffix: Vec<u8>,
}

impl Backup {
    /// Check `options` for a run from `src` to `dst` (which need not exist yet).
    pub fn resolve(options: &BackupOptions, src: &Path, dst: &Path) -> Result<Backup, SyncError> {
        let suffix = options.suffix.clone();
        if suffix.contains(&b'/') {
            return Err(SyncError::Backup("--suffix may not contain a '/'".into()));
        }
        let Some(dir) = &options.dir else {
            if suffix.is_empty() {
                let why = "an empty --suffix needs --backup-dir: a backup beside its file would \
                           take the file's own name";
                return Err(SyncError::Backup(why.into()));
            }
            return Ok(Backup { place: Place::Beside, suffix });
        };
        let abs = if dir.is_relative() { dst.join(dir) } else { dir.clone() };
        let refuse =
            |why: &str| Err(SyncError::Backup(format!("--backup-dir {}: {why}", abs.display())));
        let io_err = |p: &Path, e: io::Error| SyncError::Io(p.to_path_buf(), e);
        let (b_anchor, b_rest) = existing_part(&abs).map_err(|e| io_err(&abs, e))?;
        let (d_anchor, d_rest) = existing_part(dst).map_err(|e| io_err(dst, e))?;
        let b_chain = chain_of(&b_anchor).map_err(|e| io_err(&b_anchor, e))?;
        let s_chain = chain_of(src).map_err(|e| io_err(src, e))?;
        let d_chain = chain_of(&d_anchor).map_err(|e| io_err(&d_anchor, e))?;
        let exists = b_rest.is_empty();
        if b_chain.contains(&s_chain[0]) {
            return refuse("lies inside SRC");
        }
        if exists && s_chain.contains(&b_chain[0]) {
            return refuse("holds SRC");
        }
        if exists && d_rest.is_empty() && d_chain.contains(&b_chain[0]) {
            return refuse("is DST or holds it");
        }
        if b_chain[0].dev != d_chain[0].dev {
            return refuse(
                "on another file system than DST: a backup is moved there, and a move cannot \
                 cross file systems",
            );
        }
        let full = |anchor: &Path, rest: &[std::ffi::OsString]| {
            let mut p = std::fs::canonicalize(anchor).map_err(|e| io_err(anchor, e))?;
            p.extend(rest);
            Ok::<PathBuf, SyncError>(p)
        };
        let (b_full, d_full) = (full(&b_anchor, &b_rest)?, full(&d_anchor, &d_rest)?);
        match b_full.strip_prefix(&d_full) {
            Ok(rel) if rel.as_os_str().is_empty() => refuse("is DST itself"),
            Ok(rel) => {
                Ok(Backup { place: Place::InDst(rel.as_os_str().as_bytes().to_vec()), suffix })
            }
            Err(_) if d_rest.is_empty() && b_chain.contains(&d_chain[0]) => refuse(
                "lies inside DST by another path (a bind mount or a symlink): name it by its path \
                 below DST",
            ),
            Err(_) => Ok(Backup { place: Place::Outside(abs), suffix }),
        }
    }

    /// The backup directory's path below DST, when it lies there (left out of the mirror).
    pub fn dir_in_dst(&self) -> Option<&[u8]> {
        match &self.place {
            Place::InDst(rel) => Some(rel),
            _ => None,
        }
    }

    /// True when the DST entry `name` at `rel` (its path below DST) is a backup, or the backup
    /// directory, and so is never deleted.
    pub fn protects(&self, rel: &[u8], name: &[u8]) -> bool {
        match &self.place {
            Place::Beside => name.ends_with(&self.suffix),
            Place::InDst(dir) => rel == dir.as_slice(),
            Place::Outside(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(dir: Option<&Path>, suffix: &str) -> BackupOptions {
        BackupOptions { dir: dir.map(Path::to_path_buf), suffix: suffix.as_bytes().to_vec() }
    }

    #[test]
    fn a_backup_dir_is_placed_below_dst_or_outside_it_and_refused_where_unsafe() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = (t.path().join("s"), t.path().join("d"));
        std::fs::create_dir_all(s.join("inner")).unwrap();
        std::fs::create_dir_all(&d).unwrap();
        let place = |dir: &Path| Backup::resolve(&opts(Some(dir), ""), &s, &d).map(|b| b.place);
        assert_eq!(place(Path::new("bk/today")).unwrap(), Place::InDst(b"bk/today".to_vec()));
        assert_eq!(place(&d.join("bk")).unwrap(), Place::InDst(b"bk".to_vec()));
        let outside = t.path().join("old");
        assert_eq!(place(Path::new("../old")).unwrap(), Place::Outside(d.join("../old")));
        assert_eq!(place(&outside).unwrap(), Place::Outside(outside.clone()));
        assert_eq!(place(Path::new("../d/x")).unwrap(), Place::InDst(b"x".to_vec()));
        for bad in [s.join("inner"), s.clone(), t.path().to_path_buf(), d.clone(), ".".into()] {
            assert!(matches!(place(&bad), Err(SyncError::Backup(_))), "{bad:?}");
        }
        // DST made by the run: a relative directory is below it.
        let new = t.path().join("new/dst");
        let b = Backup::resolve(&opts(Some(Path::new("bk")), ""), &s, &new).unwrap();
        assert_eq!(b.place, Place::InDst(b"bk".to_vec()));
    }

    #[test]
    fn suffixes_and_what_is_protected() {
        let t = tempfile::tempdir().unwrap();
        let (s, d) = (t.path().join("s"), t.path().join("d"));
        std::fs::create_dir_all(&s).unwrap();
        let resolve = |o: &BackupOptions| Backup::resolve(o, &s, &d);
        assert!(matches!(resolve(&opts(None, "")), Err(SyncError::Backup(_))));
        assert!(matches!(resolve(&opts(None, "a/b")), Err(SyncError::Backup(_))));
        let beside = resolve(&opts(None, "~")).unwrap();
        assert!(beside.protects(b"a/f~", b"f~") && !beside.protects(b"a/f", b"f"));
        let inside = resolve(&opts(Some(Path::new("bk")), ".old")).unwrap();
        assert!(inside.protects(b"bk", b"bk") && !inside.protects(b"x/bk", b"bk"));
        assert_eq!(inside.dir_in_dst(), Some(&b"bk"[..]));
    }
}
