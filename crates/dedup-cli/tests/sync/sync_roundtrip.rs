//! `dedup sync` on an awkward tree: every kind of entry and name survives, in content and in
//! every preserved field; a second run changes nothing; the dry run lists exactly what the real
//! run then does.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::mirror::*;
use common::*;

fn awkward(s: &Path) {
    write(s, "plain", b"hello");
    write(s, "empty", b"");
    mkdir(s, "empty-dir");
    write_b(s, b"bad-\xff\xfe-name", b"not utf-8");
    write(s, "sp ace/\u{e9}t\u{e9}", &pattern(5000, 1));
    write(s, "links/a", &pattern(3000, 2));
    hardlink(s, "links/a", "links/b");
    hardlink(s, "links/a", "other/c");
    symlink(s, "../plain", "links/to-plain");
    symlink(s, "nowhere/at/all", "links/dangling");
    mkfifo(&s.join("fifo"));
    let sparse = fs::File::create(s.join("sparse")).unwrap();
    sparse.set_len(32 << 20).unwrap();
    std::os::unix::fs::FileExt::write_at(&sparse, b"data in the middle", 16 << 20).unwrap();
    let long = "n".repeat(255);
    let mut deep = String::new();
    for i in 0..40 {
        deep.push_str(&format!("level{i:02}-{}/", "d".repeat(60)));
    }
    write(s, &format!("{deep}{long}"), b"deep and long");
    set_xattr(&s.join("plain"), "user.comment", "kept");
    set_xattr(&s.join("empty-dir"), "user.dir", "too");
    chmod(&s.join("plain"), 0o640);
    chmod(&s.join("empty-dir"), 0o750);
    if is_root() {
        std::os::unix::fs::lchown(s.join("links/a"), Some(1234), Some(4321)).unwrap();
        std::os::unix::fs::lchown(s.join("links/to-plain"), Some(7), Some(8)).unwrap();
    }
    set_mtime(&s.join("plain"), 1_000_000_000, 123_456_789);
    set_mtime(&s.join("links/dangling"), 1_100_000_000, 987_654_321);
    set_mtime(&s.join("empty-dir"), 1_200_000_000, 555);
}

#[test]
fn an_awkward_tree_is_mirrored_in_every_field_and_a_rerun_changes_nothing() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    fs::create_dir(&s).unwrap();
    awkward(&s);
    let dry = sync(&[os(b"-n"), s.clone().into(), d.clone().into()]);
    dry.assert_code(0);
    assert!(!d.exists(), "a dry run creates nothing");
    let real = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    real.assert_code(0);
    // Lines and counts, bytes too (a symlink's target and a sparse file's holes included).
    assert_same_run(&dry, &real);
    assert_mirror(&s, &d);
    let m = fs::metadata(d.join("sparse")).unwrap();
    assert!(m.blocks() * 512 < 1 << 20, "sparse file inflated: {} blocks", m.blocks());
    assert_eq!(ino(&d.join("links/a")), ino(&d.join("other/c")), "hard links kept");
    assert!(temp_names(&d).is_empty());
    let again = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "a second run changed: {:?}", changes(&again));
    assert!(String::from_utf8_lossy(&again.stderr).contains("copied 0"), "{}", again.dump());
    assert_mirror(&s, &d);
}

#[test]
fn the_log_has_one_json_line_per_change_and_quiet_prints_nothing() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a/x", b"1");
    write_b(&s, b"a/\xff", b"2");
    let log = t.path().join("log.jsonl");
    let out = sync(&[os(b"-q"), os(b"--log"), log.clone().into(), s.clone().into(), d.into()]);
    out.assert_code(0);
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}", out.dump());
    let text = fs::read_to_string(&log).unwrap();
    let records: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = records.iter().map(|r| r["change"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "copy").count(), 2, "{text}");
    assert!(kinds.contains(&"mkdir"), "{text}");
    assert!(text.contains(r#""path":{"bytes":"#), "a non-UTF-8 path survives: {text}");
    assert!(text.contains(r#""bytes":1"#), "{text}");
}

/// A log that cannot be written (here /dev/full, which refuses every write with ENOSPC) is named
/// once with the reason, the mirror is still made, and the run is incomplete: both when the
/// error comes mid-run (more records than the log's buffer holds) and at the final flush.
#[test]
fn a_log_that_cannot_be_written_is_named_and_fails_the_run() {
    for files in [300, 1] {
        let t = tmp();
        let (s, d) = (t.path().join("src"), t.path().join("dst"));
        for i in 0..files {
            write(&s, &format!("dir/file-{i:04}"), b"x");
        }
        let out = sync(&[os(b"--log"), os(b"/dev/full"), s.clone().into(), d.clone().into()]);
        out.assert_code(1);
        let err = String::from_utf8_lossy(&out.stderr);
        let named: Vec<&str> = err.lines().filter(|l| l.contains("/dev/full")).collect();
        assert_eq!(named.len(), 1, "{}", out.dump());
        assert!(named[0].contains("No space left on device"), "{}", out.dump());
        assert!(named[0].contains("the log is incomplete"), "{}", out.dump());
        assert!(err.contains(&format!("copied {files}")), "{}", out.dump());
        assert_mirror(&s, &d);
    }
}

/// Change lines that cannot be written (`-v` with stdout on /dev/full) are named once, the
/// mirror is still made whole (no panic half way), and the run is incomplete.
#[test]
fn change_lines_that_cannot_be_written_are_named_and_fail_the_run() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    for i in 0..50 {
        write(&s, &format!("dir/file-{i:02}"), b"x");
    }
    let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = std::process::Command::new(BIN)
        .args([os(b"sync"), os(b"-v"), s.clone().into(), d.clone().into()])
        .stdout(full)
        .output()
        .unwrap();
    let out = Out { code: o.status.code(), stdout: o.stdout, stderr: o.stderr };
    out.assert_code(1);
    let err = String::from_utf8_lossy(&out.stderr);
    let named: Vec<&str> = err.lines().filter(|l| l.contains("standard output")).collect();
    assert_eq!(named.len(), 1, "{}", out.dump());
    assert!(named[0].contains("No space left on device"), "{}", out.dump());
    assert!(err.contains("copied 50"), "{}", out.dump());
    assert_mirror(&s, &d);
}

/// New files are created with their final mode where their owner is right from the start, and
/// their owner and mode are then set only where they differ: modes the umask would cut or that a
/// new file cannot be created with, other owners, and a destination directory whose set-group-ID
/// bit gives new files another group all still end as the source has them; so do directories
/// whose entries changed, and one whose mode alone changed.
#[test]
fn modes_and_owners_survive_the_creation_shortcuts() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let modes = [0o644, 0o600, 0o444, 0o777, 0o664, 0o4755, 0o2750, 0o1644, 0o400];
    for (i, mode) in modes.iter().enumerate() {
        write(&s, &format!("top/m{i}"), b"x");
        write(&s, &format!("sgid/m{i}"), b"y");
        chmod(&s.join(format!("top/m{i}")), *mode);
        chmod(&s.join(format!("sgid/m{i}")), *mode);
    }
    fs::create_dir_all(d.join("sgid")).unwrap();
    if is_root() {
        std::os::unix::fs::lchown(s.join("top/m0"), Some(1234), Some(0)).unwrap();
        std::os::unix::fs::lchown(s.join("top/m1"), Some(0), Some(4321)).unwrap();
        std::os::unix::fs::lchown(d.join("sgid"), None, Some(777)).unwrap();
    }
    chmod(&d.join("sgid"), 0o2775);
    sync(&[s.as_os_str(), d.as_os_str()]).assert_code(0);
    assert_mirror(&s, &d);

    write(&s, "top/new", b"z");
    chmod(&s.join("sgid"), 0o711);
    sync(&[s.as_os_str(), d.as_os_str()]).assert_code(0);
    assert_mirror(&s, &d);
}

/// Symlinks, FIFOs and devices with several links stay linked, as rsync -aHSX keeps them; a
/// rerun has nothing to do; one that stops being linked in SRC is split in DST.
#[test]
fn hard_linked_symlinks_fifos_and_devices_stay_linked() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    fs::create_dir(&s).unwrap();
    symlink(&s, "target/of/the/link", "sym");
    fs::hard_link(s.join("sym"), s.join("sym2")).unwrap();
    mkfifo(&s.join("fifo"));
    fs::hard_link(s.join("fifo"), s.join("sub-fifo2")).unwrap();
    let mut pairs = vec![("sym", "sym2"), ("fifo", "sub-fifo2")];
    if is_root() {
        let ok = std::process::Command::new("mknod")
            .arg(s.join("null"))
            .args(["c", "1", "3"])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        fs::hard_link(s.join("null"), s.join("null2")).unwrap();
        pairs.push(("null", "null2"));
    }
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    for (a, b) in &pairs {
        assert_eq!(ino(&d.join(a)), ino(&d.join(b)), "{a} and {b}\n{}", out.dump());
    }
    assert_eq!(fs::read_link(d.join("sym2")).unwrap(), Path::new("target/of/the/link"));
    assert_mirror(&s, &d);
    let again = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "{}", again.dump());
    // No longer linked in SRC: no longer linked in DST.
    fs::remove_file(s.join("sym2")).unwrap();
    symlink(&s, "target/of/the/link", "sym2");
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_ne!(ino(&d.join("sym")), ino(&d.join("sym2")), "{}", out.dump());
    assert_mirror(&s, &d);
}

/// Source entries named like our temporary files are not mirrored (a later run would take them
/// for leftovers of its own), and `-v` says so for each.
#[test]
fn source_entries_named_like_our_temporary_files_are_left_out_and_named() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"a");
    write(&s, ".dedup-new.0123456789abcdef", b"looks like ours");
    write(&s, "sub/.dedup-tmp.fedcba9876543210", b"so does this");
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    out.assert_message("note", ".dedup-new.0123456789abcdef");
    out.assert_message("note", "sub/.dedup-tmp.fedcba9876543210");
    assert!(temp_names(&d).is_empty(), "{:?}", temp_names(&d));
    assert_eq!(fs::read(d.join("a")).unwrap(), b"a");
    let quiet = sync(&[s.clone(), d.clone()]);
    quiet.assert_code(0);
    quiet.assert_no_message_about(".dedup-new");
}
