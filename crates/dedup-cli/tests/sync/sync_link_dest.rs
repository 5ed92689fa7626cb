//! `--link-dest DIR`: resolved against DST when relative (as rsync does), warned about when it
//! cannot be used; files unchanged against DIR's copy are linked, by content with `-c`; a rerun
//! has nothing left to do and leaves no temporary name.

use crate::common;

use std::fs;
use std::path::Path;

use common::mirror::*;
use common::*;

fn run(flags: &[&str], s: &Path, d: &Path) -> Out {
    let mut args: Vec<std::ffi::OsString> = flags.iter().map(|f| os(f.as_bytes())).collect();
    args.push(s.into());
    args.push(d.into());
    sync(&args)
}

/// day1 mirrors the source; then `f` changes in content only (same size and time), `g` not.
fn two_days(t: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (s, day1) = (t.join("src"), t.join("day1"));
    write(&s, "f", &pattern(10_000, 1));
    write(&s, "g", &pattern(12_000, 2));
    set_mtime(&s.join("f"), 1_600_000_000, 111);
    set_mtime(&s.join("g"), 1_600_000_000, 222);
    run(&[], &s, &day1).assert_code(0);
    write(&s, "f", &flip(&pattern(10_000, 1), 5_000));
    set_mtime(&s.join("f"), 1_600_000_000, 111);
    (s, day1)
}

#[test]
fn a_link_dest_rerun_settles_and_a_relative_one_is_found_from_dst() {
    let t = tmp();
    let (s, day1) = two_days(t.path());
    let day2 = t.path().join("day2");
    // Relative: below DST's parent, as rsync reads it, not the working directory's.
    let out = run(&["-v", "--link-dest", "../day1"], &s, &day2);
    out.assert_code(0);
    let lines = changes(&out);
    assert!(lines.contains(&"link-dest g <- g".to_owned()), "{}", out.dump());
    assert_eq!(ino(&day2.join("g")), ino(&day1.join("g")));
    for _ in 0..2 {
        let again = run(&["-v", "--link-dest", "../day1"], &s, &day2);
        again.assert_code(0);
        assert!(changes(&again).is_empty(), "a rerun has nothing to do\n{}", again.dump());
        assert!(temp_names(&day2).is_empty(), "{:?}", temp_names(&day2));
    }
}

#[test]
fn checksum_link_dest_links_what_is_identical_and_copies_what_is_not() {
    let t = tmp();
    let (s, day1) = two_days(t.path());
    let day3 = t.path().join("day3");
    let ld = day1.to_string_lossy().into_owned();
    let out = run(&["-v", "-c", "--link-dest", &ld], &s, &day3);
    out.assert_code(0);
    assert_eq!(changes(&out), ["copy f", "link-dest g <- g", "mkdir ."], "{}", out.dump());
    assert_eq!(ino(&day3.join("g")), ino(&day1.join("g")));
    assert_eq!(fs::read(day3.join("f")).unwrap(), fs::read(s.join("f")).unwrap());
    let again = run(&["-v", "-c", "--link-dest", &ld], &s, &day3);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "{}", again.dump());
    assert!(temp_names(&day3).is_empty());
}

#[test]
fn a_link_dest_that_does_not_exist_is_warned_about_and_files_are_copied() {
    let t = tmp();
    let (s, _) = two_days(t.path());
    let d = t.path().join("dst");
    let out = run(&["-v", "--link-dest", "../no-such-day"], &s, &d);
    out.assert_code(0);
    out.assert_message("warning", "no-such-day");
    assert_eq!(changes(&out), ["copy f", "copy g", "mkdir ."], "{}", out.dump());
    assert_mirror(&s, &d);
}

/// A relative `--link-dest` names a directory below DST; with `--delete` that directory was an
/// entry SRC lacks: its files were moved into the mirror (a rename is cheaper than a link) and
/// the rest deleted, so the previous day's tree the run was told to link against was gone. It is
/// now left out of the mirror on both sides, as a `--backup-dir` inside DST is.
#[test]
fn a_link_dest_inside_dst_is_never_consumed_by_delete() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"a");
    write(&d, "prev/a", b"a");
    write(&d, "prev/only-in-prev", b"kept");
    write(&d, "stale", b"goes");
    let ino = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap());
    let before = ino(&d.join("prev/a"));
    run(&["--delete", "--link-dest", "prev"], &s, &d).assert_code(0);
    assert_eq!(fs::read(d.join("prev/a")).unwrap(), b"a", "the link-dest tree lost a file");
    assert_eq!(fs::read(d.join("prev/only-in-prev")).unwrap(), b"kept");
    assert_eq!(ino(&d.join("prev/a")), before);
    assert_eq!(fs::read(d.join("a")).unwrap(), b"a");
    assert!(!d.join("stale").exists());
}
