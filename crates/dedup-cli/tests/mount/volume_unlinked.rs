//! A file written through the kernel's cache, closed and unlinked: the kernel still holds its
//! inode after the unlink and sends requests on it (the file's times), which the volume must
//! answer, not refuse as unknown. A refusal there was recorded by the kernel as a write-back
//! error of the whole file system, and the next `syncfs` (`sync -f`) failed with ENOENT
//! although every byte was committed. The same for a name renamed over and a directory removed.
//! The nameless inodes go when the kernel forgets them.

use crate::volume_helpers::{fuse_available, volume_place, Volume};

use std::fs::{self, File};
use std::io::Write;
use std::time::{Duration, Instant};

/// The volume's count of inodes, as `statfs` tells it.
fn inodes(volume: &Volume) -> u64 {
    rustix::fs::statvfs(volume.path("")).unwrap().f_files
}

#[test]
fn files_unlinked_after_a_cached_write_leave_syncfs_clean_and_are_forgotten() {
    let test = "files_unlinked_after_a_cached_write_leave_syncfs_clean_and_are_forgotten";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "unlinked", &point, &["--commit-interval", "3600"]);
    fs::write(volume.path("kept"), b"kept").unwrap();
    let before = inodes(&volume);
    for i in 0..20 {
        // What an editor's or a database's temporary file goes through.
        let path = volume.path(&format!("tmp-{i}"));
        File::create(&path).unwrap().write_all(b"scratch").unwrap();
        fs::remove_file(&path).unwrap();
        // The same by a rename over the name (a file saved by a new copy), and a directory.
        let (new, old) = (volume.path(&format!("new-{i}")), volume.path(&format!("old-{i}")));
        File::create(&old).unwrap().write_all(b"old").unwrap();
        File::create(&new).unwrap().write_all(b"new").unwrap();
        fs::rename(&new, &old).unwrap();
        fs::remove_file(&old).unwrap();
        let dir = volume.path(&format!("dir-{i}"));
        fs::create_dir(&dir).unwrap();
        fs::remove_dir(&dir).unwrap();
    }
    let root = File::open(volume.path("")).unwrap();
    rustix::fs::syncfs(&root).expect("syncfs after unlinks");
    // The kernel forgets the unlinked inodes on its own time: wait for it, boundedly.
    let deadline = Instant::now() + Duration::from_secs(30);
    while inodes(&volume) > before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(inodes(&volume), before, "unlinked inodes kept after the kernel forgot them");
    drop(root);
    volume.unmount_ok();
}
