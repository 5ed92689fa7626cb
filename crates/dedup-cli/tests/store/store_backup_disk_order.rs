//! `dedup store backup` asking for its files in the order of the source's disk
//! (`DEDUP_PHYSICAL_ORDER=1`) on a real ext4 file system on a loop device, cold: the snapshot
//! restores byte for byte (odd names, hard links, sparse and empty files, a symlink, files of
//! many sizes in directories written out of name order), the same as one taken with the order
//! off; a file that keeps changing through the run is flagged as without it, and the rest still
//! restores whole.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::act::LoopFs;
use common::page_cache::evict;
use common::store::*;
use common::*;

/// Files of many sizes over directories written out of name order (ext4 spreads top-level
/// directories over the disk), with odd names, a hard link, a sparse, an empty file, a symlink.
fn fill(src: &Path) {
    for d in (0..5).rev() {
        for f in (0..10).rev() {
            let len = [1usize, 700, 4096, 20_000, 130_000, 300_000][(d + f) % 6];
            write(src, &format!("d{d}/sub/f{f:02}"), &pattern(len, (d * 100 + f) as u64));
        }
    }
    awkward_entries(src, 3 << 20, 4 << 20);
}

/// `dedup store backup SRC` with `DEDUP_PHYSICAL_ORDER` set to `order`.
fn backup_ordered(repo: &Path, src: &Path, order: &str) -> Out {
    let mut c = store_cmd(repo);
    c.env("DEDUP_PHYSICAL_ORDER", order).arg("backup").arg(src);
    run(&mut c)
}

/// What the run wrote on stderr.
fn err(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Restores the latest snapshot of `src` into `target`, expecting exit status `code`; what the
/// restore printed on stderr and what the target looks like.
fn restored(
    repo: &Path,
    src: &Path,
    target: &Path,
    code: i32,
) -> (String, BTreeMap<Vec<u8>, Seen>) {
    let spec = format!("latest:{}", src.display());
    let args = [OsStr::new("restore"), OsStr::new(&spec), "--target".as_ref(), target.as_os_str()];
    let out = store(repo, &args);
    out.assert_code(code);
    (err(&out), look(target))
}

#[test]
fn a_backup_in_the_order_of_the_disk_restores_byte_for_byte_on_ext4() {
    let test = "a_backup_in_the_order_of_the_disk_restores_byte_for_byte_on_ext4";
    let Some(loop_fs) = LoopFs::with_size("ext4", test, 200 << 20) else { return };
    let src = loop_fs.mnt.join("src");
    fill(&src);
    let expected = look(&src);
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);

    for (n, order) in ["1", "0"].into_iter().enumerate() {
        evict(&src);
        backup_ordered(&repo, &src, order).assert_code(0);
        let target = dir.path().join(format!("restored-{n}"));
        assert_looks_equal(&expected, &restored(&repo, &src, &target, 0).1, order);
    }

    // Kept changing through the run: flagged, without content; the rest whole.
    let busy = src.join("d3/busy");
    fs::File::create(&busy).unwrap().set_len(256 << 20).unwrap();
    let mut expected = look(&src);
    evict(&src);
    let stop = Arc::new(AtomicBool::new(false));
    let toucher = keep_touching(&busy, Arc::clone(&stop));
    let out = backup_ordered(&repo, &src, "1");
    stop.store(true, Ordering::SeqCst);
    toucher.join().unwrap();
    out.assert_code(1);
    assert!(err(&out).contains("busy: changed while it was read"), "{}", out.dump());
    // The file the backup could not read whole is named and left out; the rest is restored.
    let (said, mut found) = restored(&repo, &src, &dir.path().join("restored-busy"), 1);
    assert!(said.contains("busy: not restored: the backup could not read it whole"), "{said}");
    let key = b"d3/busy".to_vec();
    assert!(found.remove(&key).is_none_or(|seen| seen.data.is_empty()), "{}", out.dump());
    expected.remove(&key);
    assert_looks_equal(&expected, &found, "with a busy file");
}

#[test]
fn a_physical_order_that_is_neither_0_nor_1_is_refused_by_name() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "f", b"x");
    init_repo(&repo);
    let out = backup_ordered(&repo, &src, "yes");
    out.assert_code(2);
    assert!(err(&out).contains("DEDUP_PHYSICAL_ORDER"), "{}", out.dump());
    let listed = store(&repo, &["snapshots", "--json"]);
    assert!(String::from_utf8_lossy(&listed.stdout).trim().starts_with("[]"), "{}", listed.dump());
}
