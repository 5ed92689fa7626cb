//! Interrupted runs: `dedup sync` killed with SIGKILL at arbitrary points, then run again to the
//! end, leaves DST equal to SRC with none of our temporary names left.

use crate::common;

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
