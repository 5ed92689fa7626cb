//! Files that change between the scan (the saved report) and the action: modified, replaced by
//! another file, by a symlink or a directory, deleted. Every action must skip exactly those, say
//! why, leave them as they now are, still act on the rest, and exit with status 1.

use crate::common;

use std::fs;
use std::path::Path;

use common::act::*;
use common::*;

/// A group: keep/k and five duplicates t1..t5 that the test then disturbs.
fn setup(d: &Path) -> Vec<u8> {
    let data = pattern(200_000, 11);
    write(d, "tree/keep/k", &data);
    for i in 1..=5 {
        write(d, &format!("tree/t{i}"), &data);
    }
    save_report(d, &["tree"], &d.join("report.json"));
    data
}

fn disturb(d: &Path, data: &[u8]) {
    // t1 modified in place (same size), t2 replaced by another file with the same bytes,
    // t3 replaced by a symlink to the kept file, t4 deleted, t5 replaced by a directory.
    fs::write(d.join("tree/t1"), flip(data, 1000)).unwrap();
    // (created before the old one goes, so the inode number cannot be reused)
    fs::write(d.join("tree/t2.new"), data).unwrap();
    fs::rename(d.join("tree/t2.new"), d.join("tree/t2")).unwrap();
    fs::remove_file(d.join("tree/t3")).unwrap();
    symlink(d, "keep/k", "tree/t3");
    fs::remove_file(d.join("tree/t4")).unwrap();
    fs::remove_file(d.join("tree/t5")).unwrap();
    mkdir(d, "tree/t5");
    write(d, "tree/t5/inside", b"a directory now");
}

fn check_races(action: &[&str]) {
    let t = tmp();
    let d = t.path();
    let data = setup(d);
    // One untouched duplicate that must still be acted on.
    write(d, "tree/z-untouched", &data);
    save_report(d, &["tree"], &d.join("report.json"));
    disturb(d, &data);
    let before = contents(&d.join("tree"));
    let out = dedup(d, &[action, &["--from", "report.json"]].concat());
    out.assert_code(1);
    for (p, why) in [
        ("tree/t1", "modified"),
        ("tree/t2", "replaced"),
        ("tree/t3", "symbolic link"),
        ("tree/t4", "no longer exists"),
        ("tree/t5", "directory"),
    ] {
        let found = out
            .stderr_lines()
            .iter()
            .any(|l| l.starts_with("dedup: skipped: ") && l.contains(p) && l.contains(why));
        assert!(found, "{action:?}: no skip of {p} saying {why:?}\n{}", out.dump());
    }
    // The disturbed paths are exactly as the test left them.
    let after = contents(&d.join("tree"));
    for p in ["t1", "t2", "t3", "t5/inside"] {
        assert_eq!(before.get(p.as_bytes()), after.get(p.as_bytes()), "{action:?} touched {p}");
    }
    assert_eq!(fs::read(d.join("tree/keep/k")).unwrap(), data);
    assert!(fs::symlink_metadata(d.join("tree/t3")).unwrap().file_type().is_symlink());
    assert!(!d.join("tree/t4").exists());
    // The untouched duplicate was acted on.
    assert!(stdout(&out).contains("tree/z-untouched"), "{action:?}\n{}", out.dump());
    assert!(no_temp_names(d));
}

#[test]
fn link_skips_files_changed_since_the_report() {
    check_races(&["link"]);
}

#[test]
fn symlink_skips_files_changed_since_the_report() {
    check_races(&["symlink"]);
}

#[test]
fn remove_skips_files_changed_since_the_report() {
    check_races(&["remove"]);
}

#[test]
fn move_skips_files_changed_since_the_report() {
    let t = tmp();
    let dest = t.path().join("moved");
    check_races(&["move", "--to", dest.to_str().unwrap()]);
}

#[test]
fn a_changed_kept_file_is_never_the_one_kept() {
    let t = tmp();
    let d = t.path();
    let data = setup(d);
    fs::write(d.join("tree/keep/k"), flip(&data, 5)).unwrap();
    let out = dedup(d, &["remove", "--from", "report.json"]);
    out.assert_code(1);
    out.assert_message("skipped", "tree/keep/k");
    assert_eq!(fs::read(d.join("tree/keep/k")).unwrap(), flip(&data, 5));
    // One of the others is kept; a group is never reduced to zero copies.
    let left: Vec<_> = (1..=5).filter(|i| d.join(format!("tree/t{i}")).exists()).collect();
    assert_eq!(left.len(), 1, "{}", out.dump());
    assert_eq!(fs::read(d.join(format!("tree/t{}", left[0]))).unwrap(), data);
}

#[test]
fn ctime_change_alone_is_detected() {
    let t = tmp();
    let d = t.path();
    setup(d);
    // chmod changes only the ctime: the file may have been rewritten and its mtime put back.
    std::thread::sleep(std::time::Duration::from_millis(20));
    chmod(&d.join("tree/t1"), 0o600);
    let out = dedup(d, &["remove", "--from", "report.json"]);
    out.assert_code(1);
    out.assert_message("skipped", "tree/t1");
    assert!(d.join("tree/t1").exists());
}

#[test]
fn reports_without_ctime_are_checked_against_a_fresh_stat() {
    let t = tmp();
    let d = t.path();
    let data = setup(d);
    let mut v: serde_json::Value =
        serde_json::from_slice(&fs::read(d.join("report.json")).unwrap()).unwrap();
    for f in v["groups"][0]["files"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("ctime_ns");
    }
    fs::write(d.join("old.json"), v.to_string()).unwrap();
    fs::write(d.join("tree/t1"), flip(&data, 0)).unwrap();
    let out = dedup(d, &["link", "--from", "old.json"]);
    out.assert_code(1);
    out.assert_message("skipped", "tree/t1");
    assert_eq!(fs::read(d.join("tree/t1")).unwrap(), flip(&data, 0));
    assert_eq!(fs::read(d.join("tree/t2")).unwrap(), data);
}
