//! `dedup store copy`: snapshots from another repository, local to local: chunks carried over
//! as they are when both repositories cut alike, cut again otherwise (another chunker, another
//! format version); a second run copies only what is new; the copy checks with `--read-data`
//! and restores as the source did.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use common::store::*;
use common::*;

fn snapshots(repo: &Path) -> Vec<serde_json::Value> {
    let listed: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    listed.as_array().unwrap().clone()
}

fn copy_from(to: &Path, from: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = vec!["copy".as_ref(), "--from-repo".as_ref(), from.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    let out = run(store_cmd(to).args(&args).env("DEDUP_FROM_PASSWORD", PASSWORD));
    out.assert_code(0);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn assert_copy_restores(to: &Path, src: &Path, target: &Path) {
    store_ok(to, &["check", "--read-data"]);
    let spec = format!("latest:{}", src.display());
    store_ok(to, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_looks_equal(&look(src), &look(target), "the copy, restored");
}

#[test]
fn snapshots_copy_between_repositories_once_each() {
    let dir = tmp();
    let src = dir.path().join("src");
    write(&src, "a", &pattern(700_000, 1));
    write(&src, "dir/b", b"small file\n");
    symlink(&src, "a", "link");
    let (from, to, other) =
        (dir.path().join("from"), dir.path().join("to"), dir.path().join("other"));
    init_repo(&from);
    store_ok(&from, &[OsStr::new("backup"), OsStr::new("--tag=one"), src.as_os_str()]);
    store_ok(&from, &[OsStr::new("backup"), OsStr::new("--host=h2"), src.as_os_str()]);

    // Another chunker and format version: every file is cut again.
    let args = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1", "--format-version"];
    store_ok(&to, &[&args[..], &["2", "--chunker", "fastcdc:64K/128K/512K"]].concat());
    let said = copy_from(&to, &from, &["--host", "h2"]);
    assert!(said.contains("copied 1 snapshot(s), 0 already there; files cut again"), "{said}");
    let copied = snapshots(&to);
    assert_eq!(copied.len(), 1);
    let sources = snapshots(&from);
    let h2 = sources.iter().find(|s| s["host"] == "h2").unwrap();
    assert_eq!(copied[0]["original"], h2["id"]);
    for field in ["time", "host", "paths", "tags"] {
        assert_eq!(copied[0][field], h2[field], "{field}");
    }
    assert_copy_restores(&to, &src, &dir.path().join("out1"));

    // A second run copies only what the first left out; a third, nothing.
    let said = copy_from(&to, &from, &[]);
    assert!(said.contains("copied 1 snapshot(s), 1 already there"), "{said}");
    let said = copy_from(&to, &from, &[]);
    assert!(said.contains("copied 0 snapshot(s), 2 already there"), "{said}");
    assert_eq!(snapshots(&to).len(), 2);
    // A retagged source snapshot is the same original: still copied already.
    store_ok(&from, &["tag", "--add", "later", "--host", "h2"]);
    let said = copy_from(&to, &from, &[]);
    assert!(said.contains("copied 0 snapshot(s), 2 already there"), "{said}");

    // The same chunker with another key (every repository's own): chunks cut again too, and
    // the copy is right; copying a copy onward keeps the first original.
    init_repo(&other);
    let said = copy_from(&other, &to, &["--tag", "one"]);
    assert!(said.contains("copied 1 snapshot(s)"), "{said}");
    let onward = snapshots(&other);
    let first = sources.iter().find(|s| s["tags"] == serde_json::json!(["one"])).unwrap();
    assert_eq!(onward[0]["original"], first["id"]);
    assert_copy_restores(&other, &src, &dir.path().join("out2"));

    // Into itself: refused.
    let out = run(store_cmd(&to)
        .args(["copy", "--from-repo", to.to_str().unwrap()])
        .env("DEDUP_FROM_PASSWORD", PASSWORD));
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("same repository"), "{}", out.dump());
    // A wrong source password is refused before anything is written.
    let before = repo_files(&to);
    let out = run(store_cmd(&to)
        .args(["copy", "--from-repo", from.to_str().unwrap()])
        .env("DEDUP_FROM_PASSWORD", "wrong"));
    out.assert_code(2);
    assert_eq!(repo_files(&to).len(), before.len());
    fs::remove_dir_all(dir.path().join("out1")).unwrap();
}

/// The source's password from a file, while DEDUP_PASSWORD (the destination's) differs.
#[test]
fn the_source_password_has_sources_of_its_own() {
    let dir = tmp();
    let src = dir.path().join("src");
    write(&src, "f", b"content\n");
    let (from, to) = (dir.path().join("from"), dir.path().join("to"));
    init_repo(&from);
    store_ok(&from, &[OsStr::new("backup"), src.as_os_str()]);
    let args = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"];
    run(store_cmd(&to).args(args).env("DEDUP_PASSWORD", "destination")).assert_code(0);
    // No source of the source's password (and no terminal): refused, saying where it comes
    // from; the destination's password is not tried on it.
    let out = run(store_cmd(&to).env("DEDUP_PASSWORD", PASSWORD).args([
        "copy".as_ref(),
        "--from-repo".as_ref(),
        from.as_os_str(),
    ]));
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("DEDUP_FROM_PASSWORD"), "{}", out.dump());
    let file = dir.path().join("from-password");
    fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let out = run(store_cmd(&to).env("DEDUP_PASSWORD", "destination").args([
        "copy".as_ref(),
        "--from-repo".as_ref(),
        from.as_os_str(),
        "--from-password-file".as_ref(),
        file.as_os_str(),
    ]));
    out.assert_code(0);
    let out = run(store_cmd(&to).env("DEDUP_PASSWORD", "destination").args([
        "copy".as_ref(),
        "--from-repo".as_ref(),
        from.as_os_str(),
        "--from-password-command".as_ref(),
        OsStr::new(&format!("echo '{PASSWORD}'")),
    ]));
    out.assert_code(0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 already there"), "{}", out.dump());
}

/// Both repositories cut with the fixed chunker of the same size: chunks are carried over as
/// they are (under the destination's ids), none cut again.
#[test]
fn chunks_carry_over_as_they_are_when_both_repositories_cut_alike() {
    let dir = tmp();
    let src = dir.path().join("src");
    write(&src, "image", &pattern(600_000, 3));
    let (from, to) = (dir.path().join("from"), dir.path().join("to"));
    let args = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1", "--chunker"];
    store_ok(&from, &[&args[..], &["fixed:64K"]].concat());
    store_ok(&to, &[&args[..], &["fixed:64K", "--format-version", "3"]].concat());
    store_ok(&from, &[OsStr::new("backup"), src.as_os_str()]);
    let said = copy_from(&to, &from, &[]);
    assert!(said.contains("chunks carried over as they are"), "{said}");
    assert_copy_restores(&to, &src, &dir.path().join("out"));
}

/// A copy that stops on an error (a damaged chunk in the source) names it, writes no snapshot,
/// and leaves the destination as sound as before: the packs it stored are indexed, its writer
/// marker withdrawn.
#[test]
fn a_copy_that_fails_leaves_the_destination_sound() {
    let dir = tmp();
    let src = dir.path().join("src");
    for i in 0..8u64 {
        write(&src, &format!("f{i}"), &pattern(1 << 20, 10 + i));
    }
    let (from, to) = (dir.path().join("from"), dir.path().join("to"));
    // Unencrypted and uncompressed: the pack that holds the last file's end can be found.
    let plain = ["init", "--insecure-no-encryption", "--compression", "off", "--pack-size", "1M"];
    store_ok(&from, &plain);
    init_repo(&to);
    store_ok(&from, &[OsStr::new("backup"), src.as_os_str()]);
    let tail = &pattern(1 << 20, 17)[(1 << 20) - 64..];
    // The last file's last bytes damaged in their pack: the copy reads the other files (7
    // MiB, more than its open packs hold) before it fails.
    let (holder, at) = repo_files(&from)
        .into_iter()
        .filter(|(name, _)| name.starts_with("data/"))
        .find_map(|(name, bytes)| bytes.windows(64).position(|w| w == tail).map(|at| (name, at)))
        .expect("a pack holds the last file's end");
    let bytes = fs::read(from.join(&holder)).unwrap();
    fs::write(from.join(&holder), flip(&bytes, at + 10)).unwrap();
    let out = run(store_cmd(&to)
        .args(["copy", "--from-repo", from.to_str().unwrap()])
        .env("DEDUP_FROM_PASSWORD", PASSWORD));
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("damaged"), "{}", out.dump());
    assert!(snapshots(&to).is_empty());
    assert!(repo_names(&to, "writers").is_empty(), "the writer marker is withdrawn");
    let stored = repo_names(&to, "data").len();
    assert!(stored > 0, "the copy stored nothing before it failed: the test tests nothing");
    // The copy was the destination's only writer: an index file lists what it stored.
    assert!(!repo_names(&to, "index").is_empty(), "{stored} packs stored and none indexed");
    let check = store_ok(&to, &["check", "--read-data"]);
    assert!(check.contains(&format!(" {stored} packs")), "{stored} packs: {check}");
}
