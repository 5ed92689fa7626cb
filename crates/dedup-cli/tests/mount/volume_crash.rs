//! A volume's durability: what `fsync` acknowledged survives `kill -9` of the mount, what was
//! not committed is gone whole (never half-applied), a killed mount does not lock its volume
//! out, commits interrupted at any point leave a repository that checks clean; a full disk
//! fails the writes with ENOSPC and the volume mounts again and checks clean.

use crate::volume_helpers::{
    assert_checks_clean, commits, data, fuse_available, on_a_small_disk, volume_place,
    SmallDiskVolume, Volume,
};

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn what_fsync_acknowledged_survives_kill_9_and_the_rest_is_gone_whole() {
    let test = "what_fsync_acknowledged_survives_kill_9_and_the_rest_is_gone_whole";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "db", &point, &["--commit-interval", "3600"]);
    let synced = data(3 << 20, 1);
    let mut file = File::create(volume.path("synced")).unwrap();
    file.write_all(&synced).unwrap();
    file.sync_all().unwrap();
    // After the fsync: an overwrite in the middle, an append and a new file, none synced.
    file.write_all_at(&data(100_000, 2), 1 << 20).unwrap();
    file.write_all_at(b"appended", synced.len() as u64).unwrap();
    drop(file);
    fs::write(volume.path("later"), data(1 << 20, 3)).unwrap();
    fs::create_dir(volume.path("later-dir")).unwrap();
    volume.kill9();

    // The killed mount's lock is stale: the volume mounts again at once.
    let volume = Volume::start(&repo, "db", &point, &["--commit-interval", "3600"]);
    assert!(fs::read(volume.path("synced")).unwrap() == synced, "the fsynced content changed");
    assert!(!volume.path("later").exists(), "a file never committed survived");
    assert!(!volume.path("later-dir").exists(), "a directory never committed survived");
    volume.unmount_ok();
    assert_checks_clean(&repo);
}

#[test]
fn kill_9_at_several_points_of_commits_leaves_whole_files_and_a_clean_repository() {
    let test = "kill_9_at_several_points_of_commits_leaves_whole_files_and_a_clean_repository";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let mut next = 0i64;
    let mut must_exist = Vec::new();
    // Kills at different moments of a writer that commits every second and fsyncs now and then:
    // some fall inside a commit (cutting, packing, indexing or writing the snapshot).
    for (round, delay_ms) in [350u64, 1100, 1900, 2600].into_iter().enumerate() {
        let volume = Volume::start(&repo, "busy", &point, &["--commit-interval", "1"]);
        let stop = Arc::new(AtomicBool::new(false));
        let synced_up_to = Arc::new(AtomicI64::new(-1));
        let writer = {
            let (stop, synced_up_to, dir) = (stop.clone(), synced_up_to.clone(), point.clone());
            let first = next;
            std::thread::spawn(move || {
                let mut n = first;
                while !stop.load(Ordering::SeqCst) {
                    // Written under a temporary name and renamed: each name is whole or absent.
                    let content = data(50_000 + (n as usize % 7) * 40_000, n as u64);
                    let temp = dir.join(format!(".tmp{n}"));
                    let Ok(mut f) = File::create(&temp) else { break };
                    if f.write_all(&content).is_err() {
                        break;
                    }
                    let sync = n % 5 == 0;
                    if sync && f.sync_all().is_err() {
                        break;
                    }
                    drop(f);
                    if fs::rename(&temp, dir.join(format!("f{n}"))).is_err() {
                        break;
                    }
                    if sync {
                        // The fsync commits every file renamed before it.
                        synced_up_to.store(n - 1, Ordering::SeqCst);
                    }
                    n += 1;
                }
                n
            })
        };
        std::thread::sleep(Duration::from_millis(delay_ms));
        let first = next;
        volume.kill9_then(|| {
            stop.store(true, Ordering::SeqCst);
            next = writer.join().unwrap() + 1;
        });
        must_exist.extend(first..=synced_up_to.load(Ordering::SeqCst));

        let volume = Volume::start(&repo, "busy", &point, &["--commit-interval", "3600"]);
        for entry in fs::read_dir(&point).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let Some(n) = name.strip_prefix('f') else { continue };
            let n: i64 = n.parse().unwrap();
            let expected = data(50_000 + (n as usize % 7) * 40_000, n as u64);
            assert!(
                fs::read(point.join(&name)).unwrap() == expected,
                "round {round}: {name} is not whole"
            );
        }
        for n in &must_exist {
            assert!(point.join(format!("f{n}")).exists(), "round {round}: fsynced f{n} is lost");
        }
        volume.unmount_ok();
    }
    assert!(!must_exist.is_empty(), "no fsync returned before a kill: nothing was tested");
    assert!(commits(&repo, "busy").len() >= 4);
    assert_checks_clean(&repo);
}

#[test]
fn a_full_disk_fails_writes_with_enospc_and_the_volume_mounts_again_clean() {
    let test = "a_full_disk_fails_writes_with_enospc_and_the_volume_mounts_again_clean";
    let Some(disk) = on_a_small_disk(test, "full", 9) else { return };
    let SmallDiskVolume { small: _small, _tmp, point, repo, volume, kept } = disk;
    // 96 MiB of new data into a 64 MiB file system: a write, the close or the fsync fails.
    let error = fill(&volume.path("big"), 96);
    assert_eq!(error.raw_os_error(), Some(28), "not ENOSPC: {error}");
    let _ = volume.unmount();
    // The unmount could not commit the big file; the repository is as the last commit left it.
    let volume = Volume::start(&repo, "full", &point, &["--commit-interval", "3600"]);
    assert!(fs::read(volume.path("kept")).unwrap() == kept);
    volume.unmount_ok();
    assert_checks_clean(&repo);
    assert_eq!(fs::read_dir(repo.join("writers")).unwrap().count(), 0);
}

/// Writes `mib` MiB of new data to `path` and syncs it; the first error met.
fn fill(path: &Path, mib: u64) -> std::io::Error {
    let mut file = OpenOptions::new().create(true).write(true).truncate(true).open(path).unwrap();
    for n in 0..mib {
        if let Err(err) = file.write_all(&data(1 << 20, 1000 + n)) {
            return err;
        }
    }
    match file.sync_all() {
        Err(err) => err,
        Ok(()) => panic!("{mib} MiB fitted in a 64 MiB file system"),
    }
}

/// `sync MOUNTPOINT` (an fsync of the root directory) commits: what it covered survives
/// `kill -9`. `sync -f` (`syncfs`) does not reach a FUSE mount (Linux sends FUSE_SYNCFS to
/// virtiofs alone), so the help must not promise that it commits: it said "at fsync/syncfs",
/// and a user who ran `sync -f` before a crash lost what the help called committed.
#[test]
fn sync_of_the_mount_point_commits_and_the_help_promises_no_syncfs() {
    let test = "sync_of_the_mount_point_commits_and_the_help_promises_no_syncfs";
    let help = std::process::Command::new(crate::common::BIN)
        .args(["store", "mount", "--help"])
        .output()
        .unwrap();
    let help =
        String::from_utf8_lossy(&help.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!help.contains("syncfs"), "the help promises a commit at syncfs:\n{help}");
    assert!(
        help.contains("`sync MOUNTPOINT`") && help.contains("`sync -f` alone do not commit"),
        "the help does not say which sync commits:\n{help}"
    );
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "v", &point, &["--commit-interval", "3600"]);
    let content = data(1 << 20, 7);
    fs::write(volume.path("kept"), &content).unwrap();
    fs::create_dir(volume.path("dir")).unwrap();
    fs::write(volume.path("dir/small"), b"small").unwrap();
    let status = std::process::Command::new("sync").arg(&point).status().unwrap();
    assert!(status.success(), "sync MOUNTPOINT failed: {status}");
    volume.kill9();

    let volume = Volume::start(&repo, "v", &point, &["--commit-interval", "3600"]);
    assert!(fs::read(volume.path("kept")).unwrap() == content, "`sync MOUNTPOINT` did not commit");
    assert_eq!(fs::read(volume.path("dir/small")).unwrap(), b"small");
    volume.unmount_ok();
    assert_checks_clean(&repo);
}

/// A mount killed with `kill -9` whose parent has not reaped it yet (a supervisor that kills
/// and restarts it) is a zombie: its pid still takes signals, and its claim held the volume
/// ("already mounted writable by process …") until the parent waited. It runs no more, so the
/// volume mounts again at once, with what was committed.
#[test]
fn a_killed_mount_not_yet_reaped_does_not_lock_its_volume_out() {
    let test = "a_killed_mount_not_yet_reaped_does_not_lock_its_volume_out";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "v", &point, &["--commit-interval", "3600"]);
    let content = data(200_000, 3);
    let mut file = File::create(volume.path("kept")).unwrap();
    file.write_all(&content).unwrap();
    file.sync_all().unwrap();
    drop(file);
    let mut zombie = volume.kill9_unreaped();

    let again = Volume::try_start(&repo, "v", &point, &["--commit-interval", "3600"]);
    let reaped = zombie.wait().unwrap();
    assert!(!reaped.success());
    let volume = match again {
        Ok(volume) => volume,
        Err((status, stderr)) => {
            panic!("the volume stayed locked by the dead mount: {status}\n{stderr}")
        }
    };
    assert!(fs::read(volume.path("kept")).unwrap() == content, "the fsynced file changed");
    volume.unmount_ok();
    assert_checks_clean(&repo);
}
