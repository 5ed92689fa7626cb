//! `dedup sync` onto a real ext4 file system on a loop device, with the write-back of its copies
//! started by the run (`DEDUP_SYNC_WRITEBACK=1`: small files first, in the order of the plan)
//! and left to the kernel (`0`): when the run returns with it on, no copy is still waiting for
//! ext4 to choose its blocks (delayed allocation); either way the mirror is the same, byte for
//! byte (odd names, a hard link, sparse, empty and large files), and a copy that fails midway
//! (the destination full) is named, leaves nothing at its name, and makes the exit status 1.

use crate::common;

use std::fs;
use std::path::Path;

use common::act::{delayed_allocation, LoopFs};
use common::mirror::*;
use common::*;

/// Small and large files over several directories, and the awkward entries.
fn fill(src: &Path) {
    for d in 0..4 {
        for f in 0..12 {
            let len = [1usize, 700, 4096, 20_000, 61_440, 61_441, 130_000, 900_000][(d + f) % 8];
            write(src, &format!("d{d}/sub/f{f:02}"), &pattern(len, (d * 100 + f) as u64));
        }
    }
    awkward_entries(src, 5 << 20, 8 << 20);
}

/// `dedup sync SRC DST` with `DEDUP_SYNC_WRITEBACK` set to `write_back`.
fn sync_with(src: &Path, dst: &Path, write_back: &str) -> Out {
    let mut c = assert_cmd::Command::new(BIN);
    c.timeout(TIMEOUT).env("DEDUP_SYNC_WRITEBACK", write_back).arg("sync").arg(src).arg(dst);
    run(&mut c)
}

#[test]
fn a_sync_sends_its_copies_to_the_disk_before_it_returns_on_ext4() {
    let test = "a_sync_sends_its_copies_to_the_disk_before_it_returns_on_ext4";
    let Some(loop_fs) = LoopFs::with_size("ext4", test, 200 << 20) else { return };
    let dir = tmp();
    let src = dir.path().join("src");
    fill(&src);

    let dst = loop_fs.mnt.join("sent");
    sync_with(&src, &dst, "1").assert_code(0);
    let Some(waiting) = delayed_allocation(&dst) else {
        require(false, test, "filefrag -v cannot map the copied files");
        return;
    };
    assert!(waiting.is_empty(), "still in delayed allocation after the sync: {waiting:?}");
    assert_mirror(&src, &dst);
    assert!(temp_names(&dst).is_empty());

    // Left to the kernel: the same mirror, whenever it reaches the disk.
    let dst = loop_fs.mnt.join("left");
    sync_with(&src, &dst, "0").assert_code(0);
    assert_mirror(&src, &dst);
    // A setting that is neither 0 nor 1 is named, and the run goes on as by default.
    let dst = loop_fs.mnt.join("nonsense");
    let out = sync_with(&src, &dst, "yes");
    out.assert_code(0);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("DEDUP_SYNC_WRITEBACK"), "{}", out.dump());
    assert_mirror(&src, &dst);
}

#[test]
fn a_copy_that_fails_midway_is_named_and_the_exit_status_says_so_with_the_write_back_on_or_off() {
    let test = "a_copy_that_fails_midway_is_named_and_the_exit_status_says_so_with_the_write_back_on_or_off";
    for write_back in ["1", "0"] {
        // Room for the small files, not for the large one: its copy runs out of room midway.
        let Some(loop_fs) = LoopFs::with_size("ext4", test, 24 << 20) else { return };
        let dir = tmp();
        let src = dir.path().join("src");
        for f in 0..20 {
            write(&src, &format!("small/f{f:02}"), &pattern(3000 + f * 1000, f as u64));
        }
        write(&src, "large/too-big", &pattern(40 << 20, 99));
        let dst = loop_fs.mnt.join("dst");
        let out = sync_with(&src, &dst, write_back);
        out.assert_code(1);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("too-big"), "the failed copy is named\n{}", out.dump());
        assert!(!dst.join("large/too-big").exists(), "nothing at the failed copy's name");
        assert!(temp_names(&dst).is_empty(), "no temporary left: {:?}", temp_names(&dst));
        for f in 0..20 {
            let rel = format!("small/f{f:02}");
            assert_eq!(
                fs::read(dst.join(&rel)).unwrap(),
                pattern(3000 + f * 1000, f as u64),
                "{rel}"
            );
        }
    }
}
