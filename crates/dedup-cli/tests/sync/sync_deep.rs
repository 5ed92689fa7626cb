//! A tree deeper than a path the kernel takes in one call (`PATH_MAX`, 4096 bytes) names from
//! its root: the walk reaches every level, so every change must too. Each directory is reached
//! from its root's descriptor a run of names at a time, still following no symlink.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::mirror::*;
use common::*;

/// Levels of [`name`]: 6030 bytes, half again PATH_MAX, and few levels (the walk's cost grows
/// with the square of the depth).
const LEVELS: usize = 30;

/// A directory name of 200 bytes.
fn name() -> String {
    "d".repeat(200)
}

/// `script` run by `sh` in `dir` after going down the whole chain (`cd -P`, one name at a time:
/// a logical `cd` would ask the kernel for the whole path).
fn at_the_bottom(dir: &Path, script: &str) {
    let down = format!(
        "i=0; while [ $i -lt {LEVELS} ]; do cd -P {} || exit 1; i=$((i+1)); done; {script}",
        name()
    );
    let out = Command::new("sh").current_dir(dir).args(["-c", &down]).output().unwrap();
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Each file below `root` by depth, size and name: `find` walks any depth.
fn files(root: &Path) -> String {
    let out = Command::new("find")
        .current_dir(root)
        .args([".", "-type", "f", "-printf", "%d %s %f\n"])
        .output()
        .unwrap();
    assert!(out.status.success(), "find: {}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<_> =
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
    lines.sort();
    lines.join("\n")
}

#[test]
fn a_tree_deeper_than_path_max_is_mirrored_whole_and_kept_up_to_date() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    std::fs::create_dir(&s).unwrap();
    let ok = Command::new("mkdir")
        .current_dir(&s)
        .arg("-p")
        .arg(format!("{}/", name()).repeat(LEVELS))
        .status();
    assert!(ok.unwrap().success(), "GNU mkdir -p goes down one name at a time");
    at_the_bottom(&s, "echo leaf > leaf; cd -P ../../.. && echo mid > mid");
    let want = files(&s);
    assert_eq!(want, format!("{} 4 mid\n{} 5 leaf", LEVELS - 2, LEVELS + 1));
    let first = sync(&[s.clone(), d.clone()]);
    first.assert_code(0);
    assert_eq!(files(&d), want, "{}", first.dump());
    let again = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "{}", again.dump());
    // A change at the bottom, and a deletion near it.
    at_the_bottom(&s, "echo changed > leaf; rm ../../../mid");
    let third = sync(&[os(b"--delete"), s.clone().into(), d.clone().into()]);
    third.assert_code(0);
    assert_eq!(files(&d), files(&s), "{}", third.dump());
}
