//! `dedup sync --dedup`: identical files copied in one run come to share storage — extents on a
//! real btrfs (seen with FIEMAP), one inode with `--dedup=hardlink` where mode, owner and mtime
//! agree — with the content unchanged, and a second run leaves them as they are.

mod common;

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

/// Three identical files, one alike in size only, one different.
fn source(s: &Path) {
    write(s, "a", &pattern(1 << 20, 1));
    write(s, "sub/b", &pattern(1 << 20, 1));
    write(s, "sub/deeper/c", &pattern(1 << 20, 1));
    write(s, "same-size", &pattern(1 << 20, 2));
    write(s, "small", &pattern(1000, 3));
}

#[test]
fn identical_copies_share_extents_on_btrfs() {
    let test = "identical_copies_share_extents_on_btrfs";
    let have = Command::new("filefrag").arg("-V").output().is_ok();
    if !require(have, test, "filefrag not installed (apt-get install e2fsprogs)") {
        return;
    }
    let Some(lfs) = LoopFs::new("btrfs", test) else { return };
    // The source on another file system, so that the copies share nothing to begin with.
    let src_dir = tmp();
    let s = src_dir.path().join("src");
    source(&s);
    let plain = lfs.mnt.join("plain");
    sync(&[s.clone(), plain.clone()]).assert_code(0);
    Command::new("sync").status().unwrap();
    assert!(!shared(&plain.join("sub/b")), "copies from tmpfs shared extents without --dedup");

    let d = lfs.mnt.join("deduped");
    let out = sync(&[os(b"-v"), os(b"--dedup"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    Command::new("sync").status().unwrap();
    assert_mirror(&s, &d);
    for p in ["a", "sub/b", "sub/deeper/c"] {
        assert!(shared(&d.join(p)), "{p} shares no extent after --dedup");
    }
    assert!(!shared(&d.join("same-size")), "a file of other content was shared");
    let clones = changes(&out).into_iter().filter(|c| c.starts_with("clone")).count();
    assert_eq!(clones, 2, "{}", out.dump());
    // Up to date as it stands: nothing to do.
    let again = sync(&[os(b"-v"), os(b"--dedup"), s.clone().into(), d.clone().into()]);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "a second run changed {:?}", changes(&again));
}

#[test]
fn hardlink_mode_links_identical_copies_whose_metadata_agree() {
    let dir = tmp();
    let s = dir.path().join("src");
    source(&s);
    for p in ["a", "sub/b", "sub/deeper/c", "same-size"] {
        set_mtime(&s.join(p), 1_700_000_000, 5);
    }
    // Same content, other mode: may not share an inode (it would change the mode of the other).
    write(&s, "other-mode", &pattern(1 << 20, 1));
    set_mtime(&s.join("other-mode"), 1_700_000_000, 5);
    chmod(&s.join("other-mode"), 0o600);
    let d = dir.path().join("dst");
    let out = sync(&[os(b"--dedup=hardlink"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    // A mirror in everything but the links made on purpose.
    let (want, got) = (describe(&s), describe(&d));
    assert_eq!(want.len(), got.len());
    for (path, node) in &want {
        let mut found = got[path].clone();
        found.link_group = node.link_group.clone();
        assert_eq!(&found, node, "{}", String::from_utf8_lossy(path));
    }
    assert_eq!(ino(&d.join("a")), ino(&d.join("sub/b")));
    assert_eq!(ino(&d.join("a")), ino(&d.join("sub/deeper/c")));
    assert_ne!(ino(&d.join("a")), ino(&d.join("same-size")));
    assert_ne!(ino(&d.join("a")), ino(&d.join("other-mode")));
    // The links stay: a second run finds everything up to date.
    let again = sync(&[os(b"-v"), os(b"--dedup=hardlink"), s.clone().into(), d.clone().into()]);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "a second run changed {:?}", changes(&again));
    assert_eq!(ino(&d.join("a")), ino(&d.join("sub/b")));

    // Where extents cannot be shared (tmpfs), reflink mode says so and leaves plain copies.
    let t = dir.path().join("tmpfs-copy");
    let out = sync(&[os(b"--dedup"), s.clone().into(), t.clone().into()]);
    out.assert_code(0);
    assert_mirror(&s, &t);
}
