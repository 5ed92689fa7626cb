//! A backup of an unmounted disk: its mount point is an empty directory, and a snapshot of it
//! would be an empty one that `latest` and `forget --keep-last` then take for the newest state
//! of the data. Where the parent snapshot holds entries, the backup is refused (exit 2, no
//! snapshot) unless `--allow-empty-source` says it is meant.

use crate::common;

use std::ffi::OsStr;
use std::fs;

use common::store::*;
use common::*;

#[test]
fn an_empty_directory_where_the_last_snapshot_held_files_is_not_backed_up_unless_meant() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("disk"), dir.path().join("repo"));
    let other = dir.path().join("other");
    fs::create_dir(&src).unwrap();
    fs::create_dir(&other).unwrap();
    fs::write(other.join("kept"), b"kept").unwrap();
    init_repo(&repo);
    // The first backup of an empty directory has nothing to compare with: it is made.
    store(&repo, &[OsStr::new("backup"), src.as_os_str()]).assert_code(0);
    write(&src, "photos/a.jpg", &pattern(10_000, 1));
    write(&src, "notes.txt", b"notes");
    store(&repo, &[OsStr::new("backup"), src.as_os_str()]).assert_code(0);
    store(&repo, &[OsStr::new("backup"), src.as_os_str(), other.as_os_str()]).assert_code(0);
    let before = repo_names(&repo, "snapshots");

    // The disk is gone: its mount point is empty.
    fs::remove_dir_all(&src).unwrap();
    fs::create_dir(&src).unwrap();
    for args in [vec![src.as_os_str()], vec![src.as_os_str(), other.as_os_str()]] {
        let mut full = vec![OsStr::new("backup")];
        full.extend(args);
        let refused = store(&repo, &full);
        refused.assert_code(2);
        let said = refused.dump();
        assert!(said.contains(&format!("{}: is empty", src.display())), "{said}");
        assert!(said.contains("2 entries") && said.contains("not mounted"), "{said}");
        assert!(!said.contains("panicked"), "{said}");
        assert_eq!(repo_names(&repo, "snapshots"), before, "a refused backup wrote a snapshot");
    }
    let restored = dir.path().join("restored");
    let spec = format!("latest:{}", src.display());
    store(
        &repo,
        &[OsStr::new("restore"), spec.as_ref(), "--target".as_ref(), restored.as_os_str()],
    )
    .assert_code(0);
    assert_eq!(fs::read(restored.join("notes.txt")).unwrap(), b"notes");

    // Meant: the empty directory is backed up.
    let meant = [OsStr::new("backup"), "--allow-empty-source".as_ref(), src.as_os_str()];
    store(&repo, &meant).assert_code(0);
    assert_eq!(repo_names(&repo, "snapshots").len(), before.len() + 1);
}

#[test]
fn an_unmounted_disk_below_the_backed_up_path_is_not_backed_up_as_empty_unless_meant() {
    let test = "an_unmounted_disk_below_the_backed_up_path_is_not_backed_up_as_empty_unless_meant";
    if !require(is_root(), test, "needs root for a private mount namespace") {
        return;
    }
    let dir = tmp();
    let (src, repo) = (dir.path().join("root"), dir.path().join("repo"));
    let home = src.join("home");
    fs::create_dir_all(&home).unwrap();
    write(&src, "etc/hosts", b"hosts");
    let fstab = dir.path().join("fstab");
    fs::write(&fstab, format!("LABEL=home {} ext4 defaults 0 2\n", home.display())).unwrap();
    init_repo(&repo);
    let backup = |disk: Option<&std::path::Path>, extra: &[&str]| {
        let mut c = with_fstab(&fstab, disk);
        c.arg(BIN).args(["store", "-r"]).arg(&repo).env("DEDUP_PASSWORD", PASSWORD);
        run(c.arg("backup").args(extra).arg(&src))
    };
    // The disk mounted: its files are backed up.
    backup(Some(&home), &[]).assert_code(0);
    let before = repo_names(&repo, "snapshots");

    // The disk did not mount: its mount point below SRC is empty.
    let refused = backup(None, &[]);
    refused.assert_code(2);
    let said = refused.dump();
    assert!(said.contains(&format!("{}: is empty", home.display())), "{said}");
    assert!(said.contains("1 entries") && said.contains("not mounted"), "{said}");
    assert_eq!(repo_names(&repo, "snapshots"), before, "a refused backup wrote a snapshot");

    // Meant: backed up as it stands.
    backup(None, &["--allow-empty-source"]).assert_code(0);
    assert_eq!(repo_names(&repo, "snapshots").len(), before.len() + 1);
}
