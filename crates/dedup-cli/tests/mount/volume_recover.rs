//! A volume recovers from a failed commit: after the repository's disk was full (the packs of
//! a commit could not be written), freeing space lets the next `fsync` commit, and that commit
//! is whole: the chunks of the failed packs are stored again rather than named while missing,
//! and a file deleted before space came back is not committed.

use crate::volume_helpers::{
    assert_checks_clean, data, fill_outside, on_a_small_disk, SmallDiskVolume, Volume,
};

use std::fs::{self, File};
use std::io::Write;

#[test]
fn after_a_full_disk_the_next_fsync_commits_whole_once_space_is_freed() {
    let test = "after_a_full_disk_the_next_fsync_commits_whole_once_space_is_freed";
    let Some(disk) = on_a_small_disk(test, "back", 21) else { return };
    let SmallDiskVolume { small, _tmp, point, repo, volume, kept } = disk;

    // Written and closed (its chunks go to the session's open packs), then the disk fills
    // beneath the repository: the commit of the fsync cannot write the packs.
    let pending = data(6 << 20, 22);
    let mut file = File::create(volume.path("pending")).unwrap();
    file.write_all(&pending).unwrap();
    drop(file);
    let ballast = small.mnt.join("ballast");
    fill_outside(&ballast);
    let failed = File::open(volume.path("pending")).unwrap().sync_all();
    let error = failed.expect_err("a commit into a full disk succeeded");
    assert_eq!(error.raw_os_error(), Some(28), "not ENOSPC: {error}");

    // Space again: the next fsync commits, the chunks of the failed packs stored again.
    fs::remove_file(&ballast).unwrap();
    File::open(volume.path("pending")).unwrap().sync_all().expect("the fsync after freeing space");
    assert!(fs::read(volume.path("pending")).unwrap() == pending);

    // Full again: a file written and closed cannot be committed; deleted before space comes
    // back, it is not committed later, and the volume commits again.
    fill_outside(&ballast);
    let mut file = File::create(volume.path("gone")).unwrap();
    let _ = file.write_all(&data(4 << 20, 24));
    assert!(file.sync_all().is_err(), "4 MiB of new data committed into a full disk");
    drop(file);
    fs::remove_file(volume.path("gone")).unwrap();
    fs::remove_file(&ballast).unwrap();
    let after = data(1 << 20, 23);
    let mut file = File::create(volume.path("after")).unwrap();
    file.write_all(&after).unwrap();
    let synced = file.sync_all();
    synced.unwrap_or_else(|e| panic!("the fsync after the second full disk: {e}"));
    drop(file);
    volume.unmount_ok();
    assert_checks_clean(&repo);

    let volume = Volume::start(&repo, "back", &point, &["--commit-interval", "3600"]);
    assert!(fs::read(volume.path("kept")).unwrap() == kept);
    assert!(fs::read(volume.path("pending")).unwrap() == pending);
    assert!(fs::read(volume.path("after")).unwrap() == after);
    assert!(!volume.path("gone").exists());
    volume.unmount_ok();
    assert_checks_clean(&repo);
}
