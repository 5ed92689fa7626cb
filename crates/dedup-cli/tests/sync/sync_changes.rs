//! Change detection: what cp -u and rsync's one-second comparison miss is found, and a change of
//! metadata alone is made without copying.

use crate::common;

use std::fs;
use std::path::Path;

use common::mirror::*;
use common::*;

fn run_ok(s: &Path, d: &Path, extra: &[&str]) -> Out {
    let mut args: Vec<std::ffi::OsString> = vec![os(b"-v")];
    args.extend(extra.iter().map(|a| os(a.as_bytes())));
    args.push(s.into());
    args.push(d.into());
    let out = sync(&args);
    out.assert_code(0);
    out
}

#[test]
fn same_size_edits_in_the_same_second_and_older_replacements_are_copied() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", b"first version");
    write(&s, "g", b"g one");
    run_ok(&s, &d, &[]);
    // Same size, rewritten at once: within the same second (and most likely the same tick).
    write(&s, "f", b"other version");
    // Replaced by an older file of the same size: its time goes back.
    write(&s, "g", b"g two");
    set_mtime(&s.join("g"), 1_500_000_000, 0);
    let out = run_ok(&s, &d, &[]);
    assert_eq!(changes(&out), ["copy f", "copy g"], "{}", out.dump());
    assert_mirror(&s, &d);
}

/// A copy written within a clock tick of its source's change cannot trust the stamps: an edit
/// of the same size in that tick leaves them alike. A stamp in the future stands for that tick
/// here (every copy is made "right after" it, whatever the machine's speed), and the edit keeps
/// it: only the bytes, read from both sides, can tell.
#[test]
fn a_same_size_edit_that_keeps_a_racily_clean_copys_stamp_is_found_by_content() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let future = now.as_secs() as i64 + 3600;
    write(&s, "f", b"first version");
    write(&s, "same", b"never edited");
    set_mtime(&s.join("f"), future, 123_456_789);
    set_mtime(&s.join("same"), future, 123_456_789);
    run_ok(&s, &d, &[]);
    write(&s, "f", b"other version");
    set_mtime(&s.join("f"), future, 123_456_789);
    let out = run_ok(&s, &d, &[]);
    assert_eq!(changes(&out), ["copy f"], "{}", out.dump());
    assert_mirror(&s, &d);
    // Compared again and found alike, nothing is copied.
    let out = run_ok(&s, &d, &[]);
    assert!(changes(&out).iter().all(|c| !c.starts_with("copy")), "{}", out.dump());
    assert_mirror(&s, &d);
}

/// Many racily clean copies at once (a run right after a build that touched every file) are
/// compared on several threads where the machine has them: every edit among them is still
/// found, and each only once, in the plan's order; `--dry-run` tells the same.
#[test]
fn many_racily_clean_copies_are_compared_and_every_edit_among_them_is_found() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let future = now.as_secs() as i64 + 3600;
    let name = |i: usize| format!("dir{}/f{i:02}", i % 3);
    for i in 0..40 {
        write(&s, &name(i), &pattern(3_000 + i * 100, i as u64));
        set_mtime(&s.join(name(i)), future, 123_456_789);
    }
    run_ok(&s, &d, &[]);
    let edited = [3, 17, 38];
    for i in edited {
        let mut bytes = pattern(3_000 + i * 100, i as u64);
        bytes[i] ^= 0xff;
        write(&s, &name(i), &bytes);
        set_mtime(&s.join(name(i)), future, 123_456_789);
    }
    let mut want: Vec<String> = edited.iter().map(|&i| format!("copy {}", name(i))).collect();
    want.sort();
    let dry = run_ok(&s, &d, &["--dry-run"]);
    let mut planned = changes(&dry);
    planned.sort();
    assert_eq!(planned, want, "{}", dry.dump());
    let out = run_ok(&s, &d, &[]);
    let mut made = changes(&out);
    made.sort();
    assert_eq!(made, want, "{}", out.dump());
    assert_mirror(&s, &d);
}

#[test]
fn a_permission_change_updates_metadata_without_copying() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", &pattern(10_000, 3));
    set_mtime(&s.join("f"), 1_600_000_000, 1);
    run_ok(&s, &d, &[]);
    let before = ino(&d.join("f"));
    chmod(&s.join("f"), 0o600);
    let out = run_ok(&s, &d, &[]);
    assert_eq!(changes(&out), ["update f"], "{}", out.dump());
    assert_eq!(ino(&d.join("f")), before, "metadata only: the same file");
    assert_mirror(&s, &d);
    set_xattr(&s.join("f"), "user.tag", "new");
    let out = run_ok(&s, &d, &[]);
    assert_eq!(changes(&out), ["update f"], "an attribute alone: {}", out.dump());
    assert_eq!(ino(&d.join("f")), before);
    assert_mirror(&s, &d);
}

#[test]
fn a_file_becomes_a_directory_and_back_and_a_symlink_is_retargeted() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "x", b"a file");
    write(&s, "y/inside", b"in a dir");
    symlink(&s, "x", "link");
    run_ok(&s, &d, &[]);
    fs::remove_file(s.join("x")).unwrap();
    write(&s, "x/now-inside", b"x is a directory now");
    fs::remove_dir_all(s.join("y")).unwrap();
    write(&s, "y", b"y is a file now");
    fs::remove_file(s.join("link")).unwrap();
    symlink(&s, "y", "link");
    // Without --delete the non-empty directory y cannot become a file: refused, exit 1.
    let refused = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    refused.assert_code(1);
    refused.assert_message("error", "--delete replaces it");
    assert!(d.join("y/inside").exists());
    run_ok(&s, &d, &["--delete"]);
    assert_mirror(&s, &d);
    assert!(run_ok(&s, &d, &["--delete"]).stdout.is_empty());
}

#[test]
fn a_destination_symlink_is_never_written_through() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let outside = t.path().join("outside");
    write(&outside, "victim", b"must stay");
    write(&s, "dir/victim", b"from the source");
    fs::create_dir_all(&d).unwrap();
    symlink(&d, &outside.to_string_lossy(), "dir");
    run_ok(&s, &d, &[]);
    assert_eq!(fs::read(outside.join("victim")).unwrap(), b"must stay");
    assert_mirror(&s, &d);
}

fn ctime_ns(p: &Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(p).unwrap();
    m.ctime() * 1_000_000_000 + m.ctime_nsec()
}

/// A rerun over an exact mirror writes nothing, not even the times of copies made right after
/// their source changed (racily clean: compared by content, then left as they are); the run
/// that made such a copy settles it itself once the window has passed, so later runs trust it.
#[test]
fn a_run_with_nothing_to_do_writes_nothing() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    write(&s, "just-written", &pattern(7_000, 1));
    write(&s, "future", &pattern(8_000, 2));
    set_mtime(&s.join("future"), now.as_secs() as i64 + 3600, 123_456_789);
    run_ok(&s, &d, &[]);
    let before: Vec<i64> = ["just-written", "future", "."].map(|p| ctime_ns(&d.join(p))).into();
    for _ in 0..2 {
        let out = run_ok(&s, &d, &[]);
        assert!(changes(&out).is_empty(), "{}", out.dump());
        let after: Vec<i64> = ["just-written", "future", "."].map(|p| ctime_ns(&d.join(p))).into();
        assert_eq!(before, after, "a run with nothing to do changed DST\n{}", out.dump());
    }
    assert_mirror(&s, &d);
}

/// The same on a read-only DST: an exact mirror is nothing to do, exit 0.
#[test]
fn an_exact_mirror_on_a_read_only_file_system_is_nothing_to_do() {
    let test = "an_exact_mirror_on_a_read_only_file_system_is_nothing_to_do";
    if !require(is_root(), test, "a read-only bind mount needs root") {
        return;
    }
    let t = tmp();
    let (s, d, ro) = (t.path().join("src"), t.path().join("dst"), t.path().join("ro"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    write(&s, "future", &pattern(8_000, 2));
    set_mtime(&s.join("future"), now.as_secs() as i64 + 3600, 123_456_789);
    write(&s, "plain", b"plain");
    run_ok(&s, &d, &[]);
    fs::create_dir(&ro).unwrap();
    let mounted = Mounted::new(&[os(b"--bind"), d.clone().into()], &ro);
    if !require(mounted.is_some(), test, "mount --bind failed") {
        return;
    }
    let remounted = Mounted::new(&["-o", "remount,bind,ro"], &ro);
    assert!(remounted.is_some(), "remount read-only failed");
    std::mem::forget(remounted);
    let out = run_ok(&s, &ro, &[]);
    assert!(changes(&out).is_empty(), "{}", out.dump());
}
