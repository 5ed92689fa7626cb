//! Interrupted runs: `dedup sync` killed with SIGKILL at arbitrary points, then run again to the
//! end, leaves DST equal to SRC with none of our temporary names left; with `--backup-dir`, every
//! file the runs replace or delete is at its place or in the backups at every kill.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use common::mirror::*;
use common::*;

#[test]
fn killed_runs_then_a_rerun_leave_an_exact_mirror_and_no_temporary_names() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    for i in 0..150 {
        let len = if i % 25 == 0 { 3 << 20 } else { 1 + (i * 7919) % 40_000 };
        write(&s, &format!("d{}/e{}/f{i}", i % 7, i % 3), &pattern(len, i as u64));
    }
    hardlink(&s, "d0/e0/f0", "d1/linked");
    symlink(&s, "../d0", "d2/link");
    let mut seed = 0x9e37_79b9_u64;
    for round in 0..8 {
        // Change part of the source between attempts, so later kills land in updates too.
        if round == 4 {
            for i in (0..150).step_by(11) {
                write(&s, &format!("d{}/e{}/f{i}", i % 7, i % 3), &pattern(5000, round));
            }
            std::fs::rename(s.join("d3"), s.join("d3-renamed")).unwrap();
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(BIN)
            .arg("sync")
            .arg("-q")
            .arg("--delete")
            .arg(&s)
            .arg(&d)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(500 + seed % 40_000));
        let _ = child.kill();
        let _ = child.wait();
    }
    let out = sync(&[os(b"--delete"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_mirror(&s, &d);
    assert!(temp_names(&d).is_empty(), "left: {:?}", temp_names(&d));
}

/// Killed runs with `--backup-dir`: after every kill each file DST had is, whole, at its place
/// or at its path in the backups; the run finished, the backups hold exactly the files replaced
/// or deleted.
#[test]
fn killed_runs_with_a_backup_dir_never_lose_an_old_file() {
    let t = tmp();
    let (s, d, bk) = (t.path().join("src"), t.path().join("dst"), t.path().join("bk"));
    for i in 0..150 {
        let len = if i % 25 == 0 { 2 << 20 } else { 1 + (i * 7919) % 30_000 };
        write(&s, &format!("d{}/e{}/f{i}", i % 7, i % 3), &pattern(len, i as u64));
    }
    sync(&[s.clone().into_os_string(), d.clone().into()]).assert_code(0);
    let old: BTreeMap<Vec<u8>, Node> =
        describe(&d).into_iter().filter(|(_, n)| n.kind == "file").collect();
    for i in (0..150).step_by(3) {
        write(&s, &format!("d{}/e{}/f{i}", i % 7, i % 3), &pattern(3000 + i, 1000 + i as u64));
    }
    std::fs::remove_dir_all(s.join("d6")).unwrap();
    for i in (1..150).step_by(10) {
        let _ = std::fs::remove_file(s.join(format!("d{}/e{}/f{i}", i % 7, i % 3)));
    }
    let kept_everywhere = |when: &str| {
        let (now, kept) = (describe(&d), if bk.exists() { describe(&bk) } else { BTreeMap::new() });
        for (rel, n) in &old {
            let at =
                |m: &BTreeMap<Vec<u8>, Node>| m.get(rel).is_some_and(|o| o.content == n.content);
            assert!(at(&now) || at(&kept), "{when}: {} lost", String::from_utf8_lossy(rel));
        }
    };
    let args = |quiet: bool| {
        let mut a: Vec<std::ffi::OsString> = vec!["--delete".into(), "--backup-dir".into()];
        a.push(bk.clone().into());
        if quiet {
            a.push("-q".into());
        }
        a.extend([s.clone().into_os_string(), d.clone().into()]);
        a
    };
    let mut seed = 0x2545_f491_u64;
    for round in 0..8 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(BIN).arg("sync").args(args(true)).spawn().unwrap();
        std::thread::sleep(Duration::from_micros(300 + seed % 30_000));
        let _ = child.kill();
        let _ = child.wait();
        kept_everywhere(&format!("after kill {round}"));
    }
    sync(&args(false)).assert_code(0);
    assert_mirror(&s, &d);
    assert!(temp_names(&d).is_empty() && temp_names(&bk).is_empty());
    let now = describe(&d);
    let kept: BTreeMap<Vec<u8>, Node> =
        describe(&bk).into_iter().filter(|(_, n)| n.kind == "file").collect();
    for (rel, n) in &old {
        let same = now.get(rel).is_some_and(|m| m.content == n.content);
        let backup = kept.get(rel).map(|k| &k.content);
        let name = String::from_utf8_lossy(rel);
        assert_eq!(backup, (!same).then_some(&n.content), "{name}: kept only if replaced");
    }
}
