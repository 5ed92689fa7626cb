//! `dedup find` reading its candidates in the order of the disk (`DEDUP_PHYSICAL_ORDER=1`) on
//! real ext4 and XFS file systems on loop devices: the same groups as without it
//! (`DEDUP_PHYSICAL_ORDER=0`), whether the files' pages are in the page cache or not, for every
//! kind of candidate the stages read differently (small files swept whole, sampled files' heads
//! and tails, files of several chunks), and for files whose place on the disk FIEMAP cannot
//! give: sparse files, files written moments ago and not yet placed (delayed allocation), and a
//! directory on tmpfs (no FIEMAP at all) scanned beside the loop device.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::act::LoopFs;
use common::*;

/// A tree of candidates of every kind the stages read differently, under `dir`; returns how
/// many distinct contents it holds (each a group once the tree has a copy beside it).
fn fill(dir: &Path, seed: u64) -> usize {
    let mut groups = 0;
    // Read whole in one chunk (swept), sampled (heads and tails), several chunks.
    for (i, len) in
        [1usize, 700, 4096, 60_000, 65_536, 300_000, 900_000, 3 << 20].iter().enumerate()
    {
        let content = pattern(*len, seed + i as u64);
        let class = format!("c{i}");
        // Copies in directories made apart, so that they lie apart on the disk.
        write(dir, &format!("a/{class}-1"), &content);
        write(dir, &format!("z/deep/{class}-2"), &content);
        write(dir, &format!("m/{class}-3"), &content);
        // Same size: differing in the middle, at the last byte, everywhere.
        if *len > 2 {
            write(dir, &format!("b/{class}-middle"), &flip(&content, len / 2));
            write(dir, &format!("b/{class}-last"), &flip(&content, len - 1));
            groups += 2;
        }
        write(dir, &format!("y/{class}-other"), &pattern(*len, seed + 100 + i as u64));
        groups += 2;
    }
    // Sparse files: a hole before the data, and nothing but a hole.
    fs::create_dir_all(dir.join("s")).unwrap();
    for name in ["s/hole-first", "s/hole-first-copy"] {
        use std::os::unix::fs::FileExt;
        let file = fs::File::create(dir.join(name)).unwrap();
        file.set_len(2 << 20).unwrap();
        file.write_all_at(&pattern(8192, seed + 7), 1 << 20).unwrap();
    }
    groups += 1;
    for name in ["s/all-hole", "s/all-hole-copy"] {
        fs::File::create(dir.join(name)).unwrap().set_len(3 << 20).unwrap();
    }
    groups += 1;
    groups
}

/// Drop the page cache's copy of every file under `dir`.
fn evict(dir: &Path) {
    assert!(Command::new("sync").status().unwrap().success());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let status = Command::new("dd")
                .arg(format!("if={}", path.display()))
                .args(["iflag=nocache", "count=0", "status=none"])
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
}

/// `dedup find --format json` of `roots` with `DEDUP_PHYSICAL_ORDER` set to `order`.
fn find_ordered(dir: &Path, roots: &[&Path], order: &str) -> Report {
    let mut c = cmd(dir);
    c.env("DEDUP_PHYSICAL_ORDER", order).args(["find", "--format", "json"]).args(roots);
    let out = run(&mut c);
    out.assert_code(0);
    out.json()
}

/// The groups with and without physical order, cold and warm, on a loop device of `kind`, with
/// a copy of the tree on tmpfs scanned beside it.
fn same_groups_on(kind: &str, test: &str) {
    let Some(fs) = LoopFs::with_size(kind, test, 400 << 20) else { return };
    let tree = fs.mnt.join("t");
    let expected = fill(&tree, 1);
    // A tmpfs directory beside it: no FIEMAP there.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tmp());
    let beside = shm.path().join("t");
    fill(&beside, 1);
    // Files written just now: their blocks may not be placed yet (delayed allocation).
    write(&tree, "fresh/new-1", &pattern(50_000, 99));
    write(&tree, "fresh/new-2", &pattern(50_000, 99));
    let roots = [tree.as_path(), beside.as_path()];
    let plain = find_ordered(&fs.mnt, &roots, "0");
    let fresh = find_ordered(&fs.mnt, &roots, "1");
    assert_eq!(fresh.sets(), plain.sets(), "written moments ago");
    evict(&tree);
    let cold = find_ordered(&fs.mnt, &roots, "1");
    let warm = find_ordered(&fs.mnt, &roots, "1");
    evict(&tree);
    let cold_plain = find_ordered(&fs.mnt, &roots, "0");
    for (name, report) in [("cold", &cold), ("warm", &warm), ("cold, not ordered", &cold_plain)] {
        assert_eq!(report.sets(), plain.sets(), "{name}");
        assert_eq!(report.summary.errors, 0, "{name}");
    }
    // Each content of the tree with its copy on tmpfs, and the fresh pair.
    assert_eq!(plain.groups.len(), expected + 1, "{}", show(&plain.sets()));
}

#[test]
fn the_order_of_the_disk_finds_the_same_groups_on_ext4() {
    same_groups_on("ext4", "the_order_of_the_disk_finds_the_same_groups_on_ext4");
}

#[test]
fn the_order_of_the_disk_finds_the_same_groups_on_xfs() {
    same_groups_on("xfs", "the_order_of_the_disk_finds_the_same_groups_on_xfs");
}

/// A value other than 0 or 1 is refused with a message naming the variable.
#[test]
fn a_bad_physical_order_setting_is_refused() {
    let d = tmp();
    let mut c = cmd(d.path());
    c.env("DEDUP_PHYSICAL_ORDER", "yes").args(["find", "."]);
    let out = run(&mut c);
    assert_ne!(out.code, Some(0), "{}", out.dump());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("DEDUP_PHYSICAL_ORDER"),
        "{}",
        out.dump()
    );
}

/// Read requests the block device under `mnt` has completed (`/sys/dev/block/M:m/stat`).
fn reads_of(mnt: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let dev = fs::metadata(mnt).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let stat = fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/stat")).unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// Small candidates written one after another lie back to back on the disk; read in its order,
/// they reach the device in merged requests (one `madvise` over a batch of them), not one
/// request each as with one `posix_fadvise` a file.
#[test]
fn small_files_read_in_the_order_of_the_disk_reach_it_in_merged_requests() {
    let test = "small_files_read_in_the_order_of_the_disk_reach_it_in_merged_requests";
    let Some(fs) = LoopFs::with_size("ext4", test, 300 << 20) else { return };
    let tree = fs.mnt.join("t");
    const FILES: u64 = 400;
    for i in 0..FILES {
        write(&tree, &format!("f{i:03}"), &pattern(6000, i));
    }
    evict(&tree);
    let before = reads_of(&fs.mnt);
    let report = find_ordered(&fs.mnt, &[tree.as_path()], "1");
    let reads = reads_of(&fs.mnt) - before;
    assert_eq!(report.groups.len(), 0, "{}", show(&report.sets()));
    assert_eq!(report.summary.errors, 0);
    assert!(reads < FILES / 4, "{reads} read requests for {FILES} files of 6,000 bytes");
}
