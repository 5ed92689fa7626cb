//! Which files form groups: exact content equality, groups of 2, 3 and 1,000,
//! files that agree in size, head and tail but not in the middle, sparse files.

use crate::common;

use common::*;
use std::fs;

#[test]
fn pair_of_identical_files_is_one_group() {
    let d = tmp();
    let t = d.path();
    let data = pattern(1000, 1);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    write(t, "t/c", &pattern(1000, 2)); // same size, other content
    write(t, "t/d", &pattern(999, 1)); // other size, same prefix
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    assert_eq!(r.groups[0].size, 1000);
    assert_eq!(
        r.summary,
        Summary {
            files_scanned: 4,
            groups: 1,
            redundant_files: 1,
            redundant_bytes: 1000,
            errors: 0
        }
    );
}

#[test]
fn three_identical_files_form_one_group() {
    let d = tmp();
    let t = d.path();
    let data = pattern(12345, 3);
    write(t, "t/x/one", &data);
    write(t, "t/y/two", &data);
    write(t, "t/three", &data);
    write(t, "t/other", &pattern(12345, 4));
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/three", "t/x/one", "t/y/two"]]));
    assert_eq!(r.groups[0].size, 12345);
    assert_eq!(r.summary.groups, 1);
    assert_eq!(r.summary.redundant_files, 2);
    assert_eq!(r.summary.redundant_bytes, 2 * 12345);
}

fn thousand_tree(t: &std::path::Path) -> Vec<String> {
    let data = pattern(4096, 5);
    let mut expected = Vec::new();
    for i in 0..1000 {
        let rel = format!("t/d{}/f{:04}", i % 10, i);
        write(t, &rel, &data);
        expected.push(rel);
    }
    // same size, same head, different tail: must stay out of the group
    for i in 0..50 {
        let mut other = data.clone();
        other[4095 - (i % 7)] ^= (i as u8) | 1;
        other[2000 + i] ^= 0xff;
        write(t, &format!("t/near/n{i:02}"), &other);
    }
    expected
}

#[test]
fn thousand_identical_files_form_one_group() {
    let d = tmp();
    let t = d.path();
    let expected = thousand_tree(t);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let exp: Vec<&str> = expected.iter().map(String::as_str).collect();
    let r = assert_groups(&out, &sets(&[&exp]));
    assert_eq!(r.summary.redundant_files, 999);
    assert_eq!(r.summary.redundant_bytes, 999 * 4096);
    assert_eq!(r.summary.files_scanned, 1050);
}

#[test]
fn thousand_identical_files_within_a_low_open_file_limit() {
    // A group larger than the open-file limit must still be compared exactly
    // (bounded number of open files per group).
    let d = tmp();
    let t = d.path();
    let expected = thousand_tree(t);
    let mut c = assert_cmd::Command::new("sh");
    c.current_dir(t)
        .timeout(TIMEOUT)
        .args(["-c", "ulimit -n 128 && exec \"$0\" \"$@\""])
        .arg(BIN)
        .args(["find", "--format", "json", "t"]);
    let out = run(&mut c);
    out.assert_code(0);
    let exp: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert_groups(&out, &sets(&[&exp]));
}

#[test]
fn equal_sized_files_with_different_contents_form_separate_groups() {
    let d = tmp();
    let t = d.path();
    let base = pattern(100_000, 6);
    let a = base.clone();
    let b = flip(&base, 50_000);
    let c = flip(&base, 99_999);
    write(t, "t/a1", &a);
    write(t, "t/a2", &a);
    write(t, "t/b1", &b);
    write(t, "t/b2", &b);
    write(t, "t/b3", &b);
    write(t, "t/c1", &c); // alone
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a1", "t/a2"], &["t/b1", "t/b2", "t/b3"]]));
    assert_eq!(r.summary.groups, 2);
    assert_eq!(r.summary.redundant_files, 3);
    assert_eq!(r.summary.redundant_bytes, 300_000);
}

#[test]
fn same_size_head_and_tail_but_different_middle_are_not_duplicates() {
    // 4 MiB files that agree in their first and last MiB (and more) and differ
    // at one offset somewhere in between: no sampling stage may conclude.
    const SIZE: usize = 4 << 20;
    let d = tmp();
    let t = d.path();
    let base = pattern(SIZE, 7);
    write(t, "t/base", &base);
    write(t, "t/copy", &base);
    let offsets = [(1 << 20) + 1, SIZE / 2 - 1, SIZE / 2, SIZE / 2 + 4096, SIZE - (1 << 20) - 2];
    for (i, off) in offsets.iter().enumerate() {
        write(t, &format!("t/mid{i}"), &flip(&base, *off));
    }
    // Two files equal to each other but different from base in the middle.
    let other = flip(&base, 3 * SIZE / 4);
    write(t, "t/other1", &other);
    write(t, "t/other2", &other);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/base", "t/copy"], &["t/other1", "t/other2"]]));
}

#[test]
fn many_content_classes_of_one_size_are_partitioned_exactly() {
    // 5 MiB files, all equal in their first and last MiB; five classes of
    // three copies that part ways at different offsets (some share a long
    // common prefix), plus singletons that part from a class late.
    const M: usize = 1 << 20;
    const SIZE: usize = 5 * M;
    let d = tmp();
    let t = d.path();
    let base = pattern(SIZE, 11);
    let c1 = flip(&base, M + M / 2);
    let classes = [
        base.clone(),
        c1.clone(),
        flip(&c1, 4 * M - 7),
        flip(&base, 4 * M - 7),
        flip(&base, 2 * M),
    ];
    let mut expected: Vec<Vec<Vec<u8>>> = Vec::new();
    for (k, content) in classes.iter().enumerate() {
        let mut g = Vec::new();
        for copy in 0..3 {
            let rel = format!("t/c{k}/copy{copy}");
            write(t, &rel, content);
            g.push(rel.into_bytes());
        }
        expected.push(g);
    }
    write(t, "t/single1", &flip(&base, 3 * M + 1));
    write(t, "t/single2", &flip(&c1, 2 * M + 2));
    write(t, "t/single3", &flip(&classes[2], 4 * M - 8));
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets_b(&expected));
    assert_eq!(r.summary.redundant_files, 10);
}

#[test]
fn files_differing_at_any_single_offset_are_not_duplicates() {
    // Differences at block boundaries near the start and end of a 3 MiB file.
    const SIZE: usize = 3 << 20;
    let d = tmp();
    let t = d.path();
    let base = pattern(SIZE, 8);
    write(t, "t/base", &base);
    write(t, "t/copy", &base);
    let offsets = [
        0,
        1,
        511,
        512,
        4095,
        4096,
        65535,
        65536,
        (1 << 20) - 1,
        1 << 20,
        SIZE - (1 << 20),
        SIZE - 65537,
        SIZE - 4097,
        SIZE - 4096,
        SIZE - 2,
        SIZE - 1,
    ];
    for off in offsets {
        write(t, &format!("t/v{off}"), &flip(&base, off));
    }
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/base", "t/copy"]]));
}

#[test]
fn differing_only_in_first_byte_is_not_a_duplicate() {
    let d = tmp();
    let t = d.path();
    let base = pattern(2 << 20, 9);
    write(t, "t/a", &base);
    write(t, "t/b", &flip(&base, 0));
    write(t, "t/c", &base); // control: a real duplicate of a
    write(t, "t/small_a", b"xy");
    write(t, "t/small_b", b"zy");
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/c"]]));
}

#[test]
fn differing_only_in_last_byte_is_not_a_duplicate() {
    let d = tmp();
    let t = d.path();
    let base = pattern(2 << 20, 10);
    write(t, "t/a", &base);
    write(t, "t/b", &flip(&base, base.len() - 1));
    write(t, "t/c", &base); // control: a real duplicate of a
    write(t, "t/small_a", b"xy");
    write(t, "t/small_b", b"xz");
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/c"]]));
}

#[test]
fn one_byte_files() {
    let d = tmp();
    let t = d.path();
    write(t, "t/a1", b"a");
    write(t, "t/a2", b"a");
    write(t, "t/b", b"b");
    write(t, "t/zero1", b"\0");
    write(t, "t/zero2", b"\0");
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a1", "t/a2"], &["t/zero1", "t/zero2"]]));
    assert!(r.groups.iter().all(|g| g.size == 1));
}

#[test]
fn no_duplicates_gives_an_empty_report_and_status_0() {
    let d = tmp();
    let t = d.path();
    for i in 0..20 {
        write(t, &format!("t/f{i}"), &pattern(100, 100 + i));
    }
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[]));
    assert_eq!(r.summary.groups, 0);
    assert_eq!(r.summary.redundant_files, 0);
    assert_eq!(r.summary.redundant_bytes, 0);
    assert_eq!(r.summary.files_scanned, 20);
    // text: nothing at all
    let out = find(t, &["t"]);
    out.assert_code(0);
    assert!(out.stdout.is_empty(), "{}", out.dump());
}

#[test]
fn sparse_files_of_one_gib() {
    // a and b: 1 GiB holes, duplicates; c: the same with one byte written in
    // the middle, not a duplicate.
    const GIB: u64 = 1 << 30;
    let d = tmp();
    let t = d.path();
    fs::create_dir(t.join("t")).unwrap();
    for name in ["a", "b", "c"] {
        let f = fs::File::create(t.join("t").join(name)).unwrap();
        f.set_len(GIB).unwrap();
        if name == "c" {
            use std::os::unix::fs::FileExt;
            f.write_all_at(b"\x01", GIB / 2).unwrap();
        }
    }
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    assert_eq!(r.groups[0].size, GIB);
    assert_eq!(r.summary.redundant_bytes, GIB);
}
