//! `dedup sync` between file systems: tmpfs, ext4, XFS and btrfs (loop images made by the test),
//! every direction between them and within each. The mirror is exact in every preserved field
//! (sparse files staying sparse, hard links, symlinks, xattrs) whatever the pair; content is
//! cloned exactly where source and destination share a file system with reflinks (XFS, btrfs:
//! FIEMAP through `filefrag` shows the shared extents) and copied everywhere else; a rerun
//! changes nothing. `--dedup` on XFS shares identical copies as it does on btrfs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::act::{LoopFs, Tmpfs};
use common::mirror::*;
use common::*;

/// True when FIEMAP reports a shared extent in the file.
fn shared(p: &Path) -> bool {
    let out = Command::new("filefrag").arg("-v").arg(p).output().unwrap();
    String::from_utf8_lossy(&out.stdout).contains("shared")
}

fn seed(src: &Path) {
    write(src, "big", &pattern(2 << 20, 1));
    write(src, "twin", &pattern(2 << 20, 1));
    write(src, "dir/small", b"small file");
    write(src, "dir/empty", b"");
    hardlink(src, "dir/small", "dir/small-link");
    symlink(src, "../big", "dir/to-big");
    set_xattr(&src.join("dir/small"), "user.note", "kept");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(src.join("sparse"))
        .unwrap();
    f.set_len(8 << 20).unwrap();
    use std::os::unix::fs::FileExt;
    f.write_at(&pattern(64 << 10, 3), 4 << 20).unwrap();
    drop(f);
    set_mtime(&src.join("big"), 1_600_000_000, 123_456_789);
}

#[test]
fn every_pair_of_file_systems_mirrors_exactly_and_clones_only_within_one_with_reflinks() {
    let test =
        "every_pair_of_file_systems_mirrors_exactly_and_clones_only_within_one_with_reflinks";
    let have = Command::new("filefrag").arg("-V").output().is_ok();
    if !require(have, test, "filefrag not installed (apt-get install e2fsprogs)") {
        return;
    }
    let Some(tmpfs) = Tmpfs::new(test) else { return };
    let Some(ext4) = LoopFs::with_size("ext4", test, 300 << 20) else { return };
    let Some(xfs) = LoopFs::new("xfs", test) else { return };
    let Some(btrfs) = LoopFs::new("btrfs", test) else { return };
    let systems: [(&str, &Path, bool); 4] = [
        ("tmpfs", &tmpfs.mnt, false),
        ("ext4", &ext4.mnt, false),
        ("xfs", &xfs.mnt, true),
        ("btrfs", &btrfs.mnt, true),
    ];
    for (_, root, _) in systems {
        seed(&root.join("src"));
    }
    Command::new("sync").status().unwrap();
    for (from, src_root, _) in systems {
        for (to, dst_root, reflinks) in systems {
            let src = src_root.join("src");
            let dst: PathBuf = dst_root.join(format!("from-{from}"));
            let out = sync(&[src.as_path(), dst.as_path()]);
            out.assert_code(0);
            Command::new("sync").status().unwrap();
            assert_mirror(&src, &dst);
            let cloned = shared(&dst.join("big"));
            let expected = reflinks && from == to;
            assert_eq!(cloned, expected, "{from} -> {to}: cloned {cloned}, expected {expected}");
            let again =
                sync(&[os(b"-v"), src.clone().into_os_string(), dst.clone().into_os_string()]);
            again.assert_code(0);
            assert!(changes(&again).is_empty(), "{from} -> {to}: rerun changed:\n{}", again.dump());
        }
    }
    // --dedup on XFS: the copies from tmpfs could not be clones; the twins now share extents.
    let dst = xfs.mnt.join("deduped");
    sync(&[os(b"--dedup"), tmpfs.mnt.join("src").into_os_string(), dst.clone().into_os_string()])
        .assert_code(0);
    Command::new("sync").status().unwrap();
    assert_mirror(&tmpfs.mnt.join("src"), &dst);
    assert!(shared(&dst.join("big")) && shared(&dst.join("twin")), "--dedup shared nothing on XFS");
}
