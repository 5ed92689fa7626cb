//! `dedup sync` on a real btrfs (a loop device made by the test): within one file system the
//! copies share the source's extents (seen with FIEMAP through `filefrag`), across file systems
//! the bytes are copied, and `--reflink never` never shares.

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

#[test]
fn copies_within_btrfs_share_extents_and_across_file_systems_are_copied() {
    let test = "copies_within_btrfs_share_extents_and_across_file_systems_are_copied";
    let have = Command::new("filefrag").arg("-V").output().is_ok();
    if !require(have, test, "filefrag not installed (apt-get install e2fsprogs)") {
        return;
    }
    let Some(lfs) = LoopFs::new("btrfs", test) else { return };
    let m = lfs.mnt.as_path();
    let s = m.join("src");
    write(&s, "big", &pattern(8 << 20, 1));
    write(&s, "sub/small", &pattern(100_000, 2));
    Command::new("sync").status().unwrap();
    sync(&[s.clone(), m.join("cloned")]).assert_code(0);
    Command::new("sync").status().unwrap();
    assert_mirror(&s, &m.join("cloned"));
    assert!(shared(&m.join("cloned/big")), "no shared extent in a clone on btrfs");
    sync(&[os(b"--reflink"), os(b"never"), s.clone().into(), m.join("copied").into()])
        .assert_code(0);
    Command::new("sync").status().unwrap();
    assert_mirror(&s, &m.join("copied"));
    assert!(!shared(&m.join("copied/big")), "--reflink never shared extents");
    let other = tmp();
    let out = sync(&[s.clone(), other.path().join("dst")]);
    out.assert_code(0);
    assert_mirror(&s, &other.path().join("dst"));
    let always =
        sync(&[os(b"--reflink"), os(b"always"), s.clone().into(), other.path().join("x").into()]);
    always.assert_code(1);
}
