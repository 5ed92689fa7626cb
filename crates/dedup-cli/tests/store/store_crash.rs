//! `kill -9` during `dedup store backup`, at points spread over the backup's own duration:
//! afterwards `check` finds at most unreferenced packs, the earlier snapshot restores exactly, and
//! the next backup completes without uploading again what the killed one had stored.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use common::store::*;
use common::*;

/// Asserts `check` passes, and returns its warnings (each must be about an unindexed pack).
#[track_caller]
fn check_clean(repo: &Path, read_data: bool) -> Vec<String> {
    let out = store(repo, if read_data { &["check", "--read-data"][..] } else { &["check"] });
    out.assert_code(0);
    let warnings: Vec<String> = out.stderr_lines();
    for line in &warnings {
        assert!(line.contains("not in any index"), "check found more than garbage: {line}");
    }
    warnings
}

fn trees(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (earlier, big) = (dir.join("earlier"), dir.join("big"));
    fs::create_dir_all(earlier.join("sub")).unwrap();
    fs::write(earlier.join("a"), pattern(200_000, 1)).unwrap();
    fs::write(earlier.join("sub/b"), pattern(50_000, 2)).unwrap();
    // Incompressible files over many chunks and packs, in a few directories.
    for d in 0..4u64 {
        fs::create_dir_all(big.join(format!("d{d}"))).unwrap();
        for f in 0..6u64 {
            fs::write(big.join(format!("d{d}/f{f}")), pattern(1 << 20, 10 + 8 * d + f)).unwrap();
        }
    }
    (earlier, big)
}

/// A repository like [`init_repo`]'s, unencrypted: its packs are not padded (docs/store-format.md
/// §7), so that the bytes stored count what was uploaded to within a little per pack, where the
/// padding of an encrypted one (up to 64 KiB a pack) would hide a chunk stored twice.
fn init_unpadded(repo: &std::path::Path) {
    let args = ["init", "--insecure-no-encryption", "--pack-size", "1M", "--chunker"];
    store_ok(repo, &[&args[..], &["fastcdc:16K/64K/256K"]].concat());
}

#[test]
fn a_backup_killed_at_any_point_leaves_a_sound_repository_and_its_work_is_reused() {
    let dir = tmp();
    let (earlier, big) = trees(dir.path());
    let (earlier_look, big_look) = (look(&earlier), look(&big));

    // A clean run, to learn what a full backup adds and how long it takes here.
    let reference = dir.path().join("reference");
    init_unpadded(&reference);
    backup_json(&reference, &earlier);
    let started = Instant::now();
    let full = backup_json(&reference, &big);
    let duration = started.elapsed();
    let full_added = full["bytes_added"].as_u64().unwrap();

    for (round, fraction) in [0.1, 0.3, 0.5, 0.7, 0.85, 0.95, 1.1].into_iter().enumerate() {
        let repo = dir.path().join(format!("repo-{round}"));
        init_unpadded(&repo);
        let first = backup_json(&repo, &earlier)["snapshot"].as_str().unwrap().to_string();
        let packs_before = pack_bytes(&repo);
        let mut child = std::process::Command::new(BIN)
            .args(["store", "backup", "-r"])
            .arg(&repo)
            .arg(&big)
            .env("DEDUP_PASSWORD", PASSWORD)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(duration.mul_f64(fraction));
        let _ = child.kill();
        let _ = child.wait();
        let left = pack_bytes(&repo) - packs_before;
        let what = format!("killed after {:.0} % of a backup's time", fraction * 100.0);

        check_clean(&repo, false);
        let target = dir.path().join(format!("earlier-{round}"));
        assert_restores(&repo, &first[..8], &earlier, &target, &earlier_look);

        let resumed = backup_json(&repo, &big);
        let added = resumed["bytes_added"].as_u64().unwrap();
        // Pack headers and trailers may split differently: a little slack per pack.
        assert!(
            added + left <= full_added + (16 << 10),
            "{what}: {left} bytes were stored before the kill, then {added} more, \
             against {full_added} for a whole backup: work was uploaded twice"
        );
        // Reuse shows only beyond the same slack: a killed run that left a pack smaller than
        // the difference its absence makes to the headers and trailers may not lower the total.
        if left > (16 << 10) {
            assert!(
                added < full_added,
                "{what}: nothing of the killed run was reused ({left} bytes left, {added} added)"
            );
        }
        let warnings = check_clean(&repo, true);
        assert!(warnings.is_empty(), "{what}: packs still unindexed: {warnings:?}");
        // The killed run's marker, stale since its process is gone, made the resumed backup
        // adopt its packs; once they were indexed, the marker was deleted. A kill while the
        // marker was being written leaves only its hidden temporary (`.tmp-…`), which no reader
        // takes for a marker and `prune` removes.
        let markers = fs::read_dir(repo.join("writers"))
            .map(|d| {
                d.flatten().filter(|e| !e.file_name().to_string_lossy().starts_with('.')).count()
            })
            .unwrap_or(0);
        assert_eq!(markers, 0, "{what}: writer markers left after the resumed backup");
        let target = dir.path().join(format!("big-{round}"));
        assert_restores(&repo, &snapshot_of(&repo, &big), &big, &target, &big_look);
        let target = dir.path().join(format!("earlier-again-{round}"));
        assert_restores(&repo, &first[..8], &earlier, &target, &earlier_look);
        eprintln!("{what}: {left} bytes left, {added} added on resuming ({full_added} in full)");
        let _ = fs::remove_dir_all(&repo);
    }
}
