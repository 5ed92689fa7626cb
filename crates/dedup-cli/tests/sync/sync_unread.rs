//! What the source could not be read in is unknown: nothing the destination has there is moved
//! or deleted, the exit status says 1 (2 when SRC itself cannot be listed, with nothing made),
//! and the dry run prints and counts exactly what the real run then does. Run as user nobody on
//! trees partly owned by root, as a user meets them.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::mirror::*;
use common::*;

/// A temporary directory that nobody can enter.
fn open_tmp(test: &str) -> Option<tempfile::TempDir> {
    if !require(is_root(), test, "needs root (to run as nobody via setpriv)") {
        return None;
    }
    let t = tmp();
    chmod(t.path(), 0o755);
    Some(t)
}

fn cp_p(from: &Path, to: &Path) {
    let ok = Command::new("cp").arg("-rp").arg(from).arg(to).status().unwrap().success();
    assert!(ok, "cp -rp {from:?} {to:?}");
}

fn args(flags: &[&str], s: &Path, d: &Path) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = flags.iter().map(|f| os(f.as_bytes())).collect();
    v.push(s.into());
    v.push(d.into());
    v
}

/// The case: two source directories become listable but their entries cannot be
/// examined (root's, mode 744), and copies of what they hold appear elsewhere in SRC. Their
/// destination copies must stay where they are: neither renamed to the copies' names nor
/// deleted.
#[test]
fn entries_that_cannot_be_examined_keep_their_destination_copies_in_place() {
    let Some(t) =
        open_tmp("entries_that_cannot_be_examined_keep_their_destination_copies_in_place")
    else {
        return;
    };
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "c/f1", &pattern(20_000, 1));
    for i in 1..=3 {
        write(&s, &format!("c2/g{i}"), &pattern(9_000 + i, 10 + i as u64));
    }
    write(&s, "o", b"other");
    fs::create_dir(&d).unwrap();
    give_to_nobody(&s);
    give_to_nobody(&d);
    sync_as_nobody(&args(&[], &s, &d)).assert_code(0);
    cp_p(&s.join("c/f1"), &s.join("new-file"));
    cp_p(&s.join("c2"), &s.join("c2-copy"));
    give_to_nobody(&s.join("new-file"));
    give_to_nobody(&s.join("c2-copy"));
    for dir in ["c", "c2"] {
        std::os::unix::fs::chown(s.join(dir), Some(0), Some(0)).unwrap();
        chmod(&s.join(dir), 0o744);
    }
    let dry = sync_as_nobody(&args(&["-n", "--delete"], &s, &d));
    dry.assert_code(1);
    let real = sync_as_nobody(&args(&["-v", "--delete"], &s, &d));
    real.assert_code(1);
    assert_same_run(&dry, &real);
    for kept in ["c/f1", "c2/g1", "c2/g2", "c2/g3"] {
        assert_eq!(fs::read(d.join(kept)).unwrap(), fs::read(s.join(kept)).unwrap(), "{kept}");
    }
    assert_eq!(fs::read(d.join("new-file")).unwrap(), fs::read(s.join("c/f1")).unwrap());
    let moved: Vec<String> = changes(&real)
        .into_iter()
        .filter(|c| c.starts_with("rename") || c.starts_with("delete"))
        .collect();
    assert!(moved.is_empty(), "{moved:?}\n{}", real.dump());
    real.assert_message("warning", "nothing was deleted or renamed away");
    real.assert_message("error", "c/f1");
    assert!(counts(&real).contains("deleted 0"), "{}", real.dump());
}

/// An unreadable source directory leaves the run incomplete (exit 1), with or without
/// `--delete` and whether or not there was anything to delete; its destination copy is left
/// alone; the summary says how much was not read.
#[test]
fn an_unreadable_source_directory_makes_every_run_incomplete() {
    let Some(t) = open_tmp("an_unreadable_source_directory_makes_every_run_incomplete") else {
        return;
    };
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"a");
    write(&s, "closed/b", b"b");
    fs::create_dir(&d).unwrap();
    give_to_nobody(&s);
    give_to_nobody(&d);
    sync_as_nobody(&args(&[], &s, &d)).assert_code(0);
    chmod(&s.join("closed"), 0o000);
    for flags in [&[][..], &["--delete"], &["-n"], &["-n", "--delete"]] {
        let out = sync_as_nobody(&args(flags, &s, &d));
        out.assert_code(1);
        out.assert_message("error", "closed");
        assert!(String::from_utf8_lossy(&out.stderr).contains("; 1 not read"), "{}", out.dump());
    }
    assert_eq!(fs::read(d.join("closed/b")).unwrap(), b"b");
    chmod(&s.join("closed"), 0o755);
    sync_as_nobody(&args(&["--delete"], &s, &d)).assert_code(0);
    assert_mirror(&s, &d);
}

/// A SRC that cannot be listed at all: exit 2 before anything is made, DST missing or not,
/// and never a panic.
#[test]
fn a_source_that_cannot_be_listed_is_refused_and_nothing_is_made() {
    let Some(t) = open_tmp("a_source_that_cannot_be_listed_is_refused_and_nothing_is_made") else {
        return;
    };
    let s = t.path().join("src");
    write(&s, "a", b"a");
    chmod(&s, 0o700);
    let missing = t.path().join("never/made");
    let out = sync_as_nobody(&args(&[], &s, &missing));
    out.assert_code(2);
    assert!(!t.path().join("never").exists(), "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("src"), "{}", out.dump());
    let existing = t.path().join("dst");
    fs::create_dir(&existing).unwrap();
    give_to_nobody(&existing);
    for flags in [&[][..], &["--delete"], &["-n", "--delete"]] {
        sync_as_nobody(&args(flags, &s, &existing)).assert_code(2);
    }
    assert_eq!(fs::read_dir(&existing).unwrap().count(), 0, "nothing made in DST");
}
