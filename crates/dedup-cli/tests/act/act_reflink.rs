//! `dedup reflink` on real btrfs and XFS file systems (loop devices made by the test): extents
//! shared, space freed, every file keeps its own inode and metadata; on a file system without
//! reflinks a clear message and nothing copied.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::act::*;
use common::*;

const SIZE: usize = 24 << 20;

fn make(d: &Path) -> Vec<u8> {
    let data = pattern(SIZE, 31);
    write(d, "t/keep", &data);
    write(d, "t/dup1", &data);
    write(d, "t/sub/dup2", &data);
    // Distinct metadata the duplicates must keep (the point of reflink over link).
    chmod(&d.join("t/dup1"), 0o600);
    std::os::unix::fs::chown(d.join("t/dup1"), Some(1234), Some(4321)).unwrap();
    let old = SystemTime::now() - Duration::from_secs(86_400 * 30);
    fs::File::options().write(true).open(d.join("t/sub/dup2")).unwrap().set_modified(old).unwrap();
    data
}

fn stamps(p: &Path) -> (u32, u32, u32, i64, i64, u64) {
    let m = fs::symlink_metadata(p).unwrap();
    (m.mode(), m.uid(), m.gid(), m.mtime(), m.mtime_nsec(), m.ino())
}

fn reflink_on(kind: &str, test: &str) {
    let Some(lfs) = LoopFs::new(kind, test) else { return };
    let d = lfs.mnt.as_path();
    make(d);
    let before = contents(d);
    let meta_before: Vec<_> =
        ["t/keep", "t/dup1", "t/sub/dup2"].iter().map(|p| stamps(&d.join(p))).collect();
    let dry = dedup(d, &["reflink", "--dry-run", "t"]);
    dry.assert_code(0);
    let free_before = free_bytes(d);
    let out = dedup(d, &["reflink", "t"]);
    out.assert_code(0);
    assert_eq!(stdout(&dry), stdout(&out), "{kind}: dry run differs from the real run");
    assert_eq!(stdout(&out).lines().count(), 2, "{}", out.dump());
    assert_same_contents(&before, d, &out);
    let meta_after: Vec<_> =
        ["t/keep", "t/dup1", "t/sub/dup2"].iter().map(|p| stamps(&d.join(p))).collect();
    assert_eq!(meta_before, meta_after, "{kind}: reflink changed metadata or inodes");
    let freed = free_bytes(d).saturating_sub(free_before);
    assert!(
        freed >= (2 * SIZE as u64) * 9 / 10,
        "{kind}: only {freed} bytes freed for two {SIZE}-byte duplicates\n{}",
        out.dump()
    );
    assert!(stderr(&out).contains("sharing extents"), "{}", out.dump());
    // Again: already shared, nothing breaks, content still right.
    dedup(d, &["reflink", "t"]).assert_code(0);
    assert_same_contents(&before, d, &out);
}

#[test]
fn reflink_shares_extents_on_btrfs() {
    reflink_on("btrfs", "reflink_shares_extents_on_btrfs");
}

#[test]
fn reflink_shares_extents_on_xfs() {
    reflink_on("xfs", "reflink_shares_extents_on_xfs");
}

#[test]
fn reflink_skips_files_changed_since_the_report_on_btrfs() {
    let Some(lfs) = LoopFs::new("btrfs", "reflink_skips_files_changed_since_the_report_on_btrfs")
    else {
        return;
    };
    let d = lfs.mnt.as_path();
    let data = make(d);
    save_report(d, &["t"], &d.join("r.json"));
    fs::write(d.join("t/dup1"), flip(&data, SIZE - 1)).unwrap();
    let out = dedup(d, &["reflink", "--from", "r.json"]);
    out.assert_code(1);
    out.assert_message("skipped", "t/dup1");
    assert_eq!(fs::read(d.join("t/dup1")).unwrap(), flip(&data, SIZE - 1));
    assert_eq!(fs::read(d.join("t/sub/dup2")).unwrap(), data);
}

#[test]
fn reflink_without_support_copies_nothing_and_says_why() {
    let Some(tfs) = Tmpfs::new("reflink_without_support_copies_nothing_and_says_why") else {
        return;
    };
    let d = tfs.mnt.as_path();
    let data = pattern(100_000, 3);
    write(d, "t/a", &data);
    write(d, "t/b", &data);
    let inodes_before = inodes(d);
    let free_before = free_bytes(d);
    let out = dedup(d, &["reflink", "t"]);
    out.assert_code(1);
    out.assert_message("skipped", "t/b");
    assert!(stderr(&out).contains("cannot share extents"), "{}", out.dump());
    assert_eq!(inodes(d), inodes_before);
    assert_eq!(free_bytes(d), free_before);
    assert_eq!(fs::read(d.join("t/b")).unwrap(), data);
    // --script has no honest way to do it either.
    let script = dedup(d, &["reflink", "--script", "t"]);
    script.assert_code(2);
    assert!(stderr(&script).contains("not available for reflink"));
}
