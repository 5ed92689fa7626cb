//! `dedup store restore` onto a real ext4 file system on a loop device: each batch's files are
//! sent to the disk as soon as their content is complete (small files first, then the others,
//! in the order of the listing), so when the restore returns none of them is still waiting for
//! ext4 to choose its blocks (delayed allocation); `DEDUP_RESTORE_WRITEBACK=0` leaves that to
//! the kernel. Either way the tree restores byte for byte: odd names, a hard link, sparse,
//! empty and large files.

use crate::common;

use std::ffi::OsStr;
use std::path::Path;

use common::act::{delayed_allocation, LoopFs};
use common::store::*;
use common::*;

/// Small and large files over several directories, odd names, a hard link, a sparse and an
/// empty file, a symlink.
fn fill(src: &Path) {
    for d in 0..4 {
        for f in 0..12 {
            let len = [1usize, 700, 4096, 20_000, 61_440, 61_441, 130_000, 900_000][(d + f) % 8];
            write(src, &format!("d{d}/sub/f{f:02}"), &pattern(len, (d * 100 + f) as u64));
        }
    }
    awkward_entries(src, 5 << 20, 8 << 20);
}

/// Restores the latest snapshot of `src` into `target` with `DEDUP_RESTORE_WRITEBACK` set to
/// `writeback`; nothing syncs the file system afterwards.
fn restore(repo: &Path, src: &Path, target: &Path, writeback: &str) {
    let spec = format!("latest:{}", src.display());
    let mut c = store_cmd(repo);
    c.env("DEDUP_RESTORE_WRITEBACK", writeback)
        .args([OsStr::new("restore"), OsStr::new(&spec), "--target".as_ref()])
        .arg(target);
    run(&mut c).assert_code(0);
}

#[test]
fn a_restore_sends_its_files_to_the_disk_before_it_returns_on_ext4() {
    let test = "a_restore_sends_its_files_to_the_disk_before_it_returns_on_ext4";
    let Some(loop_fs) = LoopFs::with_size("ext4", test, 200 << 20) else { return };
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fill(&src);
    let expected = look(&src);
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);

    let target = loop_fs.mnt.join("restored");
    restore(&repo, &src, &target, "1");
    let Some(waiting) = delayed_allocation(&target) else {
        require(false, test, "filefrag -v cannot map the restored files");
        return;
    };
    assert!(waiting.is_empty(), "still in delayed allocation after the restore: {waiting:?}");
    assert_looks_equal(&expected, &look(&target), "written back");

    // Left to the kernel: the same tree, whenever it reaches the disk.
    let target = loop_fs.mnt.join("restored-later");
    restore(&repo, &src, &target, "0");
    assert_looks_equal(&expected, &look(&target), "left to the kernel");
}
