//! `dedup store` when the repository cannot serve: missing, wrong password, damaged config, read
//! only (permissions and a read-only mount), full disk, and a second process at the same place.
//! Each is a clear message and exit status 2, and leaves the repository as it was: every earlier
//! snapshot still restores and `check` passes.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use common::act::{LoopFs, Tmpfs};
use common::store::*;
use common::*;

/// A small tree of a few files over several chunks.
fn small_tree(root: &Path) {
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("a"), pattern(300_000, 1)).unwrap();
    fs::write(root.join("sub/b"), pattern(70_000, 2)).unwrap();
    fs::write(root.join("sub/empty"), b"").unwrap();
}

/// Asserts `out` failed with status 2 and a message holding every one of `fragments`.
#[track_caller]
fn assert_fails(out: &Out, fragments: &[&str]) {
    out.assert_code(2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for fragment in fragments {
        assert!(stderr.contains(fragment), "message lacks {fragment:?}\n{}", out.dump());
    }
    assert!(!stderr.contains("panicked"), "{}", out.dump());
}

#[test]
fn a_missing_repository_a_wrong_password_and_a_damaged_config_change_nothing() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    small_tree(&src);
    let nowhere = dir.path().join("nowhere");
    assert_fails(&store(&nowhere, &[OsStr::new("backup"), src.as_os_str()]), &["no repository"]);
    assert!(!nowhere.exists(), "a backup to a missing repository created it");

    init_repo(&repo);
    backup_json(&repo, &src);
    let before = repo_files(&repo);
    let wrong = run(store_cmd(&repo).env("DEDUP_PASSWORD", "wrong").arg("backup").arg(&src));
    assert_fails(&wrong, &["wrong password"]);
    let wrong = run(store_cmd(&repo).env("DEDUP_PASSWORD", "wrong").arg("snapshots"));
    assert_fails(&wrong, &["wrong password"]);
    assert!(repo_files(&repo) == before, "a wrong password changed the repository");

    let config = repo.join("config");
    let good = fs::read(&config).unwrap();
    for damage in ["flipped", "truncated", "deleted"] {
        match damage {
            "flipped" => fs::write(&config, flip(&good, good.len() / 2)).unwrap(),
            "truncated" => fs::write(&config, &good[..5]).unwrap(),
            _ => fs::remove_file(&config).unwrap(),
        }
        let damaged = repo_files(&repo);
        let expected: &[&str] = match damage {
            // The key files show that a repository was there: its config is named as lost.
            "deleted" => &["config: missing", "key file"],
            _ => &["config", "damaged", repo.to_str().unwrap()],
        };
        for args in [vec![OsStr::new("backup"), src.as_os_str()], vec![OsStr::new("snapshots")]] {
            assert_fails(&store(&repo, &args), expected);
        }
        assert!(repo_files(&repo) == damaged, "{damage} config: the repository changed");
        fs::write(&config, &good).unwrap();
    }
    let keys = repo.join("keys");
    fs::rename(&keys, dir.path().join("keys-away")).unwrap();
    assert_fails(&store(&repo, &["snapshots"]), &["keys: no key file"]);
    fs::rename(dir.path().join("keys-away"), &keys).unwrap();
    store_ok(&repo, &["check"]);
    assert_restores(&repo, "latest", &src, &dir.path().join("restored"), &look(&src));
}

/// The directory `path` and its ancestors up to the temporary root opened for nobody to read.
fn open_to_all(path: &Path, up_to: &Path) {
    let mut dir = Some(path);
    while let Some(d) = dir.filter(|d| d.starts_with(up_to)) {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
        dir = d.parent();
    }
}

#[test]
fn a_repository_nobody_may_write_refuses_a_backup_and_serves_every_read() {
    let test = "a_repository_nobody_may_write_refuses_a_backup_and_serves_every_read";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    small_tree(&src);
    init_repo(&repo);
    backup_json(&repo, &src);
    // The repository's files are private to their owner (0600 / 0700): opened to all to read.
    assert!(std::process::Command::new("chmod")
        .arg("-R")
        .arg("a+rX")
        .arg(&repo)
        .status()
        .unwrap()
        .success());
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    open_to_all(dir.path(), dir.path());
    for p in [&src, &src.join("sub")] {
        open_to_all(p, dir.path());
    }
    let before = repo_files(&repo);

    let failed = store_as_nobody(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    assert_fails(&failed, &["backup into", "Permission denied", "no snapshot written"]);
    assert!(repo_files(&repo) == before, "a refused backup changed the repository");

    let listed = store_as_nobody(&repo, &["snapshots"]);
    listed.assert_code(0);
    store_as_nobody(&repo, &["ls", "latest"]).assert_code(0);
    store_as_nobody(&repo, &["check", "--read-data"]).assert_code(0);
    store_as_nobody(&repo, &["stats"]).assert_code(0);
    let file = format!("{}/sub/b", src.display());
    let dumped = store_as_nobody(&repo, &["dump", "latest", &file]);
    assert!(dumped.code == Some(0) && dumped.stdout == pattern(70_000, 2), "{}", dumped.dump());
    let spec = format!("latest:{}", src.display());
    let target = out.join("restored");
    store_as_nobody(
        &repo,
        &[OsStr::new("restore"), OsStr::new(&spec), "--target".as_ref(), target.as_os_str()],
    )
    .assert_code(0);
    assert_eq!(fs::read(target.join("a")).unwrap(), pattern(300_000, 1));
    assert!(repo_files(&repo) == before, "reading changed the repository");
}

#[test]
fn a_repository_on_a_read_only_mount_refuses_a_backup_and_serves_every_read() {
    let test = "a_repository_on_a_read_only_mount_refuses_a_backup_and_serves_every_read";
    let Some(mount) = Tmpfs::new(test) else { return };
    let dir = tmp();
    let src = dir.path().join("src");
    small_tree(&src);
    let repo = mount.mnt.join("repo");
    init_repo(&repo);
    backup_json(&repo, &src);
    mount.remount_ro();
    let before = repo_files(&repo);
    let failed = store(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    assert_fails(&failed, &["backup into", "Read-only file system"]);
    store_ok(&repo, &["check", "--read-data"]);
    assert_restores(&repo, "latest", &src, &dir.path().join("restored"), &look(&src));
    assert!(repo_files(&repo) == before);
}

#[test]
fn a_full_disk_fails_the_backup_clearly_and_damages_nothing() {
    let test = "a_full_disk_fails_the_backup_clearly_and_damages_nothing";
    let Some(disk) = LoopFs::with_size("ext4", test, 64 << 20) else { return };
    let dir = tmp();
    let (src, big) = (dir.path().join("src"), dir.path().join("big"));
    small_tree(&src);
    fs::create_dir(&big).unwrap();
    // More than the file system holds, in incompressible files.
    for i in 0..10 {
        fs::write(big.join(format!("part-{i}")), pattern(8 << 20, 100 + i)).unwrap();
    }
    let repo = disk.mnt.join("repo");
    init_repo(&repo);
    backup_json(&repo, &src);
    let kept = |files: &std::collections::BTreeMap<String, Vec<u8>>| {
        files
            .iter()
            .filter(|(name, _)| !name.starts_with("data/"))
            .map(|(n, b)| (n.clone(), b.clone()))
            .collect::<Vec<_>>()
    };
    let before = kept(&repo_files(&repo));

    let failed = store(&repo, &[OsStr::new("backup"), big.as_os_str()]);
    assert_fails(&failed, &["backup into", "no snapshot written", "No space left on device"]);
    let after = repo_files(&repo);
    let after_kept = kept(&after);
    for (name, bytes) in &before {
        assert!(after_kept.contains(&(name.clone(), bytes.clone())), "{name} changed or went");
    }
    // What the failed backup may add besides packs: an index file for the packs it stored, or,
    // when even that does not fit, its marker left behind for the next backup to adopt them.
    for (name, _) in after_kept.iter().filter(|entry| !before.contains(entry)) {
        assert!(
            name.starts_with("index/") || name.starts_with("writers/"),
            "the failed backup wrote {name}"
        );
    }
    let leftovers: Vec<_> = after.keys().filter(|n| n.contains("/.")).collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let check = store(&repo, &["check"]);
    check.assert_code(0);
    for line in String::from_utf8_lossy(&check.stderr).lines() {
        assert!(line.contains("not in any index"), "check found more than garbage: {line}");
    }
    assert_restores(&repo, "latest", &src, &dir.path().join("restored"), &look(&src));
}

#[test]
fn two_inits_at_one_place_at_once_make_one_repository() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    // The default key cost keeps both processes between their existence check and their config
    // write long enough to race.
    let racers: Vec<_> = ["first", "second"]
        .into_iter()
        .map(|password| {
            std::process::Command::new(BIN)
                .args(["store", "init", "-r"])
                .arg(&repo)
                .env("DEDUP_PASSWORD", password)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = racers.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let codes: Vec<_> = outs.iter().map(|o| o.status.code()).collect();
    let winner = codes.iter().position(|c| *c == Some(0)).expect("no init succeeded");
    let loser = 1 - winner;
    assert_eq!(codes[loser], Some(2), "both inits claimed the repository: {codes:?}");
    let message = String::from_utf8_lossy(&outs[loser].stderr);
    assert!(message.contains("already exists"), "{message}");
    assert_eq!(repo_names(&repo, "keys").len(), 1, "a stray key slot is left");
    let password = ["first", "second"][winner];
    let opened = run(store_cmd(&repo).env("DEDUP_PASSWORD", password).arg("snapshots"));
    opened.assert_code(0);
}

#[test]
fn two_backups_into_one_repository_at_once_both_commit() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    let trees = [dir.path().join("one"), dir.path().join("two")];
    for (i, tree) in trees.iter().enumerate() {
        fs::create_dir(tree).unwrap();
        for j in 0..4u64 {
            fs::write(tree.join(format!("f{j}")), pattern(1 << 20, 10 * i as u64 + j)).unwrap();
        }
        // Shared content: both sessions may store it, neither may lose it.
        fs::write(tree.join("shared"), pattern(2 << 20, 99)).unwrap();
    }
    init_repo(&repo);
    let runs: Vec<_> = trees
        .iter()
        .map(|tree| {
            std::process::Command::new(BIN)
                .args(["store", "backup", "-r"])
                .arg(&repo)
                .arg(tree)
                .env("DEDUP_PASSWORD", PASSWORD)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in runs {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    store_ok(&repo, &["check", "--read-data"]);
    assert!(repo_names(&repo, "writers").is_empty(), "a finished backup left its marker");
    for (i, tree) in trees.iter().enumerate() {
        let target = dir.path().join(format!("restored-{i}"));
        assert_restores(&repo, &snapshot_of(&repo, tree), tree, &target, &look(tree));
    }
}
