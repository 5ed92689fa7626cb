//! `dedup sync --delete` against `rsync -aHSX --delete` as an oracle: on random small trees,
//! each synced over a random earlier state of the destination, both tools must leave the same
//! tree (content, kinds, modes, regular files' times, symlink targets, hard links, xattrs).

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::mirror::*;
use common::*;

/// A random tree: files (some empty, some hard-linked), directories, symlinks, FIFOs, xattrs.
fn random_tree(root: &Path, rng: &mut Rng) {
    fs::create_dir_all(root).unwrap();
    let mut dirs = vec![String::new()];
    let mut files: Vec<String> = Vec::new();
    for i in 0..(5 + rng.below(25)) {
        let parent = dirs[rng.below(dirs.len() as u64) as usize].clone();
        let name = format!("{parent}{}{i}", ["a", "b", "c"][rng.below(3) as usize]);
        match rng.below(10) {
            0..=1 => {
                fs::create_dir_all(root.join(&name)).unwrap();
                dirs.push(format!("{name}/"));
            }
            2 if !files.is_empty() => {
                let target = files[rng.below(files.len() as u64) as usize].clone();
                hardlink(root, &target, &name);
            }
            3 => symlink(root, &format!("t{}", rng.below(4)), &name),
            4 => mkfifo(&root.join(&name)),
            _ => {
                let len = [0, 1, 100, 5000, 70_000][rng.below(5) as usize];
                write(root, &name, &pattern(len, rng.next()));
                chmod(&root.join(&name), [0o644, 0o600, 0o755][rng.below(3) as usize]);
                if rng.below(4) == 0 {
                    set_xattr(&root.join(&name), "user.x", &format!("v{}", rng.below(3)));
                }
                set_mtime(
                    &root.join(&name),
                    1_600_000_000 + rng.below(3) as i64,
                    rng.below(3) as i64,
                );
                files.push(name);
            }
        }
    }
}

fn rsync(s: &Path, d: &Path) {
    let ok = Command::new("rsync")
        .arg("-aHSX")
        .arg("--delete")
        .arg(format!("{}/", s.display()))
        .arg(format!("{}/", d.display()))
        .status()
        .unwrap()
        .success();
    assert!(ok, "rsync failed");
}

#[test]
fn dedup_sync_leaves_what_rsync_ahsx_delete_leaves() {
    let have = Command::new("rsync").arg("--version").output().is_ok();
    if !require(have, "dedup_sync_leaves_what_rsync_ahsx_delete_leaves", "rsync not installed") {
        return;
    }
    for case in 0..12u64 {
        let t = tmp();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (case * 0x9e37_79b9));
        let (s, earlier) = (t.path().join("src"), t.path().join("earlier"));
        random_tree(&earlier, &mut rng);
        random_tree(&s, &mut rng);
        let (ours, theirs) = (t.path().join("ours"), t.path().join("theirs"));
        for d in [&ours, &theirs] {
            rsync(&earlier, d);
        }
        // Half the cases start from an older copy of the source itself.
        if case % 2 == 0 {
            for d in [&ours, &theirs] {
                rsync(&s, d);
            }
            random_tree(&s.join("later"), &mut rng);
        }
        let out = sync(&[os(b"--delete"), s.clone().into(), ours.clone().into()]);
        out.assert_code(0);
        rsync(&s, &theirs);
        let (a, b) = (describe(&ours), describe(&theirs));
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "case {case}");
        // rsync keeps the time of regular files only: it leaves some directories with the time
        // of its own writes into them, new FIFOs with the time it made them, and a symlink of
        // the right target with its old time. dedup's times of those are checked against the
        // source itself below.
        let no_dir_time = |n: &Node| {
            let mut n = n.clone();
            if n.kind != "file" {
                n.mtime_ns = 0;
            }
            n
        };
        for (k, v) in &a {
            let w = b.get(k).map(no_dir_time);
            assert_eq!(Some(no_dir_time(v)), w, "case {case}: {}", String::from_utf8_lossy(k));
        }
        assert_mirror(&s, &ours);
    }
}
