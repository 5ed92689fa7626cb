//! `dedup find --dirs`: duplicated directories as one entry, in every format.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// (kind, directory paths) of every entry of the report's `dirs` section.
fn dir_entries(r: &Report) -> Vec<(String, Vec<String>)> {
    let dirs = r.raw.get("dirs").and_then(Value::as_array).expect("a \"dirs\" array");
    dirs.iter()
        .map(|d| {
            let kind = d["kind"].as_str().unwrap().to_owned();
            let paths = d["dirs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| String::from_utf8(decode_path(&c["path"]).unwrap()).unwrap())
                .collect();
            (kind, paths)
        })
        .collect()
}

fn identical(paths: &[&str]) -> (String, Vec<String>) {
    ("identical".into(), paths.iter().map(|p| p.to_string()).collect())
}

/// A small photo tree: two files at the top, two in a subdirectory.
fn photos(base: &Path, at: &str) {
    write(base, &format!("{at}/a.jpg"), &pattern(5000, 1));
    write(base, &format!("{at}/b.jpg"), &pattern(3000, 2));
    write(base, &format!("{at}/raw/c.cr2"), &pattern(70_000, 3));
    write(base, &format!("{at}/raw/d.cr2"), &pattern(100, 4));
}

fn find_dirs(dir: &Path, args: &[&str]) -> Report {
    let mut all = vec!["--dirs"];
    all.extend_from_slice(args);
    let out = find_json(dir, &all);
    out.assert_code(0);
    out.json()
}

#[test]
fn identical_trees_are_one_group_and_their_files_are_not_listed_again() {
    let t = tmp();
    photos(t.path(), "a/photos");
    photos(t.path(), "b/photos-copy");
    let r = find_dirs(t.path(), &["a", "b"]);
    assert_eq!(dir_entries(&r), [identical(&["a/photos", "b/photos-copy"])]);
    assert!(r.groups.is_empty(), "files of duplicated directories listed again: {:?}", r.sets());
    let d = &r.raw["dirs"][0];
    assert_eq!(d["file_count"], 4);
    assert_eq!(d["size"], 5000 + 3000 + 70_000 + 100);
    // Files are aligned: the i-th file of each directory has the same relative path.
    let files = |i: usize| -> Vec<String> {
        d["dirs"][i]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| String::from_utf8(decode_path(&f["path"]).unwrap()).unwrap())
            .collect()
    };
    assert_eq!(
        files(0),
        ["a/photos/a.jpg", "a/photos/b.jpg", "a/photos/raw/c.cr2", "a/photos/raw/d.cr2"]
    );
    let rel: Vec<String> =
        files(1).iter().map(|p| p.replace("b/photos-copy", "a/photos")).collect();
    assert_eq!(rel, files(0));
    // The totals still count every duplicate found.
    assert_eq!(r.summary.groups, 4);
    assert_eq!(r.summary.redundant_files, 4);
}

#[test]
fn without_dirs_the_report_has_no_dirs_section_and_lists_the_files() {
    let t = tmp();
    photos(t.path(), "a");
    photos(t.path(), "b");
    let out = find_json(t.path(), &["."]);
    let r = out.json();
    assert!(r.raw.get("dirs").is_none());
    assert_eq!(r.groups.len(), 4);
}

#[test]
fn one_byte_one_extra_empty_file_or_one_renamed_file_makes_them_different() {
    for case in ["byte", "empty", "renamed", "extra-empty-dir"] {
        let t = tmp();
        photos(t.path(), "a");
        photos(t.path(), "b");
        match case {
            "byte" => {
                write(t.path(), "b/raw/c.cr2", &flip(&pattern(70_000, 3), 69_999));
            }
            "empty" => {
                write(t.path(), "b/raw/new-empty", b"");
            }
            "renamed" => {
                std::fs::rename(t.path().join("b/raw/d.cr2"), t.path().join("b/raw/e.cr2"))
                    .unwrap();
            }
            _ => {
                mkdir(t.path(), "b/raw/nothing");
            }
        }
        let r = find_dirs(t.path(), &["."]);
        let entries = dir_entries(&r);
        assert!(
            !entries.iter().any(|(k, p)| k == "identical" && p.contains(&"./a".to_string())),
            "{case}: a and b reported identical: {entries:?}"
        );
        // The files that are still duplicates are still reported somewhere.
        assert!(r.contains("./a/a.jpg") || !entries.is_empty(), "{case}: {:?}", r.sets());
    }
}

#[test]
fn equal_subdirectories_of_different_trees_are_reported() {
    let t = tmp();
    photos(t.path(), "a");
    photos(t.path(), "b");
    write(t.path(), "b/extra.txt", b"only in b");
    let r = find_dirs(t.path(), &["."]);
    // a's files all exist under b (b has one more file): a is contained in b.
    assert_eq!(dir_entries(&r), [("contained".to_string(), vec!["./a".into(), "./b".into()])]);
    assert!(r.groups.is_empty(), "{:?}", r.sets());
}

#[test]
fn nested_duplicates_report_only_the_outermost() {
    let t = tmp();
    photos(t.path(), "x/2019/trip");
    photos(t.path(), "x/2019/home");
    write(t.path(), "x/2019/notes.txt", b"notes");
    std::process::Command::new("cp").args(["-a", "x", "y"]).current_dir(t.path()).status().unwrap();
    let r = find_dirs(t.path(), &["x", "y"]);
    // x ≡ y (roots); inside x, trip ≡ home is a duplicate of its own.
    assert_eq!(
        dir_entries(&r),
        [identical(&["x", "y"]), identical(&["x/2019/home", "x/2019/trip"])]
    );
    assert!(r.groups.is_empty(), "{:?}", r.sets());
}

#[test]
fn three_copies_are_one_group_of_three() {
    let t = tmp();
    for d in ["one", "two", "three"] {
        photos(t.path(), d);
    }
    let r = find_dirs(t.path(), &["."]);
    assert_eq!(dir_entries(&r), [identical(&["./one", "./three", "./two"])]);
}

#[test]
fn a_third_partial_copy_is_a_group_of_its_own() {
    let t = tmp();
    photos(t.path(), "a");
    photos(t.path(), "b");
    photos(t.path(), "c");
    std::fs::remove_file(t.path().join("c/a.jpg")).unwrap();
    let r = find_dirs(t.path(), &["."]);
    // c is a and b but for one file: all its files exist under a.
    assert_eq!(
        dir_entries(&r),
        [identical(&["./a", "./b"]), ("contained".into(), vec!["./c".into(), "./a".into()])]
    );
    assert!(r.groups.is_empty(), "{:?}", r.sets());
}

#[test]
fn empty_directories_are_never_duplicates() {
    let t = tmp();
    mkdir(t.path(), "e1/sub");
    mkdir(t.path(), "e2/sub");
    write(t.path(), "e3/empty", b"");
    write(t.path(), "e4/empty", b"");
    let r = find_dirs(t.path(), &["."]);
    assert_eq!(dir_entries(&r), Vec::<(String, Vec<String>)>::new());
}

#[test]
fn hard_links_inside_directories_are_the_same_content() {
    let t = tmp();
    write(t.path(), "a/f", &pattern(4000, 9));
    write(t.path(), "a/g", &pattern(4000, 10));
    hardlink(t.path(), "a/f", "b/f");
    write(t.path(), "b/g", &pattern(4000, 10));
    let r = find_dirs(t.path(), &["."]);
    assert_eq!(dir_entries(&r), [identical(&["./a", "./b"])]);
}

#[test]
fn symlinks_inside_directories_must_match_by_target() {
    let t = tmp();
    photos(t.path(), "a");
    photos(t.path(), "b");
    symlink(t.path(), "a.jpg", "a/link");
    symlink(t.path(), "a.jpg", "b/link");
    let r = find_dirs(t.path(), &["."]);
    assert_eq!(dir_entries(&r), [identical(&["./a", "./b"])]);

    std::fs::remove_file(t.path().join("b/link")).unwrap();
    symlink(t.path(), "b.jpg", "b/link");
    let r = find_dirs(t.path(), &["."]);
    assert!(!dir_entries(&r).contains(&identical(&["./a", "./b"])), "{:?}", dir_entries(&r));

    std::fs::remove_file(t.path().join("b/link")).unwrap();
    let r = find_dirs(t.path(), &["."]);
    assert!(!dir_entries(&r).contains(&identical(&["./a", "./b"])), "{:?}", dir_entries(&r));
}

#[test]
fn a_directory_is_not_its_own_duplicate_through_overlapping_roots() {
    let t = tmp();
    photos(t.path(), "a/p");
    let r = find_dirs(t.path(), &["a", "a/p"]);
    assert_eq!(dir_entries(&r), Vec::<(String, Vec<String>)>::new());
}

#[test]
fn directories_with_unreadable_parts_are_not_duplicates() {
    if !require(
        is_root(),
        "directories_with_unreadable_parts_are_not_duplicates",
        "needs root for setpriv",
    ) {
        return;
    }
    let t = tmp();
    photos(t.path(), "a");
    photos(t.path(), "b");
    write(t.path(), "a/secret/s", b"s");
    write(t.path(), "b/secret/s", b"s");
    chmod(&t.path().join("b/secret"), 0o000);
    chmod(t.path(), 0o755);
    let out = run(assert_cmd::Command::new("setpriv")
        .current_dir(t.path())
        .timeout(TIMEOUT)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(["find", "--dirs", "--format", "json", "."]));
    chmod(&t.path().join("b/secret"), 0o755);
    out.assert_code(1);
    let r = out.json();
    assert!(
        !dir_entries(&r).iter().any(|(_, p)| p.contains(&"./b".to_string())),
        "b has an unreadable part: {:?}",
        dir_entries(&r)
    );
}

#[test]
fn text_and_csv_show_the_directories() {
    let t = tmp();
    photos(t.path(), "a");
    photos(t.path(), "b");
    let out = find(t.path(), &["--dirs", "."]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8(out.stdout.clone()).unwrap(),
        "# identical directories: 4 files, 78100 bytes in each\n./a/\n./b/\n\n"
    );
    let out = find(t.path(), &["--dirs", "-0", "."]);
    assert_eq!(out.stdout, b"./a/\0./b/\0\0");
    let out = find(t.path(), &["--dirs", "--format", "csv", "."]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "group,size,path,dev,ino,mtime_ns,kind\n1,78100,./a,,,,identical_dir\n1,78100,./b,,,,identical_dir\n"
    );
}

#[test]
fn contained_directories_name_the_file_count() {
    let t = tmp();
    write(t.path(), "old/x/1", &pattern(2000, 1));
    write(t.path(), "old/2", &pattern(2000, 2));
    write(t.path(), "new/all/1-renamed", &pattern(2000, 1));
    write(t.path(), "new/all/deeper/2", &pattern(2000, 2));
    write(t.path(), "new/all/more", &pattern(2000, 3));
    let out = find(t.path(), &["--dirs", "."]);
    out.assert_code(0);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "# all 2 files (4000 bytes) of the first directory also exist under the second\n\
             ./old/\n./new/all/\n\n"
        ),
        "{text}"
    );
}
