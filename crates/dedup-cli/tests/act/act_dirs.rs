//! The actions with `--dirs`: whole duplicated directories, each file re-checked before it is
//! changed, directories removed only once empty.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::act::*;
use common::*;

/// Archive/photos and its copy Downloads/photos, plus a file only Downloads has.
fn archive(d: &Path) {
    for at in ["Archive/photos", "Downloads/photos"] {
        write(d, &format!("{at}/a.jpg"), &pattern(50_000, 1));
        write(d, &format!("{at}/raw/b.cr2"), &pattern(90_000, 2));
        mkdir(d, &format!("{at}/raw/empty-dir"));
    }
    write(d, "Downloads/mine.txt", b"only here");
}

#[test]
fn remove_dirs_with_a_reference_removes_the_whole_copy() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let archive_before = contents(&d.join("Archive"));
    let out = dedup(d, &["remove", "--dirs", "--reference", "Archive", "Downloads"]);
    out.assert_code(0);
    assert!(!d.join("Downloads/photos").exists(), "{}", out.dump());
    assert_eq!(fs::read(d.join("Downloads/mine.txt")).unwrap(), b"only here");
    assert_same_contents(&archive_before, &d.join("Archive"), &out);
    assert!(d.join("Archive/photos/raw/empty-dir").is_dir());
    let lines = stdout(&out);
    assert!(
        lines.contains("remove Downloads/photos/a.jpg (kept: Archive/photos/a.jpg)"),
        "{lines}"
    );
    assert!(lines.contains("rmdir Downloads/photos (kept: Archive/photos)"), "{lines}");
    assert!(stderr(&out).contains("1 directory removed"), "{}", out.dump());
}

#[test]
fn dry_run_prints_the_same_plan_and_changes_nothing() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let before = contents(d);
    let dry = dedup(d, &["remove", "--dirs", "--dry-run", "--reference", "Archive", "Downloads"]);
    dry.assert_code(0);
    assert_same_contents(&before, d, &dry);
    assert!(d.join("Downloads/photos/raw/empty-dir").is_dir());
    let real = dedup(d, &["remove", "--dirs", "--reference", "Archive", "Downloads"]);
    real.assert_code(0);
    assert_eq!(stdout(&dry), stdout(&real));
}

#[test]
fn without_dirs_the_files_of_duplicated_directories_stay() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let report = d.join("r.json");
    save_report(d, &["--dirs", "Downloads", "Archive"], &report);
    let before = contents(&d.join("Downloads"));
    let out = dedup(d, &["remove", "--from", "r.json"]);
    out.assert_code(0);
    assert!(stderr(&out).contains("only with --dirs"), "{}", out.dump());
    assert_same_contents(&before, &d.join("Downloads"), &out);
}

#[test]
fn a_file_changed_since_the_report_is_skipped_and_its_directory_stays() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let report = d.join("r.json");
    save_report(d, &["--dirs", "Archive", "Downloads"], &report);
    // Archive comes first in the report, so Downloads/photos is the copy acted on.
    write(d, "Downloads/photos/raw/b.cr2", &pattern(90_000, 7));
    let out = dedup(d, &["remove", "--dirs", "--from", "r.json"]);
    out.assert_code(1);
    assert_eq!(fs::read(d.join("Downloads/photos/raw/b.cr2")).unwrap(), pattern(90_000, 7));
    assert!(!d.join("Downloads/photos/a.jpg").exists(), "the unchanged file goes");
    assert!(d.join("Downloads/photos").is_dir());
    assert!(d.join("Archive/photos/raw/b.cr2").exists());
    out.assert_message("skipped", "Downloads/photos/raw/b.cr2");
    out.assert_message("skipped", "directory not removed");
}

#[test]
fn an_entry_added_after_the_scan_keeps_the_directory() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let report = d.join("r.json");
    save_report(d, &["--dirs", "Archive", "Downloads"], &report);
    write(d, "Downloads/photos/raw/new.txt", b"written after the scan");
    let out = dedup(d, &["remove", "--dirs", "--from", "r.json"]);
    out.assert_code(1);
    assert_eq!(
        fs::read(d.join("Downloads/photos/raw/new.txt")).unwrap(),
        b"written after the scan"
    );
    assert!(!d.join("Downloads/photos/a.jpg").exists());
    out.assert_message("skipped", "Downloads/photos");
}

#[test]
fn dirs_needs_a_report_written_with_dirs() {
    let t = tmp();
    let d = t.path();
    archive(d);
    save_report(d, &["Archive", "Downloads"], &d.join("r.json"));
    let before = contents(d);
    let out = dedup(d, &["remove", "--dirs", "--from", "r.json"]);
    out.assert_code(2);
    assert_same_contents(&before, d, &out);
}

#[test]
fn link_dirs_links_each_file_and_keeps_the_directory() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let before = contents(d);
    let out = dedup(d, &["link", "--dirs", "Archive", "Downloads"]);
    out.assert_code(0);
    assert_same_contents(&before, d, &out);
    for f in ["photos/a.jpg", "photos/raw/b.cr2"] {
        let a = fs::metadata(d.join("Archive").join(f)).unwrap();
        let b = fs::metadata(d.join("Downloads").join(f)).unwrap();
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "{f} not linked");
    }
    assert!(d.join("Downloads/photos/raw/empty-dir").is_dir());
}

#[test]
fn move_dirs_moves_the_files_and_removes_the_emptied_directory() {
    let t = tmp();
    let d = t.path();
    archive(d);
    let out = dedup(d, &["move", "--dirs", "--to", "dups", "Archive", "Downloads"]);
    out.assert_code(0);
    assert!(!d.join("Downloads/photos").exists(), "{}", out.dump());
    assert_eq!(fs::read(d.join("dups/Downloads/photos/a.jpg")).unwrap(), pattern(50_000, 1));
    assert_eq!(fs::read(d.join("dups/Downloads/photos/raw/b.cr2")).unwrap(), pattern(90_000, 2));
    assert!(d.join("Archive/photos/a.jpg").exists());
}

#[test]
fn remove_dirs_removes_a_contained_directory_keeping_the_copies() {
    let t = tmp();
    let d = t.path();
    write(d, "old/x/1", &pattern(2000, 1));
    write(d, "old/2", &pattern(2000, 2));
    write(d, "new/all/1-renamed", &pattern(2000, 1));
    write(d, "new/all/deeper/2", &pattern(2000, 2));
    write(d, "new/all/more", &pattern(2000, 3));
    let before = contents(&d.join("new"));
    let out = dedup(d, &["remove", "--dirs", "."]);
    out.assert_code(0);
    assert!(!d.join("old").exists(), "{}", out.dump());
    assert_same_contents(&before, &d.join("new"), &out);
}

#[test]
fn three_copies_keep_one() {
    let t = tmp();
    let d = t.path();
    for at in ["a", "b", "c"] {
        write(d, &format!("{at}/f"), &pattern(3000, 5));
        write(d, &format!("{at}/s/g"), &pattern(3000, 6));
    }
    let out = dedup(d, &["remove", "--dirs", "a", "b", "c"]);
    out.assert_code(0);
    assert!(d.join("a/s/g").exists(), "the first PATH is kept: {}", out.dump());
    assert!(!d.join("b").exists() && !d.join("c").exists(), "{}", out.dump());
}

#[test]
fn hard_links_in_the_copy_are_removed_too() {
    let t = tmp();
    let d = t.path();
    write(d, "keep/f", &pattern(3000, 5));
    write(d, "keep/g", &pattern(4000, 6));
    hardlink(d, "keep/f", "copy/f");
    write(d, "copy/g", &pattern(4000, 6));
    let out = dedup(d, &["remove", "--dirs", "keep", "copy"]);
    out.assert_code(0);
    assert!(!d.join("copy").exists(), "{}", out.dump());
    assert_eq!(fs::read(d.join("keep/f")).unwrap(), pattern(3000, 5));
    assert_eq!(fs::metadata(d.join("keep/f")).unwrap().nlink(), 1);
}
