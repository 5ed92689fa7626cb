//! `dedup store find`: which snapshots hold an entry whose name or path matches, with its kind,
//! size and time; the snapshot filters, `--ignore-case`, time bounds and `--json`; no match is
//! exit 0 (restic's rule), a tree that cannot be read is named and exit 1.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use common::store::*;
use common::*;

fn backup(repo: &Path, src: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = vec!["backup".as_ref(), "--json".as_ref()];
    args.extend(extra.iter().map(OsStr::new));
    args.push(src.as_os_str());
    let out = store(repo, &args);
    out.assert_code(0);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    summary["snapshot"].as_str().unwrap().to_string()
}

fn json(out: &str) -> Vec<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(out).unwrap().as_array().unwrap().clone()
}

#[test]
fn find_names_the_snapshots_holding_a_match_with_size_and_kind() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "docs/report.txt", b"report\n");
    write(&src, "keys/id.key", b"0123456789");
    init_repo(&repo);
    let first = backup(&repo, &src, &["--host", "h1", "--tag", "one"]);
    write(&src, "keys/ID2.KEY", b"second key");
    fs::remove_dir_all(src.join("docs")).unwrap();
    let second = backup(&repo, &src, &["--host", "h2", "--tag", "two"]);
    let key = format!("{}/keys/id.key", src.display());

    let text = store_ok(&repo, &["find", "*.key"]);
    assert!(text.contains(&format!("Found in snapshot {}", &first[..8])), "{text}");
    assert!(text.contains(&format!("Found in snapshot {}", &second[..8])), "{text}");
    let line = text.lines().find(|l| l.ends_with(&key)).unwrap_or_else(|| panic!("{text}"));
    assert!(line.trim_start().starts_with("-0644") && line.contains(" 10 "), "{line}");
    assert!(!text.contains("ID2.KEY"), "case matters without -i: {text}");

    // -i, a whole path, a directory, and the snapshot filters.
    let found = json(&store_ok(&repo, &["find", "--json", "-i", "*.key"]));
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[1]["hits"], 2, "{found:?}");
    assert_eq!(found[1]["matches"][0]["type"], "file");
    let by_path = json(&store_ok(&repo, &["find", "--json", &key, "--host", "h2"]));
    assert_eq!(by_path.len(), 1, "{by_path:?}");
    assert_eq!(by_path[0]["snapshot"], second.as_str());
    assert_eq!(by_path[0]["matches"][0]["path"], key.as_str());
    assert_eq!(by_path[0]["matches"][0]["size"], 10);
    let dirs = json(&store_ok(&repo, &["find", "--json", "docs"]));
    assert_eq!(dirs.len(), 1, "only the first snapshot has docs/: {dirs:?}");
    assert_eq!(dirs[0]["matches"][0]["type"], "dir");
    let tagged = json(&store_ok(&repo, &["find", "--json", "--tag", "one", "*.key"]));
    assert_eq!(tagged.len(), 1);
    assert_eq!(tagged[0]["snapshot"], first.as_str());
    let named = json(&store_ok(&repo, &["find", "--json", "-s", &second[..8], "report.txt"]));
    assert!(named.is_empty(), "{named:?}");

    // Time bounds on the entries' mtime.
    let old = json(&store_ok(&repo, &["find", "--json", "--newest", "2000-01-01", "*"]));
    assert!(old.is_empty(), "{old:?}");
    let recent = json(&store_ok(&repo, &["find", "--json", "--oldest", "2000-01-01", "*.key"]));
    assert_eq!(recent.len(), 2);
    store(&repo, &["find", "--oldest", "yesterday", "*"]).assert_code(2);

    // Nothing found: no output, exit 0 as restic's find.
    assert_eq!(store_ok(&repo, &["find", "no-such-name"]), "");
    // A bad pattern is named.
    let bad = store(&repo, &["find", "a[b"]);
    bad.assert_code(2);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("a[b"), "{}", bad.dump());
}

#[test]
fn find_names_a_tree_it_cannot_read_and_searches_the_rest() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "a/x.key", b"a");
    init_repo(&repo);
    backup(&repo, &src, &[]);
    let first = json(&store_ok(&repo, &["find", "--json", "x.key"]));
    assert_eq!(first.len(), 1);
    // The tree packs go: every tree is unreadable, the search says so and exits 1.
    let index: Vec<String> = repo_names(&repo, "index");
    for name in repo_names(&repo, "data") {
        fs::remove_file(repo.join(name)).unwrap();
    }
    let out = store(&repo, &["find", "x.key"]);
    out.assert_code(1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not searched"), "{}", out.dump());
    assert!(!index.is_empty());
}
