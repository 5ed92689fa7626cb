//! A volume in a repository on object storage (s3s-fs on 127.0.0.1): a tree copied in with
//! `cp -a` restores byte for byte from its commit; what `fsync` acknowledged survives `kill -9`
//! of the mount and what was not committed is gone; the repository checks clean.

use crate::common;
use crate::common::s3server::S3Server;
use crate::volume_helpers::{assert_checks_clean, commits, data, fuse_available, Volume};

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::process::Command;

use common::store::{assert_restores, init_repo, look};

#[test]
fn a_volume_on_object_storage_round_trips_and_survives_kill_9() {
    let test = "a_volume_on_object_storage_round_trips_and_survives_kill_9";
    if !fuse_available(test) {
        return;
    }
    let Some(server) = S3Server::start(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (src, point) = (tmp.path().join("src"), tmp.path().join("mnt"));
    let repo = server.repo("volume");
    fs::create_dir(&point).unwrap();
    fs::create_dir_all(src.join("dir")).unwrap();
    fs::write(src.join("dir/several-chunks.bin"), data(700_000, 11)).unwrap();
    fs::write(src.join("small"), b"on object storage").unwrap();
    std::os::unix::fs::symlink("small", src.join("link")).unwrap();
    init_repo(&repo);

    let volume = Volume::start(&repo, "remote", &point, &["--commit-interval", "3600"]);
    let copied = Command::new("cp").arg("-a").arg(src.join(".")).arg(&point).status().unwrap();
    assert!(copied.success());
    let expected = look(&src);
    volume.unmount_ok();
    assert_restores(&repo, "latest", Path::new("/remote"), &tmp.path().join("restored"), &expected);

    let volume = Volume::start(&repo, "remote", &point, &["--commit-interval", "3600"]);
    let synced = data(400_000, 12);
    let mut file = File::create(volume.path("synced")).unwrap();
    file.write_all(&synced).unwrap();
    file.sync_all().unwrap();
    drop(file);
    fs::write(volume.path("unsynced"), data(300_000, 13)).unwrap();
    volume.kill9();
    let volume = Volume::start(&repo, "remote", &point, &["--commit-interval", "3600"]);
    assert!(fs::read(volume.path("synced")).unwrap() == synced);
    assert!(!volume.path("unsynced").exists());
    volume.unmount_ok();
    assert!(commits(&repo, "remote").len() >= 3);
    assert_checks_clean(&repo);
}
