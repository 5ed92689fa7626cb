//! `dedup store backup`'s restic selection options: `--files-from` (with a name that is not
//! UTF-8), `--exclude-file` (with comments and blank lines), `--iexclude`, `--exclude-caches`,
//! `--exclude-if-present` and `--exclude-larger-than`, checked by what `ls latest` lists.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

use common::store::*;
use common::*;

#[test]
fn files_from_and_exclude_file_and_iexclude_choose_what_is_stored() {
    let dir = tmp();
    let (tree, repo) = (dir.path().join("tree"), dir.path().join("repo"));
    fs::create_dir_all(tree.join("keep")).unwrap();
    fs::create_dir_all(tree.join("other")).unwrap();
    let odd = OsStr::from_bytes(b"caf\xe9");
    fs::write(tree.join(odd), b"latin-1 name").unwrap();
    for name in ["keep/a.txt", "keep/b.tmp", "keep/Photo.JPG", "keep/notes.log", "other/x"] {
        fs::write(tree.join(name), name.as_bytes()).unwrap();
    }
    let list = dir.path().join("list");
    let mut listed = b"# roots\n\n".to_vec();
    listed.extend_from_slice(tree.join("keep").as_os_str().as_bytes());
    listed.extend_from_slice(b"\n");
    listed.extend_from_slice(tree.join(odd).as_os_str().as_bytes());
    listed.extend_from_slice(b"\n");
    fs::write(&list, listed).unwrap();
    let patterns = dir.path().join("patterns");
    fs::write(&patterns, "# build output\n*.tmp\n\n   \n# logs\n  *.log \r\n").unwrap();
    init_repo(&repo);

    let args: Vec<&OsStr> = vec![
        "backup".as_ref(),
        "--files-from".as_ref(),
        list.as_os_str(),
        "--exclude-file".as_ref(),
        patterns.as_os_str(),
        "--iexclude".as_ref(),
        "*.jpg".as_ref(),
    ];
    store(&repo, &args).assert_code(0);
    let ls = store(&repo, &["ls", "-0", "latest"]);
    ls.assert_code(0);
    let ls = ls.stdout;
    let has = |suffix: &[u8]| ls.split(|&b| b == 0).any(|line| line.ends_with(suffix));
    assert!(has(b"/keep/a.txt"), "{}", String::from_utf8_lossy(&ls));
    assert!(has(b"/caf\xe9"), "{}", String::from_utf8_lossy(&ls));
    for gone in [&b"/b.tmp"[..], b"/notes.log", b"/Photo.JPG", b"/other", b"/other/x"] {
        assert!(
            !has(gone),
            "{} in {}",
            String::from_utf8_lossy(gone),
            String::from_utf8_lossy(&ls)
        );
    }
}

#[test]
fn a_missing_exclude_file_is_named() {
    let dir = tmp();
    let (tree, repo) = (dir.path().join("tree"), dir.path().join("repo"));
    fs::create_dir(&tree).unwrap();
    init_repo(&repo);
    let missing = dir.path().join("no-such-patterns");
    let args: Vec<&OsStr> =
        vec!["backup".as_ref(), "--exclude-file".as_ref(), missing.as_os_str(), tree.as_os_str()];
    let out = store(&repo, &args);
    assert_ne!(out.code, Some(0), "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-patterns"), "{}", out.dump());
}

/// What `ls latest` prints.
fn listed(repo: &std::path::Path) -> Vec<u8> {
    let ls = store(repo, &["ls", "latest"]);
    ls.assert_code(0);
    ls.stdout
}

fn ends_a_line(ls: &[u8], suffix: &str) -> bool {
    ls.split(|&b| b == b'\n').any(|line| line.ends_with(suffix.as_bytes()))
}

#[test]
fn caches_tagged_directories_and_large_files_are_left_out() {
    let dir = tmp();
    let (tree, repo) = (dir.path().join("tree"), dir.path().join("repo"));
    for sub in ["cache", "fake-cache", "marked", "plain"] {
        fs::create_dir_all(tree.join(sub).join("deep")).unwrap();
        fs::write(tree.join(sub).join("deep/data"), b"data").unwrap();
    }
    let signature = "Signature: 8a477f597d28d172789f06886806bc55\n# a cache\n";
    fs::write(tree.join("cache/CACHEDIR.TAG"), signature).unwrap();
    fs::write(tree.join("fake-cache/CACHEDIR.TAG"), "Signature: not the one\n").unwrap();
    fs::write(tree.join("marked/.nobackup"), b"").unwrap();
    fs::write(tree.join("plain/small"), vec![1u8; 1024]).unwrap();
    fs::write(tree.join("plain/large"), vec![2u8; 3 * 1024 + 1]).unwrap();
    fs::write(tree.join("plain/exact"), vec![3u8; 3 * 1024]).unwrap();
    init_repo(&repo);

    let tree_arg = tree.to_str().unwrap();
    let args = [
        "backup",
        "--exclude-caches",
        "--exclude-if-present",
        ".nobackup",
        "--exclude-larger-than",
        "3k",
        tree_arg,
    ];
    store(&repo, &args).assert_code(0);
    let ls = listed(&repo);
    let text = String::from_utf8_lossy(&ls);
    for kept in [
        "/cache",
        "/cache/CACHEDIR.TAG",
        "/fake-cache/deep/data",
        "/fake-cache/CACHEDIR.TAG",
        "/marked",
        "/marked/.nobackup",
        "/plain/small",
        "/plain/exact",
        "/plain/deep/data",
    ] {
        assert!(ends_a_line(&ls, kept), "{kept} missing from {text}");
    }
    for gone in ["/cache/deep", "/cache/deep/data", "/marked/deep", "/plain/large"] {
        assert!(!ends_a_line(&ls, gone), "{gone} in {text}");
    }
}

#[test]
fn a_bad_size_is_refused_with_its_text() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);
    let out =
        store(&repo, &["backup", "--exclude-larger-than", "12Q", dir.path().to_str().unwrap()]);
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("12Q"), "{}", out.dump());
}
