//! Damage and its repair: `check` names what is lost and where, `--read-data-subset` slices
//! cover every pack, `repair index` and `repair snapshots` leave a repository that checks, the
//! surviving files restore, and a new backup of the same data heals the original snapshot.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use common::store::*;
use common::*;

/// A tree of many files over several 1 MiB packs.
fn tree(root: &Path) {
    for d in 0..3u64 {
        fs::create_dir_all(root.join(format!("d{d}"))).unwrap();
        for f in 0..5u64 {
            fs::write(root.join(format!("d{d}/f{f}")), pattern(180_000, 10 * d + f)).unwrap();
        }
    }
}

/// The number before `what` in `text`, e.g. 7 in "… 7 packs …".
fn count_before(text: &str, what: &str) -> u64 {
    let at = text.find(what).unwrap_or_else(|| panic!("no {what:?} in {text}"));
    let digits: String =
        text[..at].trim_end().chars().rev().take_while(|c| c.is_ascii_digit()).collect();
    digits.chars().rev().collect::<String>().replace(',', "").parse().unwrap()
}

#[test]
fn subsets_of_the_data_check_cover_every_pack_once() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    tree(&src);
    init_repo(&repo);
    backup_json(&repo, &src);
    let packs = repo_names(&repo, "data").len() as u64;
    assert!(packs >= 3, "too few packs ({packs}) for the test to mean anything");
    let mut read = 0;
    for k in 1..=3 {
        let out = store_ok(&repo, &["check", "--read-data-subset", &format!("{k}/3")]);
        read += count_before(&out, "packs and");
    }
    assert_eq!(read, packs, "slices 1/3 to 3/3 did not read every pack once");
    let all = store_ok(&repo, &["check", "--read-data-subset", "100%"]);
    assert_eq!(count_before(&all, "packs and"), packs);
    let none = store_ok(&repo, &["check", "--read-data-subset", "0%"]);
    assert_eq!(count_before(&none, "packs and"), 0);
    for bad in ["0/3", "4/3", "101%", "x"] {
        let out = store(&repo, &["check", "--read-data-subset", bad]);
        assert_eq!(out.code(), 2, "{bad} was accepted:\n{}", out.dump());
    }
}

#[test]
fn a_lost_pack_is_named_repaired_around_and_healed_by_the_next_backup() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    tree(&src);
    let source_look = look(&src);
    init_repo(&repo);
    backup_json(&repo, &src);
    let original = snapshot_of(&repo, &src);

    // Lose one data pack (the first that holds data rather than trees).
    let lost = repo_names(&repo, "data")
        .into_iter()
        .find(|name| {
            let bytes = fs::read(repo.join(name)).unwrap();
            bytes.len() > 100_000
        })
        .expect("a data pack");
    fs::remove_file(repo.join(&lost)).unwrap();

    let out = store(&repo, &["check"]);
    assert_eq!(out.code(), 1, "{}", out.dump());
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(text.contains(&lost), "check did not name the lost pack {lost}:\n{text}");
    // Each file that lost data is named with its path in the snapshot.
    let mut hurt: Vec<String> = text
        .lines()
        .filter(|l| l.contains("is in missing pack") || l.contains("not in the index"))
        // "dedup: error: snapshot ID: /PATH: data blob …"
        .filter_map(|l| l.split(": ").nth(3).map(|p| p.trim_start_matches('/').to_string()))
        .collect();
    hurt.sort();
    hurt.dedup();
    assert!(!hurt.is_empty(), "no file was named:\n{text}");

    // The index no longer claims the lost blobs; the snapshot still misses them.
    let repaired = store_ok(&repo, &["repair", "index"]);
    assert!(repaired.contains("indexed"), "{repaired}");
    let out = store(&repo, &["check"]);
    assert_eq!(out.code(), 1, "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in the index"));

    // A repaired copy leaves out exactly the files that lost data; the rest restores.
    let fixed = store_ok(&repo, &["repair", "snapshots"]);
    assert!(fixed.contains("repaired copy"), "{fixed}");
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(&repo, &["snapshots", "--json"])).unwrap();
    let copy = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tags"].as_array().is_some_and(|t| t.iter().any(|t| t == "repaired")))
        .expect("a repaired snapshot")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut expected: BTreeMap<Vec<u8>, Seen> = source_look.clone();
    let source_rel = src.strip_prefix("/").unwrap().to_string_lossy().into_owned();
    for path in &hurt {
        let rel = path.strip_prefix(&source_rel).unwrap_or(path).trim_start_matches('/');
        assert!(expected.remove(rel.as_bytes()).is_some(), "{rel} is not a file of the tree");
    }
    let target = dir.path().join("from-copy");
    let spec = format!("{}:{}", &copy[..8], src.display());
    store(
        &repo,
        &[OsStr::new("restore"), OsStr::new(&spec), "--target".as_ref(), target.as_os_str()],
    )
    .assert_code(0);
    let got = look(&target);
    for (path, seen) in &expected {
        // Directories' times change when their lost files are left out; files must be exact.
        if seen.kind == 'f' {
            assert_eq!(got.get(path), Some(seen), "{}", String::from_utf8_lossy(path));
        }
    }
    for path in &hurt {
        let rel = path.strip_prefix(&source_rel).unwrap_or(path).trim_start_matches('/');
        assert!(!got.contains_key(rel.as_bytes()), "{rel} was restored from lost data");
    }

    // A new backup of the same files stores the lost blobs again: the original heals.
    backup_json(&repo, &src);
    let out = store(&repo, &["check", "--read-data"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    let target = dir.path().join("healed");
    assert_restores(&repo, &original[..8], &src, &target, &source_look);
}

#[test]
fn forget_and_repair_killed_at_any_point_leave_a_sound_repository() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    tree(&src);
    let source_look = look(&src);
    init_repo(&repo);
    for _ in 0..4 {
        backup_json(&repo, &src);
    }
    let latest = snapshot_of(&repo, &src);
    for (round, delay_ms) in [0u64, 2, 5, 10, 20].into_iter().enumerate() {
        for args in [&["repair", "index"][..], &["forget", "--keep-last", "1"][..]] {
            let mut child = std::process::Command::new(BIN)
                .arg("store")
                .args(args)
                .arg("-r")
                .arg(&repo)
                .env("DEDUP_PASSWORD", PASSWORD)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let _ = child.kill();
            let _ = child.wait();
            let what = format!("{args:?} killed after {delay_ms} ms");
            let out = store(&repo, &["check"]);
            assert_eq!(out.code(), 0, "{what}:\n{}", out.dump());
            let target = dir.path().join(format!("r{round}-{}", args[0]));
            assert_restores(&repo, &latest[..8], &src, &target, &source_look);
        }
    }
    // Run to the end, then the repository is spotless.
    store_ok(&repo, &["repair", "index"]);
    store_ok(&repo, &["forget", "--keep-last", "1", "--prune"]);
    let out = store(&repo, &["check", "--read-data"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    assert!(out.stderr_lines().is_empty(), "{}", out.dump());
}
