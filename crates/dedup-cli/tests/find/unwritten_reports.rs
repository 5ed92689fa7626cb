//! What dedup writes for the user besides a tree — a report (`find -o`), standard output, an
//! action's or a mirror's log, a file dumped from a snapshot — onto a file system that reports a
//! failed write-back only at `close`, as NFS and SMB do (here a FUSE file system whose every
//! close fails with `EIO`): each run fails naming what was not written, instead of exiting 0
//! with the file incomplete on the server.

use crate::common;

use std::ffi::OsStr;
use std::fs::{self, File};
use std::path::Path;
use std::process::{Command, Output};

use common::close_fails::CloseFails;
use common::*;

/// A tree with one pair of duplicates, and the mounted file system whose closes fail.
fn setup(test: &str) -> Option<(tempfile::TempDir, CloseFails)> {
    let d = tmp();
    let data = pattern(10_000, 7);
    write(d.path(), "tree/a", &data);
    write(d.path(), "tree/b", &data);
    let point = mkdir(d.path(), "mnt");
    let mounted = CloseFails::mount(test, &point)?;
    Some((d, mounted))
}

/// Runs the binary in `dir`.
fn dedup_in(dir: &Path, args: &[&OsStr]) -> Output {
    Command::new(BIN).current_dir(dir).args(args).output().unwrap()
}

/// Runs the binary in `dir` with its standard output written to `stdout`.
fn with_stdout(dir: &Path, args: &[&str], stdout: &Path) -> Output {
    isolate_client();
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env("DEDUP_PASSWORD", common::store::PASSWORD)
        .stdout(File::create(stdout).unwrap())
        .output()
        .unwrap()
}

fn assert_failed(out: &Output, code: i32, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "exit status; stderr: {stderr}");
    assert!(stderr.contains(says), "expected {says:?} in: {stderr}");
    assert!(stderr.contains("Input/output error"), "the reason is not given: {stderr}");
}

#[test]
fn a_report_or_standard_output_whose_close_fails_fails_the_find() {
    let test = "a_report_or_standard_output_whose_close_fails_fails_the_find";
    let Some((d, fs)) = setup(test) else { return };
    let report = fs.path("report.txt");
    let args = ["find", "-q", "-o"].map(OsStr::new);
    let out = dedup_in(d.path(), &[&args[..], &[report.as_os_str(), OsStr::new("tree")]].concat());
    assert_failed(&out, 2, &format!("cannot write {}", report.display()));
    // The bytes reached the file system; only its close said they did not land.
    assert_eq!(fs::read_to_string(&report).unwrap(), "tree/a\ntree/b\n\n");

    let out = with_stdout(d.path(), &["find", "-q", "tree"], &fs.path("stdout.txt"));
    assert_failed(&out, 2, "cannot write to standard output");
}

#[test]
fn an_action_log_or_a_mirror_log_whose_close_fails_fails_the_run() {
    let test = "an_action_log_or_a_mirror_log_whose_close_fails_fails_the_run";
    let Some((d, fs)) = setup(test) else { return };
    let log = fs.path("link.jsonl");
    let (a, b) = (OsStr::new("tree/a"), OsStr::new("tree/b"));
    let out = dedup_in(d.path(), &[OsStr::new("link"), OsStr::new("--log"), log.as_os_str(), a, b]);
    assert_failed(&out, 2, "log");
    assert!(fs::read_to_string(&log).unwrap().contains("tree/b"), "the log lost its lines");

    let log = fs.path("sync.jsonl");
    let (tree, mirror) = (OsStr::new("tree"), OsStr::new("mirror"));
    let out = dedup_in(
        d.path(),
        &[OsStr::new("sync"), OsStr::new("--log"), log.as_os_str(), tree, mirror],
    );
    assert_failed(&out, 1, &format!("{}: ", log.display()));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the log is incomplete"));
    assert_eq!(fs::read(d.path().join("mirror/b")).unwrap(), pattern(10_000, 7));
}

#[test]
fn a_file_dumped_to_standard_output_whose_close_fails_fails_the_dump() {
    let test = "a_file_dumped_to_standard_output_whose_close_fails_fails_the_dump";
    let Some((d, fs)) = setup(test) else { return };
    let repo = d.path().join("repo");
    common::store::init_repo(&repo);
    let tree = d.path().join("tree");
    common::store::store_ok(&repo, &[OsStr::new("backup"), tree.as_os_str()]);
    let file = tree.join("a");
    let (repo, file) = (repo.to_str().unwrap(), file.to_str().unwrap());
    let out = with_stdout(d.path(), &["store", "-r", repo, "dump", "latest", file], &fs.path("a"));
    assert_failed(&out, 2, "standard output");
}
