//! `dedup store forget` and `prune`: space comes back, kept snapshots restore byte for byte,
//! a dry run changes nothing, a prune beside a running backup loses nothing of it, and a prune
//! killed at any point leaves a repository that checks and a next prune that completes.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::store::*;
use common::*;

/// `check --read-data` passes with no finding at all.
#[track_caller]
fn check_spotless(repo: &Path) {
    let out = store(repo, &["check", "--read-data"]);
    out.assert_code(0);
    assert!(out.stderr_lines().is_empty(), "check found something:\n{}", out.dump());
}

/// Version `v` of a tree: files that stay, files that change with each version, and one that
/// appears only in this version.
fn version(root: &Path, v: u64) {
    let _ = fs::remove_dir_all(root);
    fs::create_dir_all(root.join("keep")).unwrap();
    fs::write(root.join("keep/stays"), pattern(300_000, 1)).unwrap();
    fs::write(root.join("changes"), pattern(400_000, 100 + v)).unwrap();
    fs::write(root.join(format!("only-{v}")), pattern(250_000, 200 + v)).unwrap();
}

fn snapshot_ids(repo: &Path) -> Vec<String> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    list.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn forget_and_prune_free_the_space_of_forgotten_snapshots_and_the_rest_restores() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    init_repo(&repo);
    let mut looks = Vec::new();
    for v in 0..4 {
        version(&src, v);
        backup_json(&repo, &src);
        looks.push(look(&src));
    }
    let ids = snapshot_ids(&repo);
    let before = pack_bytes(&repo);

    // A dry run prints the verdicts and the plan, and changes nothing.
    let files_before = repo_files(&repo);
    let dry = store_ok(&repo, &["forget", "--keep-last", "2", "--prune", "--dry-run"]);
    assert!(dry.contains("would remove 2 snapshot(s)"), "{dry}");
    assert!(dry.contains("keep") && dry.contains("last") && dry.contains("would free"), "{dry}");
    assert_eq!(repo_files(&repo), files_before, "a dry run changed the repository");

    let out = store_ok(&repo, &["forget", "--keep-last", "2", "--prune"]);
    assert!(out.contains("removed 2 snapshot(s)") && out.contains("done:"), "{out}");
    let after = pack_bytes(&repo);
    // The two forgotten versions held two 400 kB and two 250 kB files of their own.
    assert!(after + 1_000_000 < before, "packs went from {before} to {after} bytes only");
    assert_eq!(snapshot_ids(&repo), ids[2..]);
    check_spotless(&repo);
    for (i, id) in ids.iter().enumerate().skip(2) {
        let target = dir.path().join(format!("restored-{i}"));
        assert_restores(&repo, &id[..8], &src, &target, &looks[i]);
    }
    // Nothing left to do: a second prune says so and writes nothing.
    let files_before = repo_files(&repo);
    let again = store_ok(&repo, &["prune"]);
    assert!(again.contains("nothing to prune"), "{again}");
    assert_eq!(repo_files(&repo), files_before);

    // Named snapshots go, and forget refuses to remove everything by accident.
    store_ok(&repo, &["forget", &ids[2][..8]]);
    assert_eq!(snapshot_ids(&repo), ids[3..]);
    let refused = store(&repo, &["forget"]);
    assert_ne!(refused.code(), 0);
    assert_eq!(snapshot_ids(&repo), ids[3..]);
}

#[test]
fn a_prune_beside_a_running_backup_waits_for_it_and_loses_none_of_its_data() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    init_repo(&repo);
    version(&src, 0);
    backup_json(&repo, &src);
    let shared = fs::read(src.join("changes")).unwrap();

    // A stream backup whose content is the file of the snapshot about to be forgotten: it
    // deduplicates against the packs the prune will plan to delete.
    let mut backup = Command::new(BIN)
        .args(["store", "backup", "--stdin", "--stdin-filename", "stream", "-r"])
        .arg(&repo)
        .env("DEDUP_PASSWORD", PASSWORD)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = backup.stdin.take().unwrap();
    stdin.write_all(&shared).unwrap();
    // Let it read and deduplicate what it was given; it stays at work while stdin is open.
    let deadline = Instant::now() + Duration::from_secs(20);
    while repo_names(&repo, "writers").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));

    let first = snapshot_ids(&repo)[0].clone();
    let out = store_ok(&repo, &["forget", &first[..8], "--prune"]);
    assert!(out.contains("wait for 1 session"), "the prune did not wait for the backup:\n{out}");
    assert!(!repo_names(&repo, "deletions").is_empty(), "no deletion plan was left");

    drop(stdin);
    let status = backup.wait_with_output().unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    // At once, before any other prune: the stream's snapshot reads back whole.
    let dumped = store(&repo, &["dump", "latest", "stream"]);
    dumped.assert_code(0);
    assert!(dumped.stdout == shared, "the stream came back different");

    // The next prune carries out the plan and keeps what the backup used.
    store_ok(&repo, &["prune"]);
    assert!(repo_names(&repo, "deletions").is_empty(), "the plan was not carried out");
    check_spotless(&repo);
    let dumped = store(&repo, &["dump", "latest", "stream"]);
    dumped.assert_code(0);
    assert!(dumped.stdout == shared, "the stream came back different after the prune");
}

#[test]
fn a_prune_killed_at_any_point_leaves_a_sound_repository_and_the_next_one_completes() {
    let dir = tmp();
    let src = dir.path().join("src");
    let build = |repo: &PathBuf| -> Vec<String> {
        init_repo(repo);
        for v in 0..3 {
            version(&src, v);
            backup_json(repo, &src);
        }
        let ids = snapshot_ids(repo);
        store_ok(repo, &["forget", &ids[0][..8], &ids[1][..8]]);
        ids
    };
    // A clean run, to learn how long a prune takes here.
    let reference = dir.path().join("reference");
    build(&reference);
    let started = Instant::now();
    store_ok(&reference, &["prune", "--max-unused", "0"]);
    let duration = started.elapsed();

    for (round, fraction) in [0.05, 0.2, 0.4, 0.6, 0.8, 1.0].into_iter().enumerate() {
        let repo = dir.path().join(format!("repo-{round}"));
        let ids = build(&repo);
        let kept_look = look(&src);
        let mut child = Command::new(BIN)
            .args([OsStr::new("store"), "prune".as_ref(), "--max-unused".as_ref(), "0".as_ref()])
            .arg("-r")
            .arg(&repo)
            .env("DEDUP_PASSWORD", PASSWORD)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(duration.mul_f64(fraction));
        let _ = child.kill();
        let _ = child.wait();
        let what = format!("killed after {:.0} % of a prune's time", fraction * 100.0);

        // Sound as it stands: only garbage is found, and the kept snapshot restores.
        let out = store(&repo, &["check"]);
        assert_eq!(out.code(), 0, "{what}:\n{}", out.dump());
        let target = dir.path().join(format!("mid-{round}"));
        assert_restores(&repo, &ids[2][..8], &src, &target, &kept_look);

        let out = store(&repo, &["prune", "--max-unused", "0"]);
        assert_eq!(out.code(), 0, "{what}: the next prune failed:\n{}", out.dump());
        check_spotless(&repo);
        let target = dir.path().join(format!("after-{round}"));
        assert_restores(&repo, &ids[2][..8], &src, &target, &kept_look);
        let plans = repo_names(&repo, "deletions");
        assert!(plans.is_empty(), "{what}: plans {plans:?} were left by\n{}", out.dump());
        let _ = fs::remove_dir_all(&repo);
    }
}
