//! A write error reaches the `close` of the file it belongs to: a close waits for its own
//! file's chunks (not for every chunk the sealing threads hold) and reports what storing them
//! met; while the disk stays full the next `fsync` fails too, and once space is back it commits
//! the file whole.

use crate::volume_helpers::{
    assert_checks_clean, data, fill_outside, on_a_small_disk, SmallDiskVolume, Volume,
};

use std::fs::{self, File};
use std::process::Command;

#[test]
fn a_full_disk_fails_the_close_of_the_file_whose_chunks_could_not_be_stored() {
    let test = "a_full_disk_fails_the_close_of_the_file_whose_chunks_could_not_be_stored";
    let Some(disk) = on_a_small_disk(test, "close", 31) else { return };
    let SmallDiskVolume { small, _tmp: tmp, point, repo, volume, kept } = disk;
    let ballast = small.mnt.join("ballast");
    fill_outside(&ballast);

    // 4 MiB of new data, its chunks cut at the close (below the size cut during the writes);
    // cp reports an error of close(2) and exits 1.
    let written = data(4 << 20, 32);
    let source = tmp.path().join("source");
    fs::write(&source, &written).unwrap();
    let copied = Command::new("cp").arg(&source).arg(volume.path("big")).output().unwrap();
    let stderr = String::from_utf8_lossy(&copied.stderr);
    assert!(!copied.status.success(), "the close of a file that could not be stored succeeded");
    assert!(stderr.contains("No space left"), "cp: {stderr}");

    // The disk still full: the fsync cannot commit it either.
    let failed = File::open(volume.path("big")).unwrap().sync_all();
    let error = failed.expect_err("a commit into a full disk succeeded");
    assert_eq!(error.raw_os_error(), Some(28), "not ENOSPC: {error}");

    // Space again: the bytes the close could not store were kept, and the fsync commits them.
    fs::remove_file(&ballast).unwrap();
    File::open(volume.path("big")).unwrap().sync_all().expect("the fsync after freeing space");
    volume.unmount_ok();
    assert_checks_clean(&repo);
    let volume = Volume::start(&repo, "close", &point, &["--commit-interval", "3600"]);
    assert!(fs::read(volume.path("big")).unwrap() == written, "the file is not whole");
    assert!(fs::read(volume.path("kept")).unwrap() == kept);
    volume.unmount_ok();
}
