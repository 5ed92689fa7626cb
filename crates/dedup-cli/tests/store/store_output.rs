//! What `dedup store` prints: `dedup store ls … | head` is a normal way to look at a snapshot,
//! and must end quietly with status 0, as `dedup find | head` does; and no name in a snapshot
//! can pass for two entries of a listing.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_dedup");

fn store(repo: &Path) -> Command {
    common::isolate_client();
    let mut c = Command::new(BIN);
    c.arg("store")
        .arg("-r")
        .arg(repo)
        .env("DEDUP_PASSWORD", "pw")
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE");
    c
}

#[test]
fn ls_into_a_closed_pipe_ends_quietly() {
    let d = tempfile::tempdir().unwrap();
    let (repo, src) = (d.path().join("repo"), d.path().join("src"));
    for i in 0..3000 {
        let dir = src.join(format!("d{}", i % 30));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("file-with-a-longish-name-{i}")), b"x").unwrap();
    }
    let init = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"];
    assert!(store(&repo).args(init).status().unwrap().success());
    assert!(store(&repo).arg("backup").arg("-q").arg(&src).status().unwrap().success());

    let mut child = store(&repo)
        .args(["ls", "latest"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line's worth, then hang up, as `head -1` does.
    let mut first = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert_eq!(stderr, "");
}

/// A temporary directory holding a new repository (`repo`, a cheap key derivation) and a source
/// (`src`) of one file.
fn repository_and_one_file() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let (repo, src) = (d.path().join("repo"), d.path().join("src"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("f"), b"x").unwrap();
    let init = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"];
    assert!(store(&repo).args(init).status().unwrap().success());
    (d, repo, src)
}

/// Every store command that prints, with stdout on a full disk (/dev/full): the failure is
/// named (exit 2), never a panic (exit 101); and `forget`, whose verdicts could not be shown,
/// removed nothing.
#[test]
fn commands_whose_output_cannot_be_written_say_so_without_panicking() {
    let (_d, repo, src) = repository_and_one_file();
    for _ in 0..2 {
        assert!(store(&repo).arg("backup").arg("-q").arg(&src).status().unwrap().success());
    }
    let runs: [&[&str]; 7] = [
        &["stats"],
        &["stats", "--json"],
        &["snapshots"],
        &["check"],
        &["repair", "snapshots"],
        &["forget", "--keep-last", "1"],
        &["prune"],
    ];
    for args in runs {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = store(&repo).args(args).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("cannot write to standard output"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let listed = store(&repo).args(["snapshots"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 2, "forget removed none");
}

/// The commands that print while they work (backup, restore, each also with `--json`) and
/// those that make new snapshots (tag), with stdout on a full disk: the work is done, the
/// failure to print is named (exit 2), never a panic (exit 101).
#[test]
fn commands_that_print_as_they_work_name_a_stdout_that_cannot_be_written() {
    let (d, repo, src) = repository_and_one_file();
    let src_arg = src.to_str().unwrap().to_string();
    let spec = format!("latest:{src_arg}");
    let target = |n: u32| d.path().join(format!("target{n}")).to_str().unwrap().to_string();
    let runs: Vec<Vec<String>> = vec![
        vec!["backup".into(), src_arg.clone()],
        vec!["backup".into(), "--json".into(), src_arg.clone()],
        vec!["restore".into(), spec.clone(), "--target".into(), target(1)],
        vec!["restore".into(), spec.clone(), "--json".into(), "--target".into(), target(2)],
        vec!["tag".into(), "--add".into(), "t".into()],
        vec!["find".into(), "f".into()],
    ];
    for args in &runs {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = store(&repo).args(args).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("standard output"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let restored = std::fs::read(Path::new(&target(1)).join("f")).unwrap();
    assert_eq!(restored, b"x", "the restore was done whole");
}

#[test]
fn ls_shows_a_name_with_a_newline_or_odd_bytes_as_one_quoted_entry() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let d = tempfile::tempdir().unwrap();
    let (repo, src) = (d.path().join("repo"), d.path().join("src"));
    std::fs::create_dir(&src).unwrap();
    // A directory "evil\n" holding "passwd": raw, its path would read as two entries, one of
    // them "/passwd".
    let evil_dir = src.join(OsStr::from_bytes(b"evil\n"));
    std::fs::create_dir_all(&evil_dir).unwrap();
    std::fs::write(evil_dir.join("passwd"), b"x").unwrap();
    for name in [&b"bad\xff"[..], b"plain"] {
        std::fs::write(src.join(OsStr::from_bytes(name)), b"x").unwrap();
    }
    assert!(store(&repo).arg("init").status().unwrap().success());
    assert!(store(&repo).arg("backup").arg("-q").arg(&src).status().unwrap().success());
    let root = src.to_str().unwrap().trim_start_matches('/');

    let out = store(&repo).args(["ls", "latest"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> =
        text.lines().filter(|l| l.contains("evil") || l.contains("bad")).collect();
    assert_eq!(
        lines,
        [
            format!("\"/{root}/bad\\xff\""),
            format!("\"/{root}/evil\\n\""),
            format!("\"/{root}/evil\\n/passwd\""),
        ],
        "{text}"
    );
    assert!(!text.lines().any(|l| l == "/passwd"), "{text}");
    assert!(text.lines().any(|l| l == format!("/{root}/plain")), "{text}");

    let long = store(&repo).args(["ls", "-l", "latest"]).output().unwrap();
    let long = String::from_utf8(long.stdout).unwrap();
    let quoted = format!(" \"/{root}/evil\\n/passwd\"");
    assert!(long.lines().any(|l| l.ends_with(&quoted)), "{long}");
    assert!(!long.lines().any(|l| l == "/passwd"), "{long}");

    // -0: the bytes as they are, for scripts.
    let raw = store(&repo).args(["ls", "-0", "latest"]).output().unwrap();
    assert!(raw.status.success(), "{raw:?}");
    let entries: Vec<&[u8]> = raw.stdout.split(|&b| b == 0).collect();
    let evil = format!("/{root}/evil\n/passwd");
    let bad = [format!("/{root}/bad").as_bytes(), b"\xff"].concat();
    assert!(entries.contains(&evil.as_bytes()), "{:?}", raw.stdout);
    assert!(entries.contains(&&bad[..]), "{:?}", raw.stdout);
    assert_eq!(entries.last(), Some(&&b""[..]), "every entry ends in NUL");
}
