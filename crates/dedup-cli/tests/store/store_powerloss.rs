//! Power loss: backups and a prune on a repository on ext4 over a loop device, cut off at
//! points through their run. The cut takes the device's content at one instant — a reflink copy
//! of the loop device's backing file, on XFS, which the kernel makes with the file locked
//! against the loop device's writes — which is what a disk holds after a power cut: every write
//! the file system sent to it, none of what was still in the page cache. (dm-flakey's
//! `drop_writes` gives the same cut, and dm-log-writes finer ones, but they need the kernel's
//! device mapper, which the test machines lack.) Mounted again, its journal replayed, the
//! repository must check clean (or with only garbage that prune removes), restore every
//! snapshot finished before the cut (or kept by the prune) byte for byte, and take the next
//! backup.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::act::LoopFs;
use common::store::*;
use common::*;

/// A file system image mounted with `mount -o loop`, unmounted when dropped.
struct Mounted {
    at: PathBuf,
}

impl Mounted {
    fn new(image: &Path, at: &Path) -> Mounted {
        fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount").args(["-o", "loop"]).arg(image).arg(at).status();
        assert!(ok.is_ok_and(|s| s.success()), "mount -o loop {} failed", image.display());
        Mounted { at: at.to_path_buf() }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.at).status();
    }
}

/// The device's content at this instant, as a power cut would leave it.
fn cut_power(image: &Path, copy: &Path) {
    let ok = Command::new("cp").arg("--reflink=always").arg(image).arg(copy).status();
    assert!(ok.is_ok_and(|s| s.success()), "reflink copy of {} failed", image.display());
}

/// Changes the source for backup `round`: a file rewritten, one added.
fn change(src: &Path, round: u64) {
    for f in 0..3u64 {
        write(src, &format!("r{round}/f{f}"), &pattern(400_000, 1000 * round + f));
    }
    write(src, "base/f0", &pattern(300_000, 77 + round));
}

/// An XFS file system (for reflink copies) holding the image of an ext4 file system.
struct Rig {
    outer: LoopFs,
    image: PathBuf,
}

impl Rig {
    /// None (after `require`) when loop devices, XFS reflinks or mkfs.ext4 are missing.
    fn new(test: &str) -> Option<Rig> {
        let outer = LoopFs::with_size("xfs", test, 400 << 20)?;
        let probe = outer.mnt.join("probe");
        fs::write(&probe, b"x").unwrap();
        let reflinks = Command::new("cp")
            .arg("--reflink=always")
            .arg(&probe)
            .arg(outer.mnt.join("probe2"))
            .status()
            .is_ok_and(|s| s.success());
        if !require(reflinks, test, "cp --reflink=always does not work on XFS here") {
            return None;
        }
        let made = Command::new("mkfs.ext4").arg("-V").output().is_ok();
        if !require(made, test, "mkfs.ext4 not installed (apt-get install e2fsprogs)") {
            return None;
        }
        let image = outer.mnt.join("disk.img");
        fs::File::create(&image).unwrap().set_len(160 << 20).unwrap();
        let ok = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image).status();
        assert!(ok.is_ok_and(|s| s.success()), "mkfs.ext4 failed");
        Some(Rig { outer, image })
    }

    /// A path for another image beside the first.
    fn image(&self, name: &str) -> PathBuf {
        self.outer.mnt.join(name)
    }
}

#[test]
fn a_power_cut_during_or_after_a_backup_leaves_a_sound_repository() {
    let Some(rig) = Rig::new("a_power_cut_during_or_after_a_backup_leaves_a_sound_repository")
    else {
        return;
    };
    let (outer, image) = (&rig.outer, &rig.image);
    let dir = tmp();
    let src = dir.path().join("src");
    for f in 0..4u64 {
        write(&src, &format!("base/f{f}"), &pattern(300_000, f));
    }
    let live = Mounted::new(image, &dir.path().join("live"));
    let repo = live.at.join("repo");
    init_repo(&repo);
    let started = std::time::Instant::now();
    backup_json(&repo, &src);
    // Each later backup stores about as much as this first one: cuts at fractions of its time
    // fall through the run however fast the machine is.
    let took = started.elapsed();
    // Snapshots finished before each cut, with the tree each backed up.
    let mut done: BTreeMap<String, BTreeMap<Vec<u8>, Seen>> = BTreeMap::new();
    done.insert(snapshot_of(&repo, &src), look(&src));

    // Cut at these fractions of the first backup's time into a backup; None: just after it.
    let points = [Some(0.0), Some(0.2), Some(0.4), Some(0.6), Some(0.8), None];
    for (round, point) in points.into_iter().enumerate() {
        let round = round as u64 + 1;
        change(&src, round);
        let expected = look(&src);
        let mut backup = spawn_store(&repo, &["backup", src.to_str().unwrap()]);
        let copy = outer.mnt.join(format!("cut{round}.img"));
        let before_cut = done.clone();
        match point {
            Some(fraction) => {
                std::thread::sleep(took.mul_f64(fraction));
                cut_power(image, &copy);
                assert!(backup.wait().unwrap().success(), "round {round}: backup failed");
            }
            None => {
                assert!(backup.wait().unwrap().success(), "round {round}: backup failed");
                cut_power(image, &copy);
            }
        }
        let finished = snapshot_of(&repo, &src);
        done.insert(finished.clone(), expected.clone());
        let what = match point {
            Some(fraction) => format!("cut at {fraction} of a backup's time into backup {round}"),
            None => format!("cut just after backup {round}"),
        };

        let cut = Mounted::new(&copy, &dir.path().join(format!("cut{round}")));
        let cut_repo = cut.at.join("repo");
        let out = store(&cut_repo, &["check"]);
        // What the cut caught, for the log: the test means most when some cuts fall mid-run.
        eprintln!(
            "{what}: the cut holds {} of {} packs; the backup's snapshot: {}",
            repo_names(&cut_repo, "data").len(),
            repo_names(&repo, "data").len(),
            if cut_repo.join("snapshots").join(&finished).exists() { "present" } else { "lost" }
        );
        assert_eq!(out.code(), 0, "{what}: check\n{}", out.dump());
        let list: serde_json::Value =
            serde_json::from_str(&store_ok(&cut_repo, &["snapshots", "--json"])).unwrap();
        let present: Vec<String> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        for id in before_cut.keys() {
            assert!(present.contains(id), "{what}: snapshot {id}, finished before, is gone");
        }
        for id in &present {
            let tree = done.get(id).unwrap_or_else(|| panic!("{what}: unknown snapshot {id}"));
            let target = dir.path().join(format!("restore-{round}-{}", &id[..8]));
            assert_restores(&cut_repo, &id[..8], &src, &target, tree);
            fs::remove_dir_all(&target).unwrap();
        }
        if point.is_none() {
            assert!(present.contains(&finished), "{what}: the finished backup's snapshot is lost");
        }
        // What the cut left half-written is garbage that prune removes; the next backup runs.
        store_ok(&cut_repo, &["prune"]);
        backup_json(&cut_repo, &src);
        let out = store(&cut_repo, &["check", "--read-data"]);
        assert_eq!(
            out.code(),
            0,
            "{what}: check --read-data after prune and a backup\n{}",
            out.dump()
        );
        assert!(out.stderr_lines().is_empty(), "{what}: {}", out.dump());
        let target = dir.path().join(format!("restore-{round}-next"));
        assert_restores(&cut_repo, "latest", &src, &target, &expected);
        fs::remove_dir_all(&target).unwrap();
        drop(cut);
        fs::remove_file(&copy).unwrap();
    }
}

#[test]
fn a_power_cut_during_a_prune_loses_no_snapshot_it_keeps() {
    let Some(rig) = Rig::new("a_power_cut_during_a_prune_loses_no_snapshot_it_keeps") else {
        return;
    };
    let dir = tmp();
    let src = dir.path().join("src");
    for f in 0..4u64 {
        write(&src, &format!("base/f{f}"), &pattern(300_000, f));
    }
    // Five snapshots, the last two kept: a prune with nothing left unused repacks and deletes.
    let mut versions = Vec::new();
    {
        let live = Mounted::new(&rig.image, &dir.path().join("base"));
        let repo = live.at.join("repo");
        init_repo(&repo);
        for round in 0..5u64 {
            if round > 0 {
                change(&src, round);
            }
            backup_json(&repo, &src);
            versions.push((snapshot_of(&repo, &src), look(&src)));
        }
        store_ok(&repo, &["forget", "--keep-last", "2"]);
        // Unmounted here: every cut below starts from this state whole on the device.
    }
    let kept = &versions[3..];

    // How long a whole prune takes, measured on a copy, places the cuts through its run.
    let timing = rig.image("timing.img");
    cut_power(&rig.image, &timing);
    let took = {
        let mounted = Mounted::new(&timing, &dir.path().join("timing"));
        let started = std::time::Instant::now();
        store_ok(&mounted.at.join("repo"), &["prune", "--max-unused", "0"]);
        started.elapsed()
    };
    fs::remove_file(&timing).unwrap();

    for (n, fraction) in [0.0, 0.2, 0.4, 0.6, 0.8].into_iter().enumerate() {
        let what = format!("cut at {fraction} of a prune's time");
        let live_image = rig.image(&format!("live{n}.img"));
        cut_power(&rig.image, &live_image);
        let copy = rig.image(&format!("cut{n}.img"));
        {
            let live = Mounted::new(&live_image, &dir.path().join(format!("live{n}")));
            let mut prune = spawn_store(&live.at.join("repo"), &["prune", "--max-unused", "0"]);
            std::thread::sleep(took.mul_f64(fraction));
            cut_power(&live_image, &copy);
            assert!(prune.wait().unwrap().success(), "{what}: the prune failed");
        }
        fs::remove_file(&live_image).unwrap();

        let cut = Mounted::new(&copy, &dir.path().join(format!("cut{n}")));
        let repo = cut.at.join("repo");
        let out = store(&repo, &["check"]);
        assert_eq!(out.code(), 0, "{what}: check\n{}", out.dump());
        eprintln!("{what}: the cut holds {} packs", repo_names(&repo, "data").len());
        for (id, tree) in kept {
            let target = dir.path().join(format!("restore-{n}-{}", &id[..8]));
            assert_restores(&repo, &id[..8], &src, &target, tree);
            fs::remove_dir_all(&target).unwrap();
        }
        // A prune finishes what the cut one left, and the next backup runs.
        store_ok(&repo, &["prune"]);
        backup_json(&repo, &src);
        let out = store(&repo, &["check", "--read-data"]);
        assert_eq!(
            out.code(),
            0,
            "{what}: check --read-data after prune and a backup\n{}",
            out.dump()
        );
        let target = dir.path().join(format!("restore-{n}-next"));
        assert_restores(&repo, "latest", &src, &target, &versions[4].1);
        fs::remove_dir_all(&target).unwrap();
        drop(cut);
        fs::remove_file(&copy).unwrap();
    }
}
