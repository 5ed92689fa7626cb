//! `check` and `repair` judge what the storage holds, not this client's cache of it: an index
//! file, a snapshot or a tree pack damaged on the S3 server after a command cached it must be
//! named by `check` (exit 1) and by `repair snapshots`, although the cached copy is whole.
//! Found by the s14 adversarial pass: `check` answered "no errors" from the cache, exit 0.

use crate::common;
use crate::common::s3server;

use std::path::{Path, PathBuf};

use common::store::*;
use s3server::S3Server;

/// Flips one bit of `file` at `at` (from the end when the file is shorter).
fn flip(file: &Path, at: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    let at = at.min(bytes.len() - 1);
    bytes[at] ^= 1;
    std::fs::write(file, bytes).unwrap();
}

/// The one object of `folder` the server holds for the repository in `dir`.
fn only_object(dir: &Path, folder: &str) -> PathBuf {
    let names: Vec<PathBuf> =
        std::fs::read_dir(dir.join(folder)).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(names.len(), 1, "{folder}: {names:?}");
    names.into_iter().next().unwrap()
}

/// The packs of the repository in `dir` that this client keeps tree copies of.
fn cached_tree_packs(dir: &Path) -> Vec<PathBuf> {
    let store = common::client_dir().join("cache/dedup/store");
    let mut found = Vec::new();
    for repo in std::fs::read_dir(store).unwrap() {
        let Ok(trees) = std::fs::read_dir(repo.unwrap().path().join("trees")) else { continue };
        for pack in trees {
            let name = pack.unwrap().file_name().into_string().unwrap();
            let on_server = dir.join("data").join(&name[..2]).join(&name);
            if on_server.is_file() {
                found.push(on_server);
            }
        }
    }
    found
}

/// A repository of one snapshot on `server`, with its index file, snapshot and tree packs in
/// this client's cache (an `ls` reads them all).
fn cached_repository(server: &S3Server, name: &str, work: &Path) -> PathBuf {
    let src = work.join(name);
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(src.join("a"), vec![3u8; 200_000]).unwrap();
    std::fs::write(src.join("sub/b"), b"below").unwrap();
    let repo = server.repo(name);
    init_repo(&repo);
    store_ok(&repo, &["backup", src.to_str().unwrap()]);
    store_ok(&repo, &["ls", "latest"]);
    store_ok(&repo, &["check"]);
    repo
}

#[test]
fn check_names_objects_damaged_on_the_server_after_they_were_cached() {
    let Some(server) = S3Server::start("check past the cache") else { return };
    let work = tempfile::tempdir().unwrap();

    let repo = cached_repository(&server, "index", work.path());
    let index = only_object(&server.dir("index"), "index");
    flip(&index, 60);
    let out = store(&repo, &["check"]);
    out.assert_code(1);
    let name = index.file_name().unwrap().to_str().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains(name), "{}", out.dump());

    let repo = cached_repository(&server, "snapshot", work.path());
    let snapshot = only_object(&server.dir("snapshot"), "snapshots");
    flip(&snapshot, 60);
    let out = store(&repo, &["check"]);
    out.assert_code(1);
    let name = snapshot.file_name().unwrap().to_str().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains(name), "{}", out.dump());

    let repo = cached_repository(&server, "tree", work.path());
    let packs = cached_tree_packs(&server.dir("tree"));
    assert!(!packs.is_empty(), "the ls cached the tree packs");
    for pack in &packs {
        flip(pack, 100);
    }
    let out = store(&repo, &["check"]);
    out.assert_code(1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("tree blob"), "{}", out.dump());
    // Repair judges the trees as check does: it writes a repaired copy of the snapshot.
    let out = store(&repo, &["repair", "snapshots"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("repaired copy"), "{}", out.dump());
}
