//! `dedup sync --delete` against `rsync -aHSX --delete` as an oracle: on random small trees,
//! each synced over a random earlier state of the destination, both tools must leave the same
//! tree (content, kinds, modes, regular files' times, symlink targets, hard links, xattrs); and
//! with random lists of include and exclude rules, or random `--files-from` lists, both must
//! keep, copy and delete the same entries.

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
    rsync_with(s, d, &[]);
}

fn rsync_with(s: &Path, d: &Path, args: &[String]) {
    let ok = Command::new("rsync")
        .arg("-aHSX")
        .arg("--delete")
        .args(args)
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

/// A random tree of directories `d0`..`d2`, files `f0.x`, `f1.y`, `g.x` and symlinks `l0`
/// (kinds never share a name, so no entry changes kind between SRC and DST).
fn named_tree(root: &Path, rng: &mut Rng) {
    fs::create_dir_all(root).unwrap();
    let mut dirs = vec![String::new()];
    for _ in 0..(4 + rng.below(16)) {
        let parent = dirs[rng.pick(dirs.len())].clone();
        match rng.below(6) {
            0..=1 if parent.matches('/').count() < 3 => {
                let name = format!("{parent}d{}", rng.below(3));
                fs::create_dir_all(root.join(&name)).unwrap();
                dirs.push(format!("{name}/"));
            }
            2 => {
                let _ = std::os::unix::fs::symlink("t", root.join(format!("{parent}l0")));
            }
            _ => {
                let name = ["f0.x", "f1.y", "g.x"][rng.pick(3)];
                write(root, &format!("{parent}{name}"), &pattern(1 + rng.pick(300), rng.next()));
                set_mtime(&root.join(format!("{parent}{name}")), 1_600_000_000, 0);
            }
        }
    }
}

/// A random rsync pattern over the names of [`named_tree`].
fn random_pattern(rng: &mut Rng) -> String {
    const PARTS: &[&str] =
        &["*", "**", "d?", "d0", "d1", "f*", "*.x", "[dg]*", "g.x", "l0", "?1*", "***", "[!d]*"];
    let mut p = String::new();
    if rng.chance(25) {
        p.push('/');
    }
    for i in 0..(1 + rng.below(3)) {
        if i > 0 {
            p.push('/');
        }
        p.push_str(PARTS[rng.pick(PARTS.len())]);
    }
    if rng.chance(25) {
        p.push('/');
    }
    p
}

/// Asserts that `ours` and `theirs` hold the same entries alike (directories' and symlinks' times
/// aside, which rsync does not always keep).
fn assert_same_trees(ours: &Path, theirs: &Path, what: &str) {
    let (a, b) = (describe(ours), describe(theirs));
    let keys = |m: &std::collections::BTreeMap<Vec<u8>, Node>| {
        m.keys().map(|k| String::from_utf8_lossy(k).into_owned()).collect::<Vec<_>>()
    };
    assert_eq!(keys(&a), keys(&b), "{what}");
    for (k, v) in &a {
        let (mut v, mut w) = (v.clone(), b[k].clone());
        if v.kind != "file" {
            (v.mtime_ns, w.mtime_ns) = (0, 0);
        }
        assert_eq!(v, w, "{what}: {}", String::from_utf8_lossy(k));
    }
}

/// `cases` random cases against rsync: SRC and an earlier DST from [`named_tree`], then `dedup
/// sync --delete` and `rsync -aHSX --delete`, each over its own copy of the earlier DST and each
/// given the flags `flags` makes (from the case's directory, SRC and the generator); both must
/// exit 0 and leave the same tree.
fn against_rsync(
    test: &str,
    cases: u64,
    seed: u64,
    flags: &dyn Fn(&Path, &Path, &mut Rng) -> Vec<String>,
) {
    let have = Command::new("rsync").arg("--version").output().is_ok();
    if !require(have, test, "rsync not installed") {
        return;
    }
    for case in 0..cases {
        let t = tmp();
        let mut rng = Rng(seed ^ (case * 0x9e37_79b9));
        let (s, earlier) = (t.path().join("src"), t.path().join("earlier"));
        named_tree(&earlier, &mut rng);
        named_tree(&s, &mut rng);
        let flags = flags(t.path(), &s, &mut rng);
        let (ours, theirs) = (t.path().join("ours"), t.path().join("theirs"));
        for d in [&ours, &theirs] {
            rsync(&earlier, d);
        }
        // rsync mirrors a SRC with nothing to mirror (its every entry excluded) too.
        let mut args: Vec<std::ffi::OsString> = vec![os(b"--delete"), os(b"--allow-empty-source")];
        args.extend(flags.iter().map(|f| os(f.as_bytes())));
        args.extend([s.clone().into(), ours.clone().into()]);
        sync(&args).assert_code(0);
        rsync_with(&s, &theirs, &flags);
        assert_same_trees(&ours, &theirs, &format!("case {case}: {flags:?}"));
    }
}

/// A random `--files-from` list of SRC's paths, written in every form rsync reads (a leading
/// `/`, `../` or `./`, a trailing `/` on a directory, comments), and `-r` half the time.
fn random_list(dir: &Path, s: &Path, rng: &mut Rng) -> Vec<String> {
    let paths: Vec<(String, bool)> = describe(s)
        .into_iter()
        .filter(|(k, _)| k != b".")
        .map(|(k, n)| (String::from_utf8_lossy(&k).into_owned(), n.kind == "dir"))
        .collect();
    let mut list = String::new();
    for _ in 0..(1 + rng.below(5)) {
        let Some((p, is_dir)) = paths.get(rng.pick(paths.len().max(1))).cloned() else {
            break;
        };
        let prefix = ["", "/", "../", "./"][rng.pick(4)];
        let slash = if is_dir && rng.chance(50) { "/" } else { "" };
        list.push_str(&format!("{prefix}{p}{slash}\n"));
    }
    if rng.chance(15) {
        list.push_str("# a comment\n\n");
    }
    let file = write(dir, "list", list.as_bytes());
    let mut flags = vec![format!("--files-from={}", file.display())];
    if rng.chance(50) {
        flags.push("-r".to_string());
    }
    flags
}

#[test]
fn files_from_lists_mirror_and_delete_what_rsync_does() {
    let test = "files_from_lists_mirror_and_delete_what_rsync_does";
    against_rsync(test, 30, 0x51_7cc1_b727_220a, &random_list);
}

/// A random list of one to four include and exclude rules, `--delete-excluded` now and then.
fn random_rules(_: &Path, _: &Path, rng: &mut Rng) -> Vec<String> {
    let mut rules = Vec::new();
    for _ in 0..(1 + rng.below(4)) {
        let kind = if rng.chance(40) { "--include" } else { "--exclude" };
        rules.push(format!("{kind}={}", random_pattern(rng)));
    }
    if rng.chance(20) {
        rules.push("--delete-excluded".to_string());
    }
    rules
}

#[test]
fn include_and_exclude_rules_keep_copy_and_delete_what_rsync_does() {
    let test = "include_and_exclude_rules_keep_copy_and_delete_what_rsync_does";
    against_rsync(test, 40, 0x9e37_79b9_7f4a_7c15, &random_rules);
}
