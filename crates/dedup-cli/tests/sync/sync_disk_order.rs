//! `dedup sync` copying in the order of the source's disk (`DEDUP_PHYSICAL_ORDER=1`) on a real
//! ext4 file system on a loop device: the same mirror as without it (`DEDUP_PHYSICAL_ORDER=0`),
//! cold and warm, on a first copy and on an incremental run with moves, replaced files and new
//! ones; files whose place FIEMAP cannot give (sparse, empty, written moments ago) are copied
//! too. With the order on, the copies are made in the order their first bytes lie on the disk.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::act::LoopFs;
use common::mirror::*;
use common::page_cache::evict;
use common::*;

/// A tree with files of many sizes spread over directories written out of name order (ext4
/// spreads top-level directories over the disk), and every other kind of entry a sync makes.
fn fill(src: &Path) {
    for d in (0..6).rev() {
        for f in (0..12).rev() {
            let len = [1usize, 700, 4096, 20_000, 130_000, 600_000][(d + f) % 6];
            write(src, &format!("d{d}/sub/f{f:02}"), &pattern(len, (d * 100 + f) as u64));
        }
    }
    write(src, "big", &pattern(5 << 20, 7));
    write(src, "empty", b"");
    let sparse = fs::File::create(src.join("sparse")).unwrap();
    sparse.set_len(4 << 20).unwrap();
    use std::os::unix::fs::FileExt;
    sparse.write_at(&pattern(8192, 9), 2 << 20).unwrap();
    drop(sparse);
    hardlink(src, "d1/sub/f03", "d2/link-to-f03");
    symlink(src, "../big", "d0/to-big");
    set_xattr(&src.join("d3/sub/f05"), "user.note", "kept");
}

/// `dedup sync -v --delete SRC DST` with `DEDUP_PHYSICAL_ORDER` set to `order`.
fn sync_ordered(src: &Path, dst: &Path, order: &str) -> Out {
    let mut c = assert_cmd::Command::new(BIN);
    c.timeout(TIMEOUT)
        .env("DEDUP_PHYSICAL_ORDER", order)
        .args(["sync", "-v", "--delete"])
        .arg(src)
        .arg(dst);
    let out = run(&mut c);
    out.assert_code(0);
    out
}

/// The device address of the first byte of `path` (`filefrag -v`), in blocks.
fn first_block(path: &Path) -> Option<u64> {
    let out = Command::new("filefrag").arg("-v").arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "   0:        0..       0:      34816..     34816:      1: ..."
    let line = text.lines().find(|l| l.trim_start().starts_with("0:"))?;
    line.split(':').nth(2)?.split("..").next()?.trim().parse().ok()
}

/// The files copied, in the order the run printed them.
fn copied(out: &Out) -> Vec<String> {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().filter_map(|l| l.strip_prefix("copy ")).map(str::to_owned).collect()
}

#[test]
fn the_order_of_the_disk_mirrors_the_same_tree_on_ext4() {
    let test = "the_order_of_the_disk_mirrors_the_same_tree_on_ext4";
    let have = Command::new("filefrag").arg("-V").output().is_ok();
    if !require(have, test, "filefrag not installed (apt-get install e2fsprogs)") {
        return;
    }
    let Some(fs) = LoopFs::with_size("ext4", test, 200 << 20) else { return };
    let src = fs.mnt.join("src");
    fill(&src);
    evict(&src);
    let out = tmp();
    let (ordered, plain) = (out.path().join("ordered"), out.path().join("plain"));
    let first = sync_ordered(&src, &ordered, "1");
    evict(&src);
    sync_ordered(&src, &plain, "0");
    assert_mirror(&src, &ordered);
    assert_mirror(&src, &plain);
    assert_eq!(describe(&ordered), describe(&plain));

    // One thread copied them as they lie: files with a place, by place. The tree was written
    // out of name order, so this is not the order of the plan.
    let places: Vec<u64> =
        copied(&first).iter().filter_map(|rel| first_block(&src.join(rel))).collect();
    assert!(places.len() > 60, "{}", first.dump());
    assert!(places.windows(2).all(|w| w[0] <= w[1]), "not in disk order: {places:?}");
    let mut by_name: Vec<String> = copied(&first);
    by_name.sort();
    let name_places: Vec<u64> =
        by_name.iter().filter_map(|rel| first_block(&src.join(rel))).collect();
    assert!(!name_places.windows(2).all(|w| w[0] <= w[1]), "the test needs a scattered tree");

    // An incremental run: a file moved, one replaced, one changed in place, new ones (one
    // written just now, not yet placed on the disk), one deleted.
    fs::rename(src.join("d4/sub/f07"), src.join("d0/moved")).unwrap();
    write(&src, "d2/sub/f01", &pattern(90_000, 1234));
    write(&src, "d5/sub/f11", &pattern(700, 4321));
    fs::remove_file(src.join("d3/sub/f00")).unwrap();
    for n in 0..5 {
        write(&src, &format!("new/n{n}"), &pattern(3000 * n + 1, 50 + n as u64));
    }
    Command::new("sync").status().unwrap();
    write(&src, "new/fresh", &pattern(40_000, 77));
    let again_ordered = sync_ordered(&src, &ordered, "1");
    let again_plain = sync_ordered(&src, &plain, "0");
    assert_eq!(changes(&again_ordered), changes(&again_plain));
    assert_mirror(&src, &ordered);
    assert_eq!(describe(&ordered), describe(&plain));
    // Warm, nothing to do.
    assert!(changes(&sync_ordered(&src, &ordered, "1")).is_empty());
}

/// A value other than 0 or 1 is refused with a message naming the variable, before any change.
#[test]
fn a_bad_physical_order_setting_is_refused_by_sync() {
    let d = tmp();
    write(d.path(), "src/f", b"x");
    let mut c = assert_cmd::Command::new(BIN);
    c.timeout(TIMEOUT).env("DEDUP_PHYSICAL_ORDER", "yes").arg("sync");
    c.arg(d.path().join("src")).arg(d.path().join("dst"));
    let out = run(&mut c);
    assert_ne!(out.code, Some(0), "{}", out.dump());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("DEDUP_PHYSICAL_ORDER"),
        "{}",
        out.dump()
    );
    assert!(!d.path().join("dst").exists());
}
