//! A tree as deep as a file system makes: a 10,000-deep chain of directories backs up, and then
//! every command that walks a snapshot's trees (restore, rewrite, repair snapshots) takes it,
//! where they ran out of the main thread's stack and the process aborted. To keep the test
//! small, the commands run with a stack limit of 1 MiB (`ulimit -s 1024`), where a 2,000-deep
//! chain asks as much of the main thread as a 10,000-deep one does at the usual 8 MiB.

use crate::common;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use common::store::*;
use common::*;

const DEPTH: usize = 2_000;

/// The directory at the end of a `DEPTH`-long chain of `d` below `root`, made when `make`.
fn chain(root: &Path, make: bool) -> OwnedFd {
    let mut dir = dedup_scan::open_dir(root, true).unwrap();
    for _ in 0..DEPTH {
        if make {
            dedup_fs::create_dir_at(&dir, OsStr::new("d"), 0o755).unwrap();
        }
        dir = dedup_fs::open_dir_at(&dir, OsStr::new("d")).unwrap();
    }
    dir
}

/// `dedup store -r REPO ARGS` with a main-thread stack of 1 MiB.
fn store_small_stack(repo: &Path, args: &[&OsStr]) -> Out {
    isolate_client();
    let mut c = assert_cmd::Command::new("sh");
    c.timeout(TIMEOUT)
        .args(["-c", "ulimit -s 1024 && exec \"$0\" \"$@\"", BIN, "store", "-r"])
        .arg(repo)
        .args(args)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE");
    run(&mut c)
}

/// Removes a tree too deep for a recursive removal in this process.
fn remove_deep(path: &Path) {
    let removed = std::process::Command::new("rm").arg("-rf").arg(path).status();
    assert!(removed.is_ok_and(|s| s.success()), "rm -rf {}", path.display());
}

/// Whether this process (and the program it runs) may hold a descriptor per level: a restore
/// keeps its way down open.
fn enough_descriptors() -> bool {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    setrlimit(Resource::Nofile, limit).is_ok()
        && getrlimit(Resource::Nofile).current.is_none_or(|n| n > DEPTH as u64 + 500)
}

#[test]
fn a_deep_chain_restores_rewrites_and_repairs() {
    let test = "a_deep_chain_restores_rewrites_and_repairs";
    if !require(enough_descriptors(), test, "the open-file limit is below 2,500") {
        return;
    }
    let dir = tmp();
    let (src, repo) = (dir.path().join("deep"), dir.path().join("repo"));
    std::fs::create_dir(&src).unwrap();
    {
        let bottom = chain(&src, true);
        let leaf = rustix::fs::openat(
            &bottom,
            "leaf",
            rustix::fs::OFlags::CREATE | rustix::fs::OFlags::WRONLY,
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        std::fs::File::from(leaf).write_all(b"bottom").unwrap();
    }
    init_repo(&repo);
    backup_json(&repo, &src);
    remove_deep(&src);

    let target = dir.path().join("restored");
    let spec = format!("latest:{}", src.display());
    let restored = store(
        &repo,
        &[OsStr::new("restore"), spec.as_ref(), "--target".as_ref(), target.as_os_str()],
    );
    restored.assert_code(0);
    let mut back = String::new();
    let bottom = chain(&target, false);
    dedup_fs::open_file_at(&bottom, OsStr::new("leaf")).unwrap().read_to_string(&mut back).unwrap();
    assert_eq!(back, "bottom");
    drop(bottom);
    remove_deep(&target);

    let rewrite = ["rewrite", "latest", "--exclude", "leaf"].map(OsStr::new);
    let rewritten = store_small_stack(&repo, &rewrite);
    rewritten.assert_code(0);
    let repaired = store_small_stack(&repo, &["repair".as_ref(), "snapshots".as_ref()]);
    repaired.assert_code(0);
    assert!(!repaired.dump().contains("overflow"), "{}", repaired.dump());
}
