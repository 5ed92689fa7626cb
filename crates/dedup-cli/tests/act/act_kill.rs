//! kill -9 in the middle of a large run, then a rerun: no path lost, every path still reads the
//! same, no temporary name left behind; and temporary names planted as a crash would leave them
//! are cleaned up, while a lone file that merely looks like one is not touched.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::act::*;
use common::*;

const GROUPS: usize = 2500;

fn big_tree(d: &Path) {
    for g in 0..GROUPS {
        let data = pattern(2048, g as u64 + 1);
        write(d, &format!("t/{:02}/a{g}", g % 50), &data);
        write(d, &format!("t/{:02}/b{g}", (g + 7) % 50), &data);
    }
}

/// Contents without dedup's temporary names (a killed run may leave one: an extra name).
fn real_contents(d: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    contents(d)
        .into_iter()
        .filter(|(k, _)| !k.split(|&b| b == b'/').any(|n| n.starts_with(b".dedup-tmp.")))
        .collect()
}

/// Starts `dedup <action> --log … t`, kills it with SIGKILL once it has made `after` changes.
fn kill_midway(d: &Path, action: &str, after: usize) {
    let log = d.join("../kill.log");
    let _ = fs::remove_file(&log);
    let mut child = Command::new(BIN)
        .args([action, "-q", "--log"])
        .arg(&log)
        .arg("t")
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let lines = fs::read(&log).map(|b| b.iter().filter(|&&c| c == b'\n').count()).unwrap_or(0);
        if lines >= after {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "{action} ended before it could be killed");
        assert!(start.elapsed() < Duration::from_secs(120), "{action} made no progress");
        std::thread::sleep(Duration::from_micros(200));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{action} finished before the kill");
}

fn kill_and_rerun(action: &str) {
    let t = tmp();
    let d = &t.path().join("w");
    fs::create_dir(d).unwrap();
    big_tree(d);
    let before = real_contents(d);
    kill_midway(d, action, 100);
    // Right after the kill: every path is still there and reads the same.
    assert_eq!(real_contents(d), before, "{action}: a path was lost or changed by the kill");
    let out = dedup(d, &[action, "t"]);
    out.assert_code(0);
    assert_same_contents(&before, d, &out);
    assert!(no_temp_names(d), "{action}: temporary names left\n{}", out.dump());
    // Nothing left to do.
    let again = dedup(d, &[action, "t"]);
    again.assert_code(0);
    assert_eq!(stdout(&again), "");
}

#[test]
fn link_killed_midway_then_rerun() {
    kill_and_rerun("link");
}

#[test]
fn symlink_killed_midway_then_rerun() {
    kill_and_rerun("symlink");
}

#[test]
fn remove_killed_midway_then_rerun_keeps_one_copy_of_each() {
    let t = tmp();
    let d = &t.path().join("w");
    fs::create_dir(d).unwrap();
    big_tree(d);
    kill_midway(d, "remove", 100);
    dedup(d, &["remove", "t"]).assert_code(0);
    let left = real_contents(d);
    assert_eq!(left.len(), GROUPS, "exactly one copy of each group must remain");
    let distinct: std::collections::BTreeSet<_> = left.values().collect();
    assert_eq!(distinct.len(), GROUPS);
}

#[test]
fn stray_temporary_names_are_cleaned_up_safely() {
    let t = tmp();
    let d = t.path();
    let data = pattern(3000, 9);
    write(d, "t/a", &data);
    write(d, "t/b", &data);
    // What a crash leaves: a hard link to a kept file, a symlink; and a lone look-alike.
    hardlink(d, "t/a", "t/.dedup-tmp.00000000000000aa");
    symlink(d, "/somewhere", "t/.dedup-tmp.00000000000000bb");
    write(d, "t/.dedup-tmp.00000000000000cc", b"someone else's file");
    let dry = dedup(d, &["link", "--dry-run", "t"]);
    assert!(d.join("t/.dedup-tmp.00000000000000aa").exists(), "dry run removed a stray");
    let out = dedup(d, &["link", "t"]);
    assert_eq!(stdout(&dry), stdout(&out));
    out.assert_code(1);
    assert!(stdout(&out).contains("clean t/.dedup-tmp.00000000000000aa"), "{}", out.dump());
    assert!(fs::symlink_metadata(d.join("t/.dedup-tmp.00000000000000aa")).is_err());
    assert!(fs::symlink_metadata(d.join("t/.dedup-tmp.00000000000000bb")).is_err());
    assert_eq!(fs::read(d.join("t/.dedup-tmp.00000000000000cc")).unwrap(), b"someone else's file");
    out.assert_message("warning", ".dedup-tmp.00000000000000cc");
    assert_eq!(fs::read(d.join("t/b")).unwrap(), data);
}
