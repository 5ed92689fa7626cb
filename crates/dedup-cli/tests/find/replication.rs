//! `dedup find --unique`, `--rf-over N`, `--rf-under N`: files by their number of copies.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// Three files with 1, 2 and 3 copies, and one with two hard-linked names and no copy.
fn tree(base: &Path) {
    write(base, "solo", &pattern(100, 1));
    write(base, "pair/1", &pattern(200, 2));
    write(base, "pair/2", &pattern(200, 2));
    for i in 1..=3 {
        write(base, &format!("triple/{i}"), &pattern(300, 3));
    }
    write(base, "linked/a", &pattern(400, 4));
    hardlink(base, "linked/a", "linked/b");
    write(base, "empty", b"");
}

fn unique_sets(r: &Report) -> Sets {
    let unique = r.raw.get("unique").and_then(Value::as_array).expect("a \"unique\" array");
    normalize(
        unique
            .iter()
            .map(|g| {
                g["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| decode_path(&f["path"]).unwrap())
                    .collect()
            })
            .collect(),
    )
}

#[test]
fn unique_lists_files_without_a_duplicate_with_all_their_names() {
    let t = tmp();
    tree(t.path());
    let out = find_json(t.path(), &["--unique", "."]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(unique_sets(&r), sets(&[&["./solo"], &["./linked/a", "./linked/b"]]));
    assert!(r.groups.is_empty(), "{:?}", r.sets());
    // Text: each unique file as a group of its names.
    let out = find(t.path(), &["--unique", "."]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "./linked/a\n./linked/b\n\n./solo\n\n");
}

#[test]
fn with_hard_links_as_duplicates_a_linked_file_is_not_unique() {
    let t = tmp();
    tree(t.path());
    let r = find_json(t.path(), &["--unique", "-H", "."]).json();
    assert_eq!(unique_sets(&r), sets(&[&["./solo"]]));
}

#[test]
fn rf_over_keeps_groups_with_more_copies() {
    let t = tmp();
    tree(t.path());
    let r = find_json(t.path(), &["--rf-over", "2", "."]).json();
    assert_eq!(r.sets(), sets(&[&["./triple/1", "./triple/2", "./triple/3"]]));
    assert!(r.raw.get("unique").is_none());
    let r = find_json(t.path(), &["--rf-over", "1", "."]).json();
    assert_eq!(r.groups.len(), 2);
}

#[test]
fn rf_under_lists_groups_with_fewer_copies_and_unique_files() {
    let t = tmp();
    tree(t.path());
    let r = find_json(t.path(), &["--rf-under", "3", "."]).json();
    assert_eq!(r.sets(), sets(&[&["./pair/1", "./pair/2"]]));
    assert_eq!(unique_sets(&r), sets(&[&["./solo"], &["./linked/a", "./linked/b"]]));
    // CSV marks unique files.
    let out = find(t.path(), &["--rf-under", "3", "--format", "csv", "."]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("group,size,path,dev,ino,mtime_ns,kind\n"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("3,100,./solo,") && l.ends_with(",unique")),
        "{text}"
    );
}

#[test]
fn files_that_could_not_be_read_are_not_called_unique() {
    if !require(
        is_root(),
        "files_that_could_not_be_read_are_not_called_unique",
        "needs root for setpriv",
    ) {
        return;
    }
    let t = tmp();
    tree(t.path());
    write(t.path(), "secret", &pattern(100, 1));
    chmod(&t.path().join("secret"), 0o000);
    chmod(t.path(), 0o755);
    let out = find_as_nobody(t.path(), &["--unique", "--format", "json", "."]);
    out.assert_code(1);
    let r = out.json();
    let all: Vec<Vec<u8>> = unique_sets(&r).into_iter().flatten().collect();
    assert!(!all.contains(&b"./secret".to_vec()) && !all.contains(&b"./solo".to_vec()), "{all:?}");
}

#[test]
fn unique_and_rf_bounds_conflict() {
    let t = tmp();
    find(t.path(), &["--unique", "--rf-over", "2", "."]).assert_code(2);
    find(t.path(), &["--rf-under", "0", "."]).assert_code(2);
}
