//! What a snapshot claims is true (issue 35): a file the backup could not read, or that changed
//! through two reads, is in the snapshot only flagged incomplete, named with what was stored; a
//! file that changed once is read again; a backup where no path exists writes nothing; a path
//! that is missing is left out of the snapshot's paths; pseudo file systems end; incomplete
//! snapshots never push complete ones out under `forget`, which refuses a policy that keeps
//! nothing; and `snapshots` shows labels escaped, times with their zone and the user by name.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use common::act::contents;
use common::store::*;
use common::*;
use dedup_store::backend::LocalBackend;
use dedup_store::blob::BlobKind;
use dedup_store::format::{Content, Node};
use dedup_store::repo::{Repository, SnapshotFilter};

/// The repository at `repo`, opened with the tests' password.
fn open(repo: &Path) -> Repository {
    Repository::open(Arc::new(LocalBackend::new(repo)), PASSWORD.as_bytes()).unwrap()
}

/// The entry at `path` (absolute, as backed up) in the newest snapshot.
fn entry_in_latest(repo: &Path, path: &Path) -> Node {
    let repo = open(repo);
    let (_, snapshot) = repo.find_snapshot("latest", &SnapshotFilter::default()).unwrap();
    let path = path.as_os_str().as_encoded_bytes();
    dedup_store::tree_walk::resolve(&repo, snapshot.tree, path).unwrap()
}

/// The snapshots as `snapshots --json` lists them, oldest first.
fn listed(repo: &Path) -> Vec<serde_json::Value> {
    let out = store_ok(repo, &["snapshots", "--json"]);
    serde_json::from_str::<serde_json::Value>(&out).unwrap().as_array().unwrap().clone()
}

/// Runs a backup of `path` and returns its output.
fn backup(repo: &Path, path: &Path) -> Out {
    store(repo, &[OsStr::new("backup"), path.as_os_str()])
}

#[test]
fn a_backup_where_no_path_exists_writes_nothing_and_two_bad_nights_keep_the_good_snapshot() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("data"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    fs::write(src.join("a"), pattern(100_000, 1)).unwrap();
    fs::write(src.join("b"), b"the real data").unwrap();
    init_repo(&repo);
    backup(&repo, &src).assert_code(0);
    // The disk is not mounted on the next two nights.
    fs::rename(&src, dir.path().join("unmounted")).unwrap();
    for _ in 0..2 {
        let out = backup(&repo, &src);
        out.assert_code(2);
        out.assert_message("error", "no snapshot written: nothing to back up");
        out.assert_message("error", &format!("{}: No such file or directory", src.display()));
    }
    assert_eq!(listed(&repo).len(), 1, "a backup of nothing wrote a snapshot");
    store_ok(&repo, &["forget", "--keep-last", "2", "--prune"]);
    let target = dir.path().join("restored");
    store_ok(&repo, &["restore", "latest", "--target", target.to_str().unwrap()]);
    let restored = target.join(src.strip_prefix("/").unwrap());
    assert_eq!(contents(&restored), contents(&dir.path().join("unmounted")));
}

#[test]
fn a_missing_path_among_others_is_named_and_left_out_of_the_snapshot_and_its_paths() {
    let dir = tmp();
    let (here, gone, repo) =
        (dir.path().join("here"), dir.path().join("gone"), dir.path().join("repo"));
    fs::create_dir(&here).unwrap();
    fs::write(here.join("f"), b"kept").unwrap();
    init_repo(&repo);
    let out = store(&repo, &[OsStr::new("backup"), here.as_os_str(), gone.as_os_str()]);
    out.assert_code(1);
    let line =
        format!("{}: No such file or directory (os error 2); not in the snapshot", gone.display());
    out.assert_message("error", &line);
    let snapshots = listed(&repo);
    assert_eq!(snapshots.len(), 1);
    assert_eq!(snapshots[0]["paths"], serde_json::json!([here.to_str().unwrap()]));
    assert_eq!(snapshots[0]["incomplete"], true);
}

#[test]
fn a_file_that_changes_through_both_reads_is_stored_flagged_incomplete_and_named() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    let big = src.join("big");
    fs::File::create(&big).unwrap().set_len(256 << 20).unwrap();
    fs::write(src.join("calm"), b"unchanged").unwrap();
    init_repo(&repo);
    let stop = Arc::new(AtomicBool::new(false));
    let toucher = keep_touching(&big, Arc::clone(&stop));
    let out = backup(&repo, &src);
    stop.store(true, Ordering::SeqCst);
    toucher.join().unwrap();
    out.assert_code(1);
    out.assert_message(
        "error",
        &format!(
            "{}: changed while it was read, and again while it was read a second time; in the \
             snapshot without its content, marked incomplete",
            big.display()
        ),
    );
    let node = entry_in_latest(&repo, &big);
    assert!(node.incomplete, "{node:?}");
    assert_eq!(node.content, Content::Chunks(Vec::new()));
    assert!(!entry_in_latest(&repo, &src.join("calm")).incomplete);
    assert_eq!(listed(&repo)[0]["incomplete"], true);
}

/// The read position of the descriptor process `pid` holds open on `path`, if any.
fn read_position(pid: u32, path: &Path) -> Option<u64> {
    for fd in fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
        if fs::read_link(fd.path()).ok().as_deref() != Some(path) {
            continue;
        }
        let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_str()?));
        let pos =
            info.ok()?.lines().find_map(|l| l.strip_prefix("pos:").map(str::trim)?.parse().ok());
        return pos;
    }
    None
}

#[test]
fn a_file_that_changed_during_its_first_read_is_read_again_and_stored_whole() {
    const SIZE: u64 = 1 << 30;
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    let big = src.join("big");
    let file = fs::File::create(&big).unwrap();
    file.set_len(SIZE).unwrap();
    init_repo(&repo);
    let (stdout, stderr) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = Command::new(BIN)
        .args(["store", "-r"])
        .arg(&repo)
        .arg("backup")
        .arg(&src)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout).unwrap())
        .stderr(fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    // Once, while the first read is in its first half: the rest of that read sees the change.
    let touched = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let deadline = Instant::now() + TIMEOUT;
    let mut done = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the backup did not end");
        if !done && read_position(child.id(), &big).is_some_and(|pos| pos > 0 && pos < SIZE / 2) {
            file.set_modified(touched).unwrap();
            done = true;
        }
        // Not a busy loop: on two cores it took the backup's processor (CI ran past the timeout).
        std::thread::sleep(Duration::from_millis(1));
    };
    let out = Out {
        code: status.code(),
        stdout: fs::read(&stdout).unwrap(),
        stderr: fs::read(&stderr).unwrap(),
    };
    assert!(done, "the read was never seen under way\n{}", out.dump());
    out.assert_code(0);
    out.assert_message(
        "warning",
        &format!(
            "{}: changed while it was read; read again: the snapshot holds it as it was then",
            big.display()
        ),
    );
    let node = entry_in_latest(&repo, &big);
    assert!(!node.incomplete, "{node:?}");
    let mtime = touched.duration_since(UNIX_EPOCH).unwrap().as_nanos() as i64;
    assert_eq!((node.size, node.mtime), (SIZE, mtime), "the node describes the second read");
    let Content::Chunks(chunks) = &node.content else { panic!("{node:?}") };
    let index = open(&repo).load_index().unwrap().index;
    let stored: u64 = chunks
        .iter()
        .map(|c| u64::from(index.lookup(c, BlobKind::Data).unwrap().entry.raw_len))
        .sum();
    assert_eq!(stored, SIZE, "the chunks hold the whole file");
    assert_eq!(listed(&repo)[0]["incomplete"], false);
}

#[test]
fn a_backup_of_proc_self_ends_and_flags_what_it_could_not_read_whole() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);
    // Killed by the harness's timeout, and failed, if it reads `pagemap` without end.
    let out = store(&repo, &["backup", "/proc/self"]);
    assert!(matches!(out.code(), 0 | 1), "{}", out.dump());
    out.assert_message("error", "/pagemap: longer than 16 MiB on a pseudo file system");
    let pagemap = entry_in_latest(&repo, Path::new("/proc/self/pagemap"));
    assert!(pagemap.incomplete, "{pagemap:?}");
    // A file of /proc reports size 0; the snapshot holds what was read.
    let status = entry_in_latest(&repo, Path::new("/proc/self/status"));
    assert!(!status.incomplete && status.size > 0, "{status:?}");
}

#[test]
fn files_and_directories_nobody_can_read_are_flagged_and_incomplete_snapshots_displace_nothing() {
    let test = "files_and_directories_nobody_can_read_are_flagged_and_incomplete_snapshots_displace_nothing";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tmp();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir_all(src.join("closed")).unwrap();
    fs::write(src.join("open"), b"anyone reads this").unwrap();
    fs::write(src.join("secret"), b"root only").unwrap();
    fs::write(src.join("closed/inside"), b"root only too").unwrap();
    fs::set_permissions(src.join("secret"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::set_permissions(src.join("closed"), fs::Permissions::from_mode(0o700)).unwrap();
    init_repo(&repo);
    // A complete snapshot by root, then two nights as nobody, who cannot read everything.
    backup(&repo, &src).assert_code(0);
    Command::new("chown").args(["-R", "65534:65534"]).arg(&repo).status().unwrap();
    for _ in 0..2 {
        let out = store_as_nobody(&repo, &[OsStr::new("backup"), src.as_os_str()]);
        out.assert_code(1);
        let secret = src.join("secret");
        out.assert_message(
            "error",
            &format!(
                "{}: Permission denied (os error 13); in the snapshot without its content, \
                 marked incomplete",
                secret.display()
            ),
        );
        out.assert_message(
            "error",
            &format!("{}: Permission denied", src.join("closed").display()),
        );
        assert_eq!(out.stderr_lines().iter().filter(|l| l.contains("/secret")).count(), 1);
    }
    // Nothing of these two can be read: no snapshot at all.
    let (closed, secret) = (src.join("closed"), src.join("secret"));
    let unreadable = [OsStr::new("backup"), closed.as_os_str(), secret.as_os_str()];
    let out = store_as_nobody(&repo, &unreadable);
    out.assert_code(2);
    out.assert_message("error", "no snapshot written: nothing could be read of");
    assert_eq!(listed(&repo).len(), 3);
    let secret = entry_in_latest(&repo, &src.join("secret"));
    assert!(secret.incomplete && secret.content == Content::Chunks(Vec::new()), "{secret:?}");
    assert!(entry_in_latest(&repo, &src.join("closed")).incomplete, "an unlisted directory");
    assert!(!entry_in_latest(&repo, &src.join("open")).incomplete);
    // keep-last 2 keeps the complete snapshot, and the incomplete ones only in addition.
    let snapshots = listed(&repo);
    let flags: Vec<&serde_json::Value> = snapshots.iter().map(|s| &s["incomplete"]).collect();
    assert_eq!(flags, [false, true, true]);
    let kept = store_ok(&repo, &["forget", "--keep-last", "2"]);
    assert!(kept.contains("keep 3 of 3 snapshot(s)"), "{kept}");
    assert!(kept.contains("last (incomplete)"), "{kept}");
    store_ok(&repo, &["forget", "--keep-last", "1"]);
    let left: Vec<serde_json::Value> =
        listed(&repo).iter().map(|s| s["incomplete"].clone()).collect();
    assert_eq!(left, [false, true], "the newest and the last complete one stay");
}

#[test]
fn forget_refuses_a_policy_that_keeps_nothing_unless_told_to_remove_all() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    fs::write(src.join("f"), b"x").unwrap();
    init_repo(&repo);
    backup(&repo, &src).assert_code(0);
    backup(&repo, &src).assert_code(0);
    for args in [
        &["forget", "--keep-last", "0"][..],
        &["forget", "--keep-daily", "0", "--keep-last", "0"],
        &["forget"],
        &["forget", "--keep-tag", "nowhere"],
    ] {
        let out = store(&repo, args);
        out.assert_code(2);
        out.assert_message("error", "--unsafe-allow-remove-all");
        assert_eq!(listed(&repo).len(), 2, "{args:?} removed snapshots");
    }
    store_ok(&repo, &["forget", "--keep-last", "0", "--unsafe-allow-remove-all"]);
    assert!(listed(&repo).is_empty());
}

#[test]
fn snapshots_show_labels_escaped_times_with_their_zone_and_the_user_by_name() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    fs::write(src.join("f"), b"x").unwrap();
    init_repo(&repo);
    for label in [["--host", "two\nlines"], ["--tag", "tab\there"]] {
        let out = store(
            &repo,
            &[OsStr::new("backup"), label[0].as_ref(), label[1].as_ref(), src.as_os_str()],
        );
        out.assert_code(2);
        out.assert_message("error", "control characters");
    }
    backup(&repo, &src).assert_code(0);
    let snapshot = &listed(&repo)[0];
    let time = snapshot["time"].as_str().unwrap();
    let digits = |range: std::ops::Range<usize>| time[range].bytes().all(|b| b.is_ascii_digit());
    assert!(
        time.len() == 30 && &time[10..11] == "T" && time.ends_with('Z') && digits(20..29),
        "not RFC 3339 with nanoseconds: {time}"
    );
    let me = Command::new("id").arg("-un").output().unwrap();
    let me = String::from_utf8(me.stdout).unwrap();
    assert_eq!(snapshot["user"], me.trim(), "{snapshot}");
    assert_eq!(snapshot["hostname"], snapshot["host"]);

    // Snapshots written by another program (or an older dedup) with such labels print escaped.
    let repository = open(&repo);
    let (_, mut odd) = repository.find_snapshot("latest", &SnapshotFilter::default()).unwrap();
    odd.host = "evil\nabcd1234  2020-01-01 00:00:00  forged  /x".into();
    odd.tags = vec!["a\nb".into()];
    odd.user = "uid4242".into();
    odd.time += 1;
    repository.save_snapshot(&odd).unwrap();
    let shown = store_ok(&repo, &["snapshots"]);
    assert_eq!(shown.lines().count(), 2, "{shown}");
    assert!(shown.contains("\"evil\\nabcd1234  2020-01-01 00:00:00  forged  /x\""), "{shown}");
    assert!(shown.contains("[\"a\\nb\"]"), "{shown}");
    let odd = &listed(&repo)[1];
    assert!(odd["user"].is_null() && odd["uid"] == 4242, "{odd}");
    let forget = store_ok(&repo, &["forget", "--keep-last", "5", "--dry-run"]);
    assert!(forget.contains("host \"evil\\nabcd1234"), "{forget}");

    // `ls` names a missing path as it prints paths: from the root, with its `/`.
    for asked in ["/no/such", "no/such"] {
        let out = store(&repo, &["ls", "latest", asked]);
        out.assert_message("error", "/no/such: no such path in the snapshot");
    }
}
