//! `dedup store`: `latest` chosen by `--host` and `--path` on every command that takes a
//! snapshot, the parent a backup chooses, and what `stats` reports.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use common::store::*;
use common::*;

fn backup_as(repo: &Path, host: &str, path: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args: Vec<&OsStr> = vec!["backup".as_ref(), "--json".as_ref(), "--host".as_ref()];
    args.push(host.as_ref());
    args.extend(extra.iter().map(OsStr::new));
    args.push(path.as_os_str());
    let out = store(repo, &args);
    out.assert_code(0);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn latest_is_the_newest_of_the_host_and_paths_asked_for() {
    let dir = tmp();
    let (one, two, repo) =
        (dir.path().join("one"), dir.path().join("two"), dir.path().join("repo"));
    fs::create_dir(&one).unwrap();
    fs::create_dir(&two).unwrap();
    fs::write(one.join("first"), b"one, first version").unwrap();
    fs::write(two.join("other"), b"two").unwrap();
    init_repo(&repo);
    let s1 = backup_as(&repo, "h1", &one, &[])["snapshot"].as_str().unwrap().to_string();
    backup_as(&repo, "h2", &two, &[]);
    fs::write(one.join("first"), b"one, second version").unwrap();
    let s3 = backup_as(&repo, "h2", &one, &[])["snapshot"].as_str().unwrap().to_string();
    let (one_s, two_s) = (one.to_str().unwrap(), two.to_str().unwrap());
    let first = format!("{one_s}/first");

    let ls = store_ok(&repo, &["ls", "latest", "--host", "h1"]);
    assert!(ls.contains("/first"), "{ls}");
    let ls = store_ok(&repo, &["ls", "latest", "--path", two_s]);
    assert!(ls.contains("/other") && !ls.contains("/first"), "{ls}");
    let with_slash = format!("{two_s}/");
    assert_eq!(store_ok(&repo, &["ls", "latest", "--path", &with_slash]), ls);
    let dumped = store(&repo, &["dump", "latest", "--host", "h1", &first]);
    assert_eq!(dumped.stdout, b"one, first version", "{}", dumped.dump());
    let dumped = store(&repo, &["dump", "latest", "--host", "h2", "--path", one_s, &first]);
    assert_eq!(dumped.stdout, b"one, second version", "{}", dumped.dump());
    let target = dir.path().join("restored");
    let spec = format!("latest:{one_s}");
    store_ok(&repo, &["restore", &spec, "--host", "h1", "--target", target.to_str().unwrap()]);
    assert_eq!(fs::read(target.join("first")).unwrap(), b"one, first version");
    let diff = store_ok(&repo, &["diff", &s1[..8], "latest", "--path", one_s]);
    assert_eq!(lines(&diff), [format!("M    {first}")], "{diff}");
    let listed = store_ok(&repo, &["snapshots", "--path", one_s]);
    assert_eq!(listed.lines().count(), 2, "{listed}");

    let none = store(&repo, &["ls", "latest", "--host", "elsewhere"]);
    none.assert_code(2);
    assert!(stderr_text(&none).contains("no snapshot of host elsewhere"), "{}", none.dump());
    let none = store(&repo, &["ls", "latest", "--host", "h1", "--path", two_s]);
    none.assert_code(2);

    // A backup's parent: by default the newest of its host and paths; `--parent latest` the
    // newest of its host.
    let again = backup_as(&repo, "h1", &one, &[])["snapshot"].as_str().unwrap().to_string();
    assert_eq!(parent_of(&repo, &again).as_deref(), Some(s1.as_str()));
    let by_host = backup_as(&repo, "h2", &two, &["--parent", "latest"]);
    let by_host = by_host["snapshot"].as_str().unwrap().to_string();
    assert_eq!(parent_of(&repo, &by_host).as_deref(), Some(s3.as_str()));
}

fn stderr_text(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn parent_of(repo: &Path, id: &str) -> Option<String> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    let snapshot = list.as_array().unwrap().iter().find(|s| s["id"] == id).unwrap().clone();
    snapshot["parent"].as_str().map(String::from)
}

#[test]
fn stats_count_what_the_snapshots_hold_against_what_is_stored() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    let noise = pattern(300_000, 5);
    for i in 0..10 {
        fs::write(src.join(format!("copy-{i}")), &noise).unwrap();
    }
    fs::hard_link(src.join("copy-0"), src.join("link-to-copy-0")).unwrap();
    let text: String =
        (0..40_000).map(|i| format!("line {i} of a text that compresses\n")).collect();
    fs::write(src.join("text"), &text).unwrap();
    init_repo(&repo);
    backup_json(&repo, &src);
    backup_json(&repo, &src);

    let out = store_ok(&repo, &["stats", "--json"]);
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    let number = |field: &str| stats[field].as_u64().unwrap_or_else(|| panic!("{field}: {stats}"));
    let per_snapshot = 11 * noise.len() as u64 + text.len() as u64;
    assert_eq!(number("snapshots"), 2);
    assert_eq!(number("logical_bytes"), 2 * per_snapshot, "every name, every snapshot");
    assert_eq!(number("unique_bytes"), noise.len() as u64 + text.len() as u64);
    let files = repo_files(&repo);
    let on_disk: u64 = files.values().map(|b| b.len() as u64).sum();
    assert_eq!(number("stored_bytes"), on_disk, "the repository's every file");
    let packs: Vec<_> = files.keys().filter(|n| n.starts_with("data/")).collect();
    assert_eq!(number("packs"), packs.len() as u64);
    assert_eq!(number("data_packs") + number("tree_packs"), packs.len() as u64);
    assert!(number("data_blobs") >= 2 && number("tree_blobs") >= 1, "{stats}");
    let (stored_trees, tree_bytes) = (number("stored_tree_bytes"), number("tree_bytes"));
    assert!(tree_bytes > 0 && stored_trees > 0, "{stats}");
    let in_packs: u64 =
        files.iter().filter(|(n, _)| n.starts_with("data/")).map(|(_, b)| b.len() as u64).sum();
    assert!(
        number("stored_data_bytes") + stored_trees < in_packs,
        "the packs hold every stored blob, and their trailers: {stats}"
    );
    let ratio = |field: &str| stats[field].as_f64().unwrap();
    let dedup = 2.0 * per_snapshot as f64 / (noise.len() + text.len()) as f64;
    assert!((ratio("dedup_ratio") - dedup).abs() < 1e-9, "{stats}");
    assert!(ratio("compression_ratio") > 1.5, "the text compresses: {stats}");
    assert!(ratio("total_ratio") > dedup, "{stats}");

    let text_out = store_ok(&repo, &["stats"]);
    for label in
        ["logical size", "unique data", "repository size", "dedup ratio", "compression ratio"]
    {
        assert!(text_out.contains(label), "{label}: {text_out}");
    }
}
