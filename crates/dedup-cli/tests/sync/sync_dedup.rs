//! `dedup sync --dedup`: identical files in DST come to share storage on a real btrfs (a loop
//! device made by the test; FIEMAP through `filefrag` shows the shared extents), as clones by
//! default and as hard links with `--dedup=hardlink` (only between files whose metadata agrees);
//! content never changes, a file of the same size but other bytes is left alone, and the next run
//! has nothing to do. Without reflinks, `--dedup` changes nothing and succeeds.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::act::LoopFs;
use common::mirror::*;
use common::*;

/// True when FIEMAP reports a shared extent in the file.
fn shared(p: &Path) -> bool {
    let out = Command::new("filefrag").arg("-v").arg(p).output().unwrap();
    String::from_utf8_lossy(&out.stdout).contains("shared")
}

/// A source tree (on the test's temporary file system, so that copying into btrfs cannot clone)
/// with three equal files, one of the same size but one byte different, one unique file.
fn seed(src: &Path) -> Vec<u8> {
    let data = pattern(3 << 20, 7);
    write(src, "a", &data);
    write(src, "b", &data);
    write(src, "deep/er/c", &data);
    write(src, "d", &flip(&data, 1 << 20));
    write(src, "e", &pattern(5000, 3));
    for (i, p) in ["a", "b", "deep/er/c", "d"].iter().enumerate() {
        set_mtime(&src.join(p), 1_600_000_000 + i as i64, 5);
    }
    data
}

fn no_changes_on_rerun(src: &Path, dst: &Path, extra: &[&str]) {
    let mut args: Vec<std::ffi::OsString> = extra.iter().map(|s| os(s.as_bytes())).collect();
    args.extend(["-v".into(), src.into(), dst.into()]);
    let again = sync(&args);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "a rerun changed things:\n{}", again.dump());
}

#[test]
fn dedup_clones_identical_copies_and_leaves_different_ones_alone() {
    let test = "dedup_clones_identical_copies_and_leaves_different_ones_alone";
    let have = Command::new("filefrag").arg("-V").output().is_ok();
    if !require(have, test, "filefrag not installed (apt-get install e2fsprogs)") {
        return;
    }
    let Some(lfs) = LoopFs::new("btrfs", test) else { return };
    let src = tmp();
    let data = seed(src.path());
    let dst = lfs.mnt.join("dst");
    let out = sync(&[os(b"--dedup"), os(b"-v"), src.path().into(), dst.clone().into()]);
    out.assert_code(0);
    Command::new("sync").status().unwrap();
    assert_mirror(src.path(), &dst);
    let lines = changes(&out);
    assert!(lines.iter().any(|l| l.starts_with("share") && l.contains('b')), "{}", out.dump());
    for p in ["a", "b", "deep/er/c"] {
        assert!(shared(&dst.join(p)), "{p} shares no extent after --dedup");
        assert_eq!(std::fs::read(dst.join(p)).unwrap(), data);
    }
    assert!(!shared(&dst.join("d")), "a file of other bytes was shared");
    assert!(!shared(&dst.join("e")));
    assert_ne!(ino(&dst.join("a")), ino(&dst.join("b")), "clones must stay separate files");
    no_changes_on_rerun(src.path(), &dst, &["--dedup"]);

    // Without --dedup the same copy shares nothing: the sharing above is --dedup's doing.
    let plain = lfs.mnt.join("plain");
    sync(&[src.path(), &plain]).assert_code(0);
    Command::new("sync").status().unwrap();
    assert!(!shared(&plain.join("b")));
}

#[test]
fn dedup_hardlink_links_only_files_whose_metadata_agrees() {
    let src = tmp();
    let data = seed(src.path());
    // b and deep/er/c get a's times; b's mode then differs, so only c is linked to a.
    let times = |p: &str| {
        let ok = Command::new("touch")
            .arg("-h")
            .arg("-r")
            .arg(src.path().join("a"))
            .arg(src.path().join(p))
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    times("b");
    times("deep/er/c");
    chmod(&src.path().join("b"), 0o600);
    times("b");
    let dst = tmp();
    let d = dst.path().join("m");
    let out = sync(&[os(b"--dedup=hardlink"), os(b"-v"), src.path().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(ino(&d.join("a")), ino(&d.join("deep/er/c")), "{}", out.dump());
    assert_ne!(ino(&d.join("a")), ino(&d.join("b")), "files of other modes were linked");
    assert_ne!(ino(&d.join("a")), ino(&d.join("d")), "files of other bytes were linked");
    for p in ["a", "b", "deep/er/c"] {
        assert_eq!(std::fs::read(d.join(p)).unwrap(), data);
    }
    no_changes_on_rerun(src.path(), &d, &["--dedup=hardlink"]);
    // A metadata change in the source reaches only its own name: the link is broken first.
    chmod(&src.path().join("deep/er/c"), 0o640);
    sync(&[os(b"--dedup=hardlink"), src.path().into(), d.clone().into()]).assert_code(0);
    assert_mirror(src.path(), &d);
    assert_ne!(ino(&d.join("a")), ino(&d.join("deep/er/c")));
    // Without the option, the mirror of unlinked source files is unlinked again.
    chmod(&src.path().join("deep/er/c"), 0o644);
    sync(&[os(b"--dedup=hardlink"), src.path().into(), d.clone().into()]).assert_code(0);
    sync(&[src.path(), &d]).assert_code(0);
    assert_mirror(src.path(), &d);
}

#[test]
fn dedup_without_reflinks_changes_nothing_and_succeeds() {
    // The test's temporary directory has no reflinks (tmpfs, ext4); where it does, the clones
    // are still separate files with the same bytes, which is all this test checks.
    let src = tmp();
    seed(src.path());
    let dst = tmp();
    let d = dst.path().join("m");
    let out = sync(&[os(b"--dedup"), src.path().into(), d.clone().into()]);
    out.assert_code(0);
    assert_mirror(src.path(), &d);
    assert_ne!(ino(&d.join("a")), ino(&d.join("b")));
    // A dry run with --dedup changes nothing at all.
    let e = dst.path().join("dry");
    sync(&[os(b"--dedup"), os(b"-n"), src.path().into(), e.clone().into()]).assert_code(0);
    assert!(!e.exists());
}

/// Access times do not keep identical files apart (every read moves them, and the up-to-date
/// test does not compare them): the linked files keep the first copy's, and the next run has
/// nothing to do.
#[test]
fn dedup_hardlink_links_identical_files_whatever_their_access_times() {
    let src = tmp();
    let data = pattern(50_000, 9);
    write(src.path(), "a", &data);
    write(src.path(), "b", &data);
    for (p, atime) in [("a", "@1500000000"), ("b", "@1550000000")] {
        for args in [["-m", "-d", "@1600000000.5"], ["-a", "-d", atime]] {
            let ok = Command::new("touch")
                .args(args)
                .arg(src.path().join(p))
                .status()
                .unwrap()
                .success();
            assert!(ok);
        }
    }
    let dst = tmp();
    let d = dst.path().join("m");
    let out = sync(&[os(b"--dedup=hardlink"), os(b"-v"), src.path().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(ino(&d.join("a")), ino(&d.join("b")), "{}", out.dump());
    assert_eq!(std::fs::read(d.join("b")).unwrap(), data);
    no_changes_on_rerun(src.path(), &d, &["--dedup=hardlink"]);
}
