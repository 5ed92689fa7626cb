//! Deletions: last, never after a source read failed, refused before any change beyond
//! `--max-delete`, and excluded paths kept unless asked.

mod common;

use std::fs;

use common::mirror::*;
use common::*;

#[test]
fn an_unreadable_source_directory_stops_every_deletion() {
    if !require(is_root(), "an_unreadable_source_directory_stops_every_deletion", "needs root") {
        return;
    }
    let t = tmp();
    chmod(t.path(), 0o755);
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "open/a", b"a");
    write(&s, "closed/b", b"b");
    let first = sync(&[s.clone(), d.clone()]);
    first.assert_code(0);
    write(&d, "closed/only-in-dst", b"must survive");
    write(&d, "open/extra", b"would be deleted if all was read");
    for p in [&s, &d] {
        std::process::Command::new("chown").arg("-R").arg("65534:65534").arg(p).status().unwrap();
    }
    chmod(&s.join("closed"), 0o000);
    let out = sync_as_nobody(&[os(b"--delete"), s.clone().into(), d.clone().into()]);
    chmod(&s.join("closed"), 0o755);
    out.assert_code(1);
    assert!(d.join("closed/only-in-dst").exists(), "{}", out.dump());
    assert!(d.join("open/extra").exists(), "no deletion at all after a read error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("closed"), "{}", out.dump());
}

#[test]
fn max_delete_refuses_before_changing_anything() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "keep", b"k");
    sync(&[s.clone(), d.clone()]).assert_code(0);
    for i in 0..5 {
        write(&d, &format!("old/{i}"), b"x");
    }
    write(&s, "new", b"n");
    let out =
        sync(&[os(b"--delete"), os(b"--max-delete"), os(b"3"), s.clone().into(), d.clone().into()]);
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-delete"), "{}", out.dump());
    assert!(d.join("old/4").exists() && !d.join("new").exists(), "nothing changed");
    let ok =
        sync(&[os(b"--delete"), os(b"--max-delete"), os(b"6"), s.clone().into(), d.clone().into()]);
    ok.assert_code(0);
    assert_mirror(&s, &d);
}

#[test]
fn excluded_paths_are_kept_unless_delete_excluded() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"a");
    write(&s, "cache/big", b"not mirrored");
    write(&d, "cache/mine", b"kept");
    write(&d, "stale", b"gone");
    let out = sync(&[
        os(b"--delete"),
        os(b"--exclude"),
        os(b"cache"),
        s.clone().into(),
        d.clone().into(),
    ]);
    out.assert_code(0);
    assert!(d.join("cache/mine").exists() && !d.join("cache/big").exists());
    assert!(!d.join("stale").exists());
    let out = sync(&[
        os(b"--delete"),
        os(b"--delete-excluded"),
        os(b"--exclude"),
        os(b"cache"),
        s.clone().into(),
        d.clone().into(),
    ]);
    out.assert_code(0);
    assert!(!d.join("cache").exists(), "{}", out.dump());
    fs::remove_dir_all(s.join("cache")).unwrap();
    sync(&[os(b"--delete"), s.clone().into(), d.clone().into()]).assert_code(0);
    assert_mirror(&s, &d);
}
