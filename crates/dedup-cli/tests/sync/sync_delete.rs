//! Deletions: last, never after a source read failed, refused before any change beyond
//! `--max-delete`, and excluded paths kept unless asked.

use crate::common;

use std::fs;

use common::mirror::*;
use common::store::{assert_looks_equal, look};
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

/// An empty SRC is most often a disk that is not mounted at its mount point: `--delete` from it
/// would empty the mirror (as rsync's does). It is refused before any change, the dry run too,
/// unless `--allow-empty-source` says the empty SRC is meant.
#[test]
fn a_delete_from_an_empty_source_is_refused_unless_it_is_meant() {
    let t = tmp();
    let (s, d) = (t.path().join("mnt"), t.path().join("mirror"));
    fs::create_dir(&s).unwrap();
    write(&d, "photos/2024/a.jpg", b"a");
    write(&d, "notes", b"n");
    let before = look(&d);
    for dry in [true, false] {
        let mut args = vec![os(b"--delete")];
        if dry {
            args.push(os(b"-n"));
        }
        args.extend([s.clone().into(), d.clone().into()]);
        let out = sync(&args);
        out.assert_code(2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("mnt is empty") && err.contains("4 entries"), "{}", out.dump());
        assert_looks_equal(&before, &look(&d), "an empty source deleted nothing");
    }
    // Without --delete an empty SRC deletes nothing anyway (the mirror's top takes its times).
    sync(&[s.clone(), d.clone()]).assert_code(0);
    assert!(d.join("photos/2024/a.jpg").exists() && d.join("notes").exists());
    // A SRC holding only excluded entries is refused as well (sync_empty_source.rs); meant, it
    // is mirrored.
    write(&s, "cache/x", b"c");
    let out = sync(&[
        os(b"--delete"),
        os(b"--allow-empty-source"),
        os(b"--exclude"),
        os(b"cache"),
        s.clone().into(),
        d.clone().into(),
    ]);
    out.assert_code(0);
    assert!(!d.join("notes").exists(), "{}", out.dump());
    fs::remove_dir_all(s.join("cache")).unwrap();
    write(&d, "notes", b"n");
    let out =
        sync(&[os(b"--delete"), os(b"--allow-empty-source"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(fs::read_dir(&d).unwrap().count(), 0, "{}", out.dump());
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

/// A directory the source no longer has is deleted without the entries the exclusions leave
/// out of the run: they stay, with the directories leading to them (rsync's "cannot delete
/// non-empty directory"); the rest goes, and the dry run counts the same. Nor is such a
/// directory renamed away, or replaced by a file, which would take its excluded entries along.
#[test]
fn deleting_a_directory_keeps_the_excluded_entries_inside_it() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"a");
    write(&d, "gone/keep.tmp", b"excluded by name");
    write(&d, "gone/cache/c", b"inside an excluded directory");
    write(&d, "gone/deeper/sub/k.tmp", b"excluded, two levels down");
    write(&d, "gone/deeper/sub/x", b"not excluded");
    write(&d, "gone/x", b"not excluded");
    write(&d, "gone/empty-sub/y", b"not excluded");
    // A directory holding an excluded entry where the source now has a file.
    write(&s, "was-dir", b"now a file");
    write(&d, "was-dir/inner.tmp", b"excluded");
    let args = |extra: &[&str]| {
        let mut v: Vec<std::ffi::OsString> = extra.iter().map(|a| os(a.as_bytes())).collect();
        v.extend(
            ["--delete", "--exclude", "*.tmp", "--exclude", "cache"].map(|a| os(a.as_bytes())),
        );
        v.push(s.clone().into());
        v.push(d.clone().into());
        v
    };
    let dry = sync(&args(&["-n"]));
    dry.assert_code(1);
    let real = sync(&args(&["-v"]));
    real.assert_code(1);
    assert_same_run(&dry, &real);
    real.assert_message("error", "was-dir");
    for kept in ["gone/keep.tmp", "gone/cache/c", "gone/deeper/sub/k.tmp", "was-dir/inner.tmp"] {
        assert!(d.join(kept).exists(), "{kept} was deleted\n{}", real.dump());
    }
    for gone in ["gone/deeper/sub/x", "gone/x", "gone/empty-sub"] {
        assert!(!d.join(gone).exists(), "{gone} was kept\n{}", real.dump());
    }
    assert!(counts(&real).contains("deleted 4"), "{}", real.dump());
    // Asked for, the excluded entries go too, and the file takes the directory's place.
    let out = sync(&[
        os(b"--delete"),
        os(b"--delete-excluded"),
        os(b"--exclude"),
        os(b"*.tmp"),
        os(b"--exclude"),
        os(b"cache"),
        s.clone().into(),
        d.clone().into(),
    ]);
    out.assert_code(0);
    assert_mirror(&s, &d);
}

/// `--exclude /a` is anchored at the root, as in rsync: it leaves out `a` at the top of both
/// trees only; `dir/` matches directories only.
#[test]
fn anchored_and_directory_only_exclusions_match_as_in_rsync() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"top-level a: excluded");
    write(&s, "sub/a", b"a below the root: mirrored");
    write(&s, "build/o", b"a directory called build: excluded");
    write(&s, "x/build", b"a file called build: mirrored");
    write(&d, "a", b"DST's own top-level a: kept");
    let out = sync(&[
        os(b"-v"),
        os(b"--delete"),
        os(b"--exclude"),
        os(b"/a"),
        os(b"--exclude"),
        os(b"build/"),
        s.clone().into(),
        d.clone().into(),
    ]);
    out.assert_code(0);
    assert_eq!(fs::read(d.join("a")).unwrap(), b"DST's own top-level a: kept");
    assert_eq!(fs::read(d.join("sub/a")).unwrap(), b"a below the root: mirrored");
    assert!(!d.join("build").exists(), "{}", out.dump());
    assert_eq!(fs::read(d.join("x/build")).unwrap(), b"a file called build: mirrored");
}

/// A run that fits only once its deletions are made makes them first (no source part unread):
/// moved files are renamed out of the deleted directory before it goes, and the dry run lists
/// the deletions before the copies, as the run makes them.
#[test]
fn deletions_come_first_when_the_copies_need_their_room() {
    let test = "deletions_come_first_when_the_copies_need_their_room";
    if !require(is_root(), test, "mounting a small tmpfs needs root") {
        return;
    }
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    fs::create_dir(&d).unwrap();
    let mounted = Mounted::new(&["-t", "tmpfs", "-o", "size=8m", "tmpfs"], &d);
    if !require(mounted.is_some(), test, "mount -t tmpfs failed") {
        return;
    }
    write(&s, "old/big", &pattern(5 << 20, 1));
    write(&s, "old/moved", &pattern(1 << 20, 2));
    sync(&[s.clone(), d.clone()]).assert_code(0);
    fs::remove_file(s.join("old/big")).unwrap();
    // Two new files with it: not enough of old/ for a renamed directory.
    write(&s, "kept/a", b"a");
    write(&s, "kept/b", b"b");
    fs::rename(s.join("old/moved"), s.join("kept/moved")).unwrap();
    fs::remove_dir(s.join("old")).unwrap();
    write(&s, "new", &pattern(5 << 20, 3));
    let dry = sync(&[os(b"-n"), os(b"--delete"), s.clone().into(), d.clone().into()]);
    dry.assert_code(0);
    let order: Vec<String> =
        String::from_utf8_lossy(&dry.stdout).lines().map(str::to_owned).collect();
    let at = |line: &str| order.iter().position(|l| l == line);
    let (renamed, deleted, copied) =
        (at("rename kept/moved <- old/moved"), at("delete old"), at("copy new"));
    assert!(renamed < deleted && deleted < copied && renamed.is_some(), "{}", dry.dump());
    let real = sync(&[os(b"-v"), os(b"--delete"), s.clone().into(), d.clone().into()]);
    real.assert_code(0);
    assert_same_run(&dry, &real);
    assert_mirror(&s, &d);
}
