//! A write error reaches the `close` of the file it belongs to: a close waits for its own
//! file's chunks (not for every chunk the sealing threads hold) and reports what storing them
//! met; while the disk stays full the next `fsync` fails too, and once space is back it commits
//! the file whole. `dedup sync` and `dedup store restore` into the volume hear that error before
//! their copy takes its name (the volume is a file system that reports write errors at close,
//! as NFS and SMB do).

use crate::volume_helpers::{
    assert_checks_clean, data, fill_outside, on_a_small_disk, SmallDiskVolume, Volume,
};

use crate::common;

use std::ffi::{OsStr, OsString};
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

/// `dedup sync` dropped each copy without looking at what `close` said: into a file system that
/// reports a failed write-back at close (NFS, SMB, FUSE; here the volume on a full disk) it
/// renamed copies whose bytes had not landed over the good files and exited 0. Each temporary
/// is now flushed before it takes its name (and before `--backup` renames the old file away):
/// the run fails naming the file, and the old copy stays where it was. The same holds for `store restore` (the same temporary files of dedup-fs).
#[test]
fn sync_and_restore_into_a_volume_on_a_full_disk_fail_and_keep_the_old_files() {
    let test = "sync_and_restore_into_a_volume_on_a_full_disk_fail_and_keep_the_old_files";
    let Some(disk) = on_a_small_disk(test, "mirror", 41) else { return };
    let SmallDiskVolume { small, _tmp: tmp, point, repo, volume, kept } = disk;

    // The new `kept` and a new file, of new data; the old `kept` is in the volume, committed.
    let src = tmp.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::write(src.join("kept"), data(4 << 20, 42)).unwrap();
    fs::write(src.join("new"), data(3 << 20, 43)).unwrap();
    let backup_repo = tmp.path().join("backups");
    common::store::init_repo(&backup_repo);
    common::store::store_ok(&backup_repo, &[OsStr::new("backup"), src.as_os_str()]);
    let ballast = small.mnt.join("ballast");
    fill_outside(&ballast);

    // With --backup the old file is renamed away only for a copy that landed.
    for backup in [true, false] {
        let mut sync = Command::new(common::BIN);
        sync.arg("sync");
        if backup {
            sync.arg("--backup");
        }
        let out = sync.arg(&src).arg(&point).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "a sync whose copies did not land: {stderr}");
        // Named as the destination's failure, not the source's.
        let named = format!("{}: was not written: No space left", volume.path("kept").display());
        assert!(stderr.contains(&named), "{stderr}");
        let now = fs::read(volume.path("kept"));
        assert!(now.is_ok_and(|now| now == kept), "a copy that failed replaced the file");
        assert!(!volume.path("kept~").exists(), "the old file was backed up for a failed copy");
    }

    let snapshot_path = OsString::from(format!("latest:{}", src.display()));
    let args = [
        OsStr::new("restore"),
        &snapshot_path,
        OsStr::new("--overwrite"),
        OsStr::new("always"),
        OsStr::new("--target"),
        point.as_os_str(),
    ];
    let out = common::store::store(&backup_repo, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.code, Some(0), "a restore whose files did not land: {stderr}");
    assert!(stderr.contains("No space left"), "{stderr}");
    assert!(fs::read(volume.path("kept")).unwrap() == kept, "a restore that failed replaced it");

    fs::remove_file(&ballast).unwrap();
    File::open(volume.path("kept")).unwrap().sync_all().expect("the fsync after freeing space");
    volume.unmount_ok();
    assert_checks_clean(&repo);
}
