//! `dedup link` end to end, and what every action shares: the plan (kept file, --keep rules,
//! --reference, --isolate), --dry-run equal to the real run, the summary and the --log.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;

use common::act::*;
use common::*;

/// Three groups in two roots: big (3 copies, one already hard-linked to another), small, unique.
fn tree(dir: &std::path::Path) {
    let big = pattern(300_000, 1);
    write(dir, "a/big1", &big);
    write(dir, "a/deep/er/big2", &big);
    write(dir, "b/big3", &big);
    hardlink(dir, "b/big3", "b/big3-link");
    write(dir, "a/small1", b"small file");
    write(dir, "b/small2", b"small file");
    write(dir, "b/unique", &pattern(5000, 2));
}

#[test]
fn link_keeps_every_path_readable_and_frees_the_space_it_claims() {
    let t = tmp();
    let d = t.path();
    tree(d);
    let before = contents(d);
    // Freed: big2 and big3 (its two names, one inode) go; small2 goes.
    let expected_freed = allocated(&d.join("a/deep/er/big2"))
        + allocated(&d.join("b/big3"))
        + allocated(&d.join("b/small2"));
    let out = dedup(d, &["link", "a", "b"]);
    out.assert_code(0);
    assert_same_contents(&before, d, &out);
    let ino = |p: &str| fs::metadata(d.join(p)).unwrap().ino();
    for p in ["a/deep/er/big2", "b/big3", "b/big3-link"] {
        assert_eq!(ino(p), ino("a/big1"), "{p} not linked\n{}", out.dump());
    }
    assert_eq!(ino("b/small2"), ino("a/small1"));
    assert_ne!(ino("b/unique"), ino("a/big1"));
    let err = stderr(&out);
    let human = format!("{}", indicatif::HumanBytes(expected_freed));
    assert!(err.contains(&format!("4 files replaced by hard links, {human} freed")), "{err}");
    assert!(err.contains("share one inode"), "link must warn about shared metadata\n{err}");
    assert!(no_temp_names(d));
    // A second run finds nothing left to do.
    let again = dedup(d, &["link", "a", "b"]);
    again.assert_code(0);
    assert_eq!(stdout(&again), "");
}

#[test]
fn dry_run_prints_what_the_real_run_then_does_and_changes_nothing() {
    for action in ["link", "symlink", "remove"] {
        let t = tmp();
        let d = t.path();
        tree(d);
        let before = contents(d);
        let before_inodes = inodes(d);
        let dry = dedup(d, &[action, "--dry-run", "a", "b"]);
        dry.assert_code(0);
        assert_eq!(inodes(d), before_inodes, "{action} --dry-run changed something");
        assert_same_contents(&before, d, &dry);
        assert!(!dry.stdout.is_empty());
        let real = dedup(d, &[action, "a", "b"]);
        real.assert_code(0);
        assert_eq!(stdout(&dry), stdout(&real), "{action}: dry run and real run differ");
        if action != "remove" {
            assert_same_contents(&before, d, &real);
        }
    }
}

#[test]
fn log_records_every_change() {
    let t = tmp();
    let d = t.path();
    tree(d);
    let out = dedup(d, &["link", "--log", "log.jsonl", "a", "b"]);
    out.assert_code(0);
    let log = fs::read_to_string(d.join("log.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> =
        log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "{log}");
    let mut changed: Vec<&str> = lines
        .iter()
        .map(|l| {
            assert_eq!(l["action"], "link");
            assert_eq!(l["result"], "done");
            l["path"]["text"].as_str().unwrap()
        })
        .collect();
    changed.sort();
    assert_eq!(changed, ["a/deep/er/big2", "b/big3", "b/big3-link", "b/small2"]);
    assert!(lines.iter().map(|l| l["freed_bytes"].as_u64().unwrap()).sum::<u64>() > 0);
}

/// Runs `remove --dry-run` with extra args over a fresh tree and returns the removed paths.
fn removed(setup: &dyn Fn(&std::path::Path), args: &[&str]) -> Vec<String> {
    let t = tmp();
    setup(t.path());
    let out = dedup(t.path(), &[&["remove", "--dry-run"], args].concat());
    out.assert_code(0);
    let mut v: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.strip_prefix("remove ").unwrap().split(" (kept").next().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

fn aged(d: &std::path::Path) {
    let data = pattern(1000, 7);
    for (p, age) in [("r1/x/y/old", 3000), ("r1/new", 1000), ("r2/mid", 2000)] {
        let f = write(d, p, &data);
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
        fs::File::options().write(true).open(f).unwrap().set_modified(t).unwrap();
    }
}

#[test]
fn keep_rules_choose_the_kept_file() {
    let all = ["r1/new", "r1/x/y/old", "r2/mid"];
    let without =
        |kept: &str| all.iter().filter(|p| **p != kept).map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(removed(&aged, &["r1", "r2"]), without("r1/new"), "default: first path");
    assert_eq!(removed(&aged, &["--keep", "oldest", "r1", "r2"]), without("r1/x/y/old"));
    assert_eq!(removed(&aged, &["--keep", "newest", "r1", "r2"]), without("r1/new"));
    assert_eq!(removed(&aged, &["--keep", "deepest", "r1", "r2"]), without("r1/x/y/old"));
    assert_eq!(removed(&aged, &["--keep", "shallowest,oldest", "r1", "r2"]), without("r2/mid"));
    assert_eq!(removed(&aged, &["--keep", "first-root", "r2", "r1"]), without("r2/mid"));
    assert_eq!(removed(&aged, &["--prefer", "**/y/**", "r1", "r2"]), without("r1/x/y/old"));
}

#[test]
fn reference_files_are_kept_and_never_changed() {
    let refs = |d: &std::path::Path| {
        let data = pattern(4000, 3);
        write(d, "archive/a", &data);
        write(d, "archive/b", &data);
        write(d, "downloads/c", &data);
        write(d, "downloads/d", &data);
        // Only in the archive: left alone entirely.
        write(d, "archive/e", b"only archived twice");
        write(d, "archive/f", b"only archived twice");
    };
    assert_eq!(
        removed(&refs, &["--reference", "archive", "downloads"]),
        ["downloads/c", "downloads/d"]
    );
    let t = tmp();
    let d = t.path();
    refs(d);
    let archive_before = contents(&d.join("archive"));
    let out = dedup(d, &["remove", "--reference", "archive", "downloads"]);
    out.assert_code(0);
    assert_same_contents(&archive_before, &d.join("archive"), &out);
    assert!(!d.join("downloads/c").exists() && !d.join("downloads/d").exists());
    assert!(stderr(&out).contains("1 group left alone"), "{}", out.dump());
}

#[test]
fn isolate_only_acts_across_roots() {
    let two = |d: &std::path::Path| {
        let data = pattern(2000, 4);
        write(d, "r1/a", &data);
        write(d, "r1/b", &data);
        write(d, "r2/c", &data);
        write(d, "r1/same-root-1", b"dup within r1 only");
        write(d, "r1/same-root-2", b"dup within r1 only");
    };
    assert_eq!(removed(&two, &["--isolate", "r1", "r2"]), ["r2/c"]);
    assert_eq!(removed(&two, &["r1", "r2"]), ["r1/b", "r1/same-root-2", "r2/c"]);
}

#[test]
fn hard_links_are_not_made_across_file_systems() {
    let t = tmp();
    let Some(other) = Tmpfs::new("hard_links_are_not_made_across_file_systems") else { return };
    let data = pattern(10_000, 5);
    write(t.path(), "here", &data);
    write(&other.mnt, "there", &data);
    let before = contents(&other.mnt);
    let out = dedup(t.path(), &[std::path::Path::new("link"), t.path(), &other.mnt]);
    out.assert_code(1);
    out.assert_message("skipped", "there");
    assert!(stderr(&out).contains("another file system"), "{}", out.dump());
    assert_same_contents(&before, &other.mnt, &out);
}
