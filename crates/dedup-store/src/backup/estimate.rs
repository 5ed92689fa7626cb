//! How much a backup has to go through, counted ahead of it: a walk that only sums the sizes of
//! the regular files the backup will see (same roots, exclusions and file-system boundary), so
//! that a progress display can give an ETA on a first backup. Nothing is read or opened but
//! directories; the count stops early when asked to.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use dedup_scan::io::{Concurrency, IoScheduler};
use dedup_scan::{walk, EntryKind, Listing, RootVisit, Visitor, WalkOptions};

use super::{bump, BackupOptions};
use crate::error::{Error, Result};

/// Sums the sizes of the regular files.
struct Counter<'a> {
    total: &'a AtomicU64,
    stop: &'a AtomicBool,
}

impl Visitor for Counter<'_> {
    type Dir = ();

    fn root(&self, root: &RootVisit<'_>) -> Option<()> {
        let entry = root.entry?;
        match entry.kind {
            EntryKind::Dir => Some(()),
            EntryKind::File => {
                bump(self.total, entry.meta.as_ref().map_or(0, |m| m.size));
                None
            }
            _ => None,
        }
    }

    fn dir(&self, _dir: &(), listing: &Listing<'_>) -> Vec<(usize, ())> {
        if self.stop.load(Ordering::Relaxed) {
            return Vec::new();
        }
        let mut subdirs = Vec::new();
        for (i, entry) in listing.entries.iter().enumerate() {
            match entry.kind {
                EntryKind::Dir => subdirs.push((i, ())),
                EntryKind::File => bump(self.total, entry.meta.as_ref().map_or(0, |m| m.size)),
                _ => {}
            }
        }
        subdirs
    }
}

/// Adds to `total` the sizes of the regular files a backup with `options` will find, until done
/// or until `stop` is set. Problems are left for the backup to report.
pub fn count_bytes(options: &BackupOptions, total: &AtomicU64, stop: &AtomicBool) -> Result<()> {
    let mut walk_options = WalkOptions::default()
        .with_excludes(&options.excludes)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    walk_options.one_file_system = options.one_file_system;
    let mut paths = Vec::new();
    for path in &options.paths {
        paths
            .push(std::path::absolute(path).map_err(|e| Error::io(path.display().to_string(), e))?);
    }
    // One lister at a time: the count must not slow down the backup it runs beside.
    let io = IoScheduler::new(Concurrency::Fixed(1));
    walk(&paths, &walk_options, &io, &(), &Counter { total, stop });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_the_size_of_the_files_a_backup_sees() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::write(root.join("a"), vec![1u8; 1000]).unwrap();
        std::fs::write(root.join("sub/deeper/b"), vec![2u8; 234]).unwrap();
        std::fs::write(root.join("sub/skipped.tmp"), vec![3u8; 5000]).unwrap();
        std::os::unix::fs::symlink("a", root.join("link")).unwrap();
        std::fs::write(dir.path().join("single"), vec![4u8; 1000]).unwrap();
        let options = BackupOptions {
            paths: vec![root.clone(), dir.path().join("single")],
            excludes: vec!["*.tmp".into()],
            ..BackupOptions::default()
        };
        let (total, stop) = (AtomicU64::new(0), AtomicBool::new(false));
        count_bytes(&options, &total, &stop).unwrap();
        assert_eq!(total.load(Ordering::Relaxed), 1234 + 1000);
        let (total, stop) = (AtomicU64::new(0), AtomicBool::new(true));
        count_bytes(&options, &total, &stop).unwrap();
        assert!(total.load(Ordering::Relaxed) < 1234 + 1000, "a stopped count goes no deeper");
    }
}
