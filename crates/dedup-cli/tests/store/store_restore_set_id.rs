//! Set-user-id and set-group-id bits come back only with the owner they were meant for: a
//! restore that cannot give a file its snapshot's owner (a user who is not root) leaves them
//! off, as `cp -p` does, so that a program meant to run as one user never runs as another.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};
use std::path::Path;

use common::store::*;
use common::*;

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_user_who_cannot_restore_the_owner_gets_no_set_id_bits() {
    let test = "a_user_who_cannot_restore_the_owner_gets_no_set_id_bits";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tmp();
    let (src, repo, out) =
        (dir.path().join("src"), dir.path().join("repo"), dir.path().join("out"));
    fs::create_dir(&src).unwrap();
    // Another user's set-id program, nobody's own one, and a shared directory.
    let others = src.join("others-tool");
    fs::write(&others, b"#!/bin/sh\n").unwrap();
    chown(&others, Some(1234), Some(1234)).unwrap();
    set_mode(&others, 0o6755);
    let own = src.join("own-tool");
    fs::write(&own, b"#!/bin/sh\n").unwrap();
    chown(&own, Some(65534), Some(65534)).unwrap();
    set_mode(&own, 0o6755);
    let shared = src.join("shared");
    fs::create_dir(&shared).unwrap();
    chown(&shared, Some(1234), Some(1234)).unwrap();
    set_mode(&shared, 0o2775);
    init_repo(&repo);
    backup_json(&repo, &src);
    let opened = std::process::Command::new("chmod").arg("-R").arg("a+rX").arg(&repo).status();
    assert!(opened.unwrap().success());
    fs::create_dir(&out).unwrap();
    chown(&out, Some(65534), Some(65534)).unwrap();
    set_mode(dir.path(), 0o755);
    set_mode(&src, 0o755);

    let target = out.join("restored");
    let spec = format!("latest:{}", src.display());
    let args = [OsStr::new("restore"), spec.as_ref(), "--target".as_ref(), target.as_os_str()];
    let restored = store_as_nobody(&repo, &args);
    restored.assert_code(0);
    restored.assert_message("warning", "others-tool: set-user-id/set-group-id bits not restored");
    let mode = |name: &str| fs::symlink_metadata(target.join(name)).unwrap().mode() & 0o7777;
    assert_eq!(mode("others-tool"), 0o755, "{}", restored.dump());
    assert_eq!(mode("own-tool"), 0o6755, "{}", restored.dump());
    assert_eq!(mode("shared"), 0o2775, "{}", restored.dump());

    // Root gives the owner back, and with it the bits.
    let as_root = dir.path().join("as-root");
    store(&repo, &[OsStr::new("restore"), spec.as_ref(), "--target".as_ref(), as_root.as_os_str()])
        .assert_code(0);
    let meta = fs::symlink_metadata(as_root.join("others-tool")).unwrap();
    assert_eq!((meta.mode() & 0o7777, meta.uid()), (0o6755, 1234));
}
