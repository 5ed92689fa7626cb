//! A file whose mtime changes while dedup reads it is left out of the report
//! with a warning, and the exit status says the report may be incomplete.

use crate::common;

use common::*;
use std::fs;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, UNIX_EPOCH};

#[test]
fn file_modified_while_being_read_is_left_out_with_a_warning() {
    // Two identical sparse files of 2 GiB: comparing them takes a while, and
    // a thread keeps changing the mtime of one of them every few milliseconds
    // from before dedup starts until it exits, so whatever moment dedup reads
    // or checks it, the file is changing. (The modifier runs continuously, so
    // the test does not depend on how fast the reads are; the size only makes
    // sure the read spans many changes.)
    const SIZE: u64 = 2 << 30;
    let d = tmp();
    let t = d.path();
    mkdir(t, "t");
    for name in ["big1", "big2"] {
        fs::File::create(t.join("t").join(name)).unwrap().set_len(SIZE).unwrap();
    }
    let small = pattern(1000, 1);
    write(t, "t/s1", &small);
    write(t, "t/s2", &small);

    let victim = fs::OpenOptions::new().write(true).open(t.join("t/big2")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let modifier = {
        let stop = Arc::clone(&stop);
        let started = Arc::clone(&started);
        thread::spawn(move || {
            let base = UNIX_EPOCH + Duration::from_secs(1_600_000_000);
            let mut i = 0u64;
            // a hard upper bound, so that a process that waits for the file
            // to settle does end (and then fails the assertions)
            let limit = Instant::now() + Duration::from_secs(400);
            while !stop.load(Ordering::SeqCst) && Instant::now() < limit {
                i += 1;
                victim.set_modified(base + Duration::from_millis(i)).unwrap();
                started.store(true, Ordering::SeqCst);
                thread::sleep(Duration::from_millis(2));
            }
            i
        })
    };
    while !started.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(1));
    }

    let stdout_path = t.join("stdout");
    let stderr_path = t.join("stderr");
    let mut child = Command::new(BIN)
        .current_dir(t)
        .args(["find", "--format", "json", "t"])
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout_path).unwrap())
        .stderr(fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("spawn dedup");
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    stop.store(true, Ordering::SeqCst);
    let changes = modifier.join().unwrap();
    let out = Out {
        code: status.and_then(|s| s.code()),
        stdout: fs::read(&stdout_path).unwrap(),
        stderr: fs::read(&stderr_path).unwrap(),
    };
    eprintln!("mtime changed {changes} times while dedup ran");
    out.assert_code(1);
    out.assert_message("warning", "t/big2");
    let r = assert_groups(&out, &sets(&[&["t/s1", "t/s2"]]));
    assert!(!r.contains("t/big2"));
}
