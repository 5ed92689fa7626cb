//! Scale: 100,000 files of one size, mostly distinct, a few duplicate pairs.
//! (No timing assertion; an O(n^2) step would still show up as a very slow
//! test and hit the generous timeout.)

use crate::common;

use common::*;
use std::time::Duration;

#[test]
fn hundred_thousand_files_of_one_size() {
    const N: usize = 100_000;
    const SIZE: usize = 128;
    let started = std::time::Instant::now();
    let d = tmp();
    let t = d.path();
    let content = |i: usize| -> Vec<u8> {
        // same size; equal head and tail, the index in the middle
        let mut v = vec![b'-'; SIZE];
        let id = format!("{i:010}");
        v[59..69].copy_from_slice(id.as_bytes());
        v
    };
    for dir in 0..N / 1000 {
        mkdir(t, &format!("t/d{dir:03}"));
    }
    for i in 0..N {
        std::fs::write(t.join(format!("t/d{:03}/f{i:06}", i / 1000)), content(i)).unwrap();
    }
    let dups = [0usize, 7, 12_345, 50_000, 77_777, 99_999];
    let mut expected = Vec::new();
    for &i in &dups {
        let copy = format!("t/dups/copy{i}");
        write(t, &copy, &content(i));
        expected.push(vec![format!("t/d{:03}/f{i:06}", i / 1000).into_bytes(), copy.into_bytes()]);
    }
    // and one group of three
    write(t, "t/dups/third", &content(7));
    expected[1].push(b"t/dups/third".to_vec());

    eprintln!("tree of {} files built in {:?}", N + dups.len() + 1, started.elapsed());
    let started = std::time::Instant::now();
    let mut c = cmd(t);
    c.timeout(Duration::from_secs(600)).args(["find", "--format", "json", "t"]);
    let out = run(&mut c);
    eprintln!("dedup find ran for {:?}", started.elapsed());
    out.assert_code(0);
    let r = assert_groups(&out, &sets_b(&expected));
    assert_eq!(r.summary.files_scanned, (N + dups.len() + 1) as u64);
    assert_eq!(r.summary.groups, dups.len() as u64);
    assert_eq!(r.summary.redundant_files, dups.len() as u64 + 1);
    assert_eq!(r.summary.redundant_bytes, (dups.len() as u64 + 1) * SIZE as u64);
}
