//! Append-only backups (issue 39): `dedup store` through credentials that may create and read
//! objects but neither delete nor overwrite them (an S3 proxy answering 403 AccessDenied, as a
//! bucket policy would). Backups, `snapshots`, `ls`, `restore` and `check` work and repeat;
//! a killed backup blocks nothing; `forget`, `prune` and `repair` stop before changing anything,
//! naming the refused deletion; a prune with full credentials then cleans up.

use crate::common;
use crate::common::append_only_proxy::AppendOnlyProxy;
use crate::common::s3server;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::act::contents;
use common::store::*;
use s3server::S3Server;

/// A tree of `files` files of incompressible bytes (`seed` varies them), `size` bytes each.
fn tree(root: &Path, seed: u64, files: usize, size: usize) {
    std::fs::create_dir_all(root.join("sub")).unwrap();
    for i in 0..files {
        let mut x = seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64) | 1;
        let bytes: Vec<u8> = (0..size)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let dir = if i % 2 == 0 { root.join("sub") } else { root.to_path_buf() };
        std::fs::write(dir.join(format!("f{i}")), bytes).unwrap();
    }
}

/// The objects the server holds for the repository under `folder`, by relative name.
fn objects(server: &S3Server, folder: &str) -> Vec<String> {
    let root = server.dir("repo");
    let mut out = Vec::new();
    let mut pending = vec![root.join(folder)];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path.strip_prefix(&root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// The snapshots listed through `repo`.
fn snapshot_count(repo: &Path) -> usize {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    list.as_array().unwrap().len()
}

/// Restores `latest` into a new directory under `dir` and compares it with `src`.
fn assert_latest_restores(repo: &Path, src: &Path, dir: &Path, name: &str) {
    let target = dir.join(name);
    let spec = format!("latest:{}", src.display());
    store_ok(repo, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_eq!(contents(&target), contents(src), "{spec} restores exactly");
}

/// `dedup store` through append-only credentials: the server, the proxy, the repository's
/// location through the proxy and directly.
struct Setup {
    server: S3Server,
    proxy: AppendOnlyProxy,
    through: PathBuf,
    direct: PathBuf,
}

fn setup(test: &str, proxy: fn(u16, &Path) -> AppendOnlyProxy) -> Option<Setup> {
    let server = S3Server::start(test)?;
    let proxy = proxy(server.port, &server.dir(""));
    let through = server.repo_at(proxy.port, "repo");
    let direct = server.repo("repo");
    Some(Setup { server, proxy, through, direct })
}

#[test]
fn backups_through_append_only_credentials_repeat_and_a_full_prune_cleans_up_after_them() {
    let Some(s) = setup("append-only backups", AppendOnlyProxy::start) else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 1, 6, 200_000);
    init_repo(&s.through);
    let path = src.to_str().unwrap();
    store_ok(&s.through, &["backup", path]);
    store_ok(&s.through, &["backup", path]);
    tree(&src.join("new"), 2, 3, 150_000);
    std::fs::remove_file(src.join("f1")).unwrap();
    store_ok(&s.through, &["backup", path]);
    let refused = s.proxy.refused();
    assert!(
        refused.iter().any(|r| r.starts_with("DELETE ") && r.contains("/writers/")),
        "the backups asked to withdraw their markers and were refused: {refused:?}"
    );
    assert!(!objects(&s.server, "writers").is_empty(), "the refused markers stay");

    // Every reading command works through the same credentials.
    assert_eq!(snapshot_count(&s.through), 3);
    let listing = store_ok(&s.through, &["ls", "latest"]);
    assert!(listing.contains("new"), "{listing}");
    assert_latest_restores(&s.through, &src, dir.path(), "restored");
    let later = src.join("new/sub/f0");
    let dumped = store(&s.through, &["dump", "latest", later.to_str().unwrap()]);
    dumped.assert_code(0);
    assert_eq!(dumped.stdout, std::fs::read(&later).unwrap());
    store_ok(&s.through, &["stats"]);
    store_ok(&s.through, &["check"]);

    // The commands that delete stop before changing anything, naming the refusal.
    let before: Vec<String> = ["snapshots", "index", "data", "deletions", "writers"]
        .iter()
        .flat_map(|folder| objects(&s.server, folder))
        .collect();
    for args in [
        &["forget", "--keep-last", "1"][..],
        &["forget", "--keep-last", "1", "--prune"],
        &["prune"],
        &["prune", "--max-unused", "0"],
        &["repair", "index"],
        &["repair", "snapshots", "--forget"],
    ] {
        let out = store(&s.through, args);
        assert_eq!(out.code, Some(2), "{args:?} fails\n{}", out.dump());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("refused to delete") && stderr.contains("append-only"),
            "{args:?} names the refused deletion\n{}",
            out.dump()
        );
        assert!(!stderr.contains("panicked"), "{}", out.dump());
        let after: Vec<String> = ["snapshots", "index", "data", "deletions", "writers"]
            .iter()
            .flat_map(|folder| objects(&s.server, folder))
            .collect();
        assert_eq!(after, before, "{args:?} through append-only credentials changed nothing");
    }
    assert_eq!(snapshot_count(&s.through), 3);

    // With full credentials the same prune goes through and collects the markers left behind.
    store_ok(&s.direct, &["forget", "--keep-last", "1", "--prune", "--max-unused", "0"]);
    assert_eq!(snapshot_count(&s.direct), 1);
    assert_eq!(objects(&s.server, "writers"), Vec::<String>::new(), "the stale markers went");
    assert_eq!(objects(&s.server, "deletions"), Vec::<String>::new());
    store_ok(&s.direct, &["check", "--read-data"]);
    assert_latest_restores(&s.direct, &src, dir.path(), "after-prune");
    // And append-only backups go on after it.
    std::fs::write(src.join("later"), b"written after the prune").unwrap();
    store_ok(&s.through, &["backup", path]);
    assert_latest_restores(&s.through, &src, dir.path(), "after-prune-backup");
}

#[test]
fn a_backup_killed_through_append_only_credentials_leaves_nothing_that_blocks_the_next() {
    let Some(s) = setup("append-only killed backup", AppendOnlyProxy::start) else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    // Enough 1 MiB packs that the kill comes after the first and before the last.
    tree(&src, 3, 24, 1 << 20);
    init_repo(&s.through);
    let mut child = spawn_store(&s.through, &["backup", "--quiet", src.to_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while objects(&s.server, "data").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let still_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(still_running, "the backup was killed after its first pack, not after its end");
    assert_eq!(snapshot_count(&s.direct), 0, "killed before its snapshot");
    assert!(!objects(&s.server, "writers").is_empty(), "the killed backup left its marker");

    // The next backup adopts what the killed one stored, though it cannot remove its marker.
    store_ok(&s.through, &["backup", src.to_str().unwrap()]);
    store_ok(&s.through, &["backup", src.to_str().unwrap()]);
    assert_eq!(snapshot_count(&s.through), 2);
    store_ok(&s.through, &["check"]);
    assert_latest_restores(&s.through, &src, dir.path(), "restored");

    store_ok(&s.direct, &["prune"]);
    assert_eq!(objects(&s.server, "writers"), Vec::<String>::new());
    store_ok(&s.direct, &["check", "--read-data"]);
    assert_latest_restores(&s.direct, &src, dir.path(), "after-prune");
}

#[test]
fn a_pack_put_retried_after_its_answer_was_lost_is_not_taken_for_a_refusal() {
    let proxy = AppendOnlyProxy::losing_the_first_pack_answer;
    let Some(s) = setup("append-only lost answer", proxy) else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 4, 2, 100_000);
    init_repo(&s.through);
    store_ok(&s.through, &["backup", src.to_str().unwrap()]);
    let refused = s.proxy.refused();
    assert!(
        refused.iter().any(|r| r.starts_with("PUT ") && r.contains("/data/")),
        "the retried pack PUT met a key that existed and was refused: {refused:?}"
    );
    store_ok(&s.direct, &["check", "--read-data"]);
    assert_latest_restores(&s.through, &src, dir.path(), "restored");
}
