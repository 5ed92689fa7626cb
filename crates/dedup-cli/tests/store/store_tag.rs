//! `dedup store tag`: tags added, removed and set, each changed snapshot written anew with its
//! original recorded and the old one removed only after; an interruption between the two leaves
//! both (never neither).

use crate::common;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use common::store::*;
use common::*;

fn snapshots(repo: &Path) -> Vec<serde_json::Value> {
    let listed: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    listed.as_array().unwrap().clone()
}

fn tags(snapshot: &serde_json::Value) -> Vec<String> {
    let all = snapshot["tags"].as_array().unwrap();
    all.iter().map(|t| t.as_str().unwrap().to_string()).collect()
}

#[test]
fn tags_are_added_removed_and_set_and_the_original_is_recorded() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "f", b"content");
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), OsStr::new("--tag=daily"), src.as_os_str()]);
    store_ok(&repo, &[OsStr::new("backup"), OsStr::new("--host=other"), src.as_os_str()]);
    let before = snapshots(&repo);
    let original = before[0]["id"].as_str().unwrap().to_string();

    let said = store_ok(&repo, &["tag", "--add", "keep,audit", "--remove", "daily", &original]);
    assert!(said.contains("tags changed on 1 snapshot"), "{said}");
    let after = snapshots(&repo);
    assert_eq!(after.len(), 2);
    let changed = after.iter().find(|s| s["original"] == original.as_str()).unwrap();
    assert_ne!(changed["id"], original.as_str(), "a new snapshot file");
    assert_eq!(tags(changed), ["keep", "audit"]);
    for field in ["time", "tree", "host", "paths", "bytes_total"] {
        assert_eq!(changed[field], before[0][field], "{field} kept");
    }
    let other = after.iter().find(|s| s["host"] == "other").unwrap();
    assert!(other.get("original").is_none(), "the other snapshot was left alone: {other}");

    // Again: the original stays the first one; filters choose; --set replaces.
    store_ok(&repo, &["tag", "--set", "x", "--host", changed["host"].as_str().unwrap()]);
    let again = snapshots(&repo);
    let retagged = again.iter().find(|s| s["original"] == original.as_str()).unwrap();
    assert_eq!(tags(retagged), ["x"]);
    let said = store_ok(&repo, &["tag", "--add", "x", "--tag", "x"]);
    assert!(said.contains("0 snapshot(s); 1 already as asked"), "{said}");
    store_ok(&repo, &["tag", "--set", ""]);
    assert!(snapshots(&repo).iter().all(|s| tags(s).is_empty()));
    store(&repo, &["tag", "latest"]).assert_code(2);

    // The retagged snapshot restores and checks as its original did.
    store_ok(&repo, &["check", "--read-data"]);
    let now = snapshots(&repo);
    let retagged = now.iter().find(|s| s["original"] == original.as_str()).unwrap();
    let target = dir.path().join("out");
    let spec = format!("{}:{}", &retagged["id"].as_str().unwrap()[..8], src.display());
    store_ok(&repo, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_eq!(std::fs::read(target.join("f")).unwrap(), b"content");
}

/// Crash safety: the old snapshot file is removed only after the new one is written. A
/// snapshot file that cannot be removed (immutable, as a crash before the removal leaves it)
/// leaves both, and the command says so with exit 1.
#[test]
fn an_interrupted_tag_leaves_the_old_snapshot_beside_the_new() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "f", b"content");
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    let old = repo.join(&repo_names(&repo, "snapshots")[0]);
    let locked = Command::new("chattr").arg("+i").arg(&old).status().is_ok_and(|s| s.success());
    if !require(
        locked,
        "an_interrupted_tag_leaves_the_old_snapshot_beside_the_new",
        "chattr +i (root on a file system with immutable files) is needed",
    ) {
        return;
    }
    let out = store(&repo, &["tag", "--add", "new"]);
    Command::new("chattr").arg("-i").arg(&old).status().unwrap();
    assert_eq!(out.code(), 1, "{}", out.dump());
    let both = snapshots(&repo);
    assert_eq!(both.len(), 2, "{both:?}");
    let new = both.iter().find(|s| s.get("original").is_some()).unwrap();
    assert_eq!(tags(new), ["new"]);
    // Run again once the old one can go: the copy already there is the old one's retagging.
    store_ok(&repo, &["tag", "--add", "new"]);
    let done = snapshots(&repo);
    assert_eq!(done.len(), 1, "the replacement written before is taken, not a second: {done:?}");
    assert!(done.iter().all(|s| tags(s) == ["new"]), "{done:?}");
}
