//! Selection options: --min-size/--max-size with suffixes, --exclude,
//! --max-depth, --one-file-system, and files_scanned after the filters.

use crate::common;

use common::*;

/// Pairs of sizes 1023, 1024 and 1025 (distinct content per size).
fn kib_tree(t: &std::path::Path) {
    for (i, size) in [1023usize, 1024, 1025].into_iter().enumerate() {
        let data = pattern(size, 10 + i as u64);
        write(t, &format!("t/s{size}a"), &data);
        write(t, &format!("t/s{size}b"), &data);
    }
}

const G1023: &[&str] = &["t/s1023a", "t/s1023b"];
const G1024: &[&str] = &["t/s1024a", "t/s1024b"];
const G1025: &[&str] = &["t/s1025a", "t/s1025b"];

#[test]
fn min_size_is_inclusive() {
    let d = tmp();
    let t = d.path();
    kib_tree(t);
    let out = find_json(t, &["--min-size", "1024", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[G1024, G1025]));
    assert_eq!(r.summary.files_scanned, 4);
}

#[test]
fn max_size_is_inclusive() {
    let d = tmp();
    let t = d.path();
    kib_tree(t);
    let out = find_json(t, &["--max-size", "1024", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[G1023, G1024]));
    assert_eq!(r.summary.files_scanned, 4);
}

#[test]
fn size_suffixes_k_kb_kib_in_any_case() {
    let d = tmp();
    let t = d.path();
    kib_tree(t);
    for s in ["1K", "1k", "1KB", "1kb", "1KiB", "1kib", "1Kib"] {
        let out = find_json(t, &["--min-size", s, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[G1024, G1025]));
        let out = find_json(t, &["--max-size", s, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[G1023, G1024]));
        let out = find_json(t, &["--min-size", s, "--max-size", s, "t"]);
        out.assert_code(0);
        let r = assert_groups(&out, &sets(&[G1024]));
        assert_eq!(r.summary.files_scanned, 2);
    }
}

#[test]
fn size_suffixes_m_g_t() {
    let d = tmp();
    let t = d.path();
    let mib = 1usize << 20;
    let a = pattern(mib - 1, 20);
    let b = pattern(mib, 21);
    write(t, "t/m_minus_a", &a);
    write(t, "t/m_minus_b", &a);
    write(t, "t/m_a", &b);
    write(t, "t/m_b", &b);
    let below: &[&str] = &["t/m_minus_a", "t/m_minus_b"];
    let at: &[&str] = &["t/m_a", "t/m_b"];
    for s in ["1M", "1m", "1MB", "1MiB", "1mib"] {
        let out = find_json(t, &["--min-size", s, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[at]));
        let out = find_json(t, &["--max-size", s, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[below, at]));
    }
    let out = find_json(t, &["--max-size", "1048575", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[below]));
    for s in ["1G", "1g", "1GiB", "1T", "1tb"] {
        let out = find_json(t, &["--max-size", s, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[below, at]));
        let out = find_json(t, &["--min-size", s, "t"]);
        out.assert_code(0);
        let r = assert_groups(&out, &sets(&[]));
        assert_eq!(r.summary.files_scanned, 0);
    }
    // powers of 1024: 1024K = 1M = 1048576 (not 1024000)
    let out = find_json(t, &["--min-size", "1024K", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[at]));
}

#[test]
fn invalid_sizes_are_usage_errors() {
    let d = tmp();
    let t = d.path();
    kib_tree(t);
    for s in ["1X", "abc", "-5", "1.5.5K", ""] {
        let out = find(t, &["--min-size", s, "t"]);
        out.assert_code(2);
        assert!(out.stdout.is_empty(), "no report on a usage error\n{}", out.dump());
    }
}

#[test]
fn exclude_matches_names() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 30);
    write(t, "t/a.tmp", &data);
    write(t, "t/b.tmp", &data);
    write(t, "t/sub/c.tmp", &data);
    let other = pattern(100, 31);
    write(t, "t/a.txt", &other);
    write(t, "t/sub/deeper/b.txt", &other);
    let out = find_json(t, &["--exclude", "*.tmp", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a.txt", "t/sub/deeper/b.txt"]]));
    assert_eq!(r.summary.files_scanned, 2);
    let out = find_json(t, &["--exclude", "a.tmp", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/b.tmp", "t/sub/c.tmp"], &["t/a.txt", "t/sub/deeper/b.txt"]]));
}

#[test]
fn exclude_matches_directory_names_at_any_depth() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 32);
    write(t, "t/keep1", &data);
    write(t, "t/keep2", &data);
    write(t, "t/cache/x", &data);
    write(t, "t/sub/cache/y", &data);
    write(t, "t/sub/cache/deep/z", &data);
    let out = find_json(t, &["--exclude", "cache", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/keep1", "t/keep2"]]));
    assert_eq!(r.summary.files_scanned, 2);
}

#[test]
fn exclude_matches_the_path_below_the_root() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 33);
    write(t, "t/sub/x", &data);
    write(t, "t/x", &data);
    write(t, "t/other/sub/x", &data);
    let out = find_json(t, &["--exclude", "sub/x", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/other/sub/x", "t/x"]]));
    // a directory by its path below the root
    let data2 = pattern(100, 34);
    write(t, "t/a/b/f", &data2);
    write(t, "t/a/b/g", &data2);
    write(t, "t/a/c/f", &data2);
    write(t, "t/b/h", &data2);
    let out = find_json(t, &["--exclude", "a/b", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/other/sub/x", "t/sub/x", "t/x"], &["t/a/c/f", "t/b/h"]]));
    // the same path below a second root
    write(t, "u/a/b/f", &data2);
    write(t, "u/a/keep", &data2);
    let out = find_json(t, &["--exclude", "a/b", "--exclude", "x", "t", "u"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a/c/f", "t/b/h", "u/a/keep"]]));
}

#[test]
fn exclude_is_repeatable() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 35);
    for name in ["a.tmp", "b.bak", "c.txt", "d.txt", "e.log"] {
        write(t, &format!("t/{name}"), &data);
    }
    let out =
        find_json(t, &["--exclude", "*.tmp", "--exclude", "*.bak", "--exclude", "*.log", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/c.txt", "t/d.txt"]]));
    assert_eq!(r.summary.files_scanned, 2);
}

#[test]
fn max_depth() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 40);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    write(t, "t/s/c", &data);
    write(t, "t/s/t/d", &data);
    write(t, "f1", &data);
    write(t, "f2", &data);
    let out = find_json(t, &["--max-depth", "1", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    let out = find_json(t, &["--max-depth", "2", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/b", "t/s/c"]]));
    let out = find_json(t, &["--max-depth", "3", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/b", "t/s/c", "t/s/t/d"]]));
    // 0: only the arguments themselves
    let out = find_json(t, &["--max-depth", "0", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[]));
    let out = find_json(t, &["--max-depth", "0", "f1", "f2", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["f1", "f2"]]));
    assert_eq!(r.summary.files_scanned, 2);
    // and 1 counts from each directory argument
    let out = find_json(t, &["--max-depth", "1", "t/s", "f1"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["f1", "t/s/c"]]));
}

#[test]
fn files_scanned_counts_regular_file_paths_after_filters() {
    let d = tmp();
    let t = d.path();
    write(t, "t/a", &pattern(100, 50));
    write(t, "t/b", &pattern(200, 51));
    write(t, "t/c.skip", &pattern(300, 52));
    write(t, "t/sub/d", &pattern(5000, 53));
    hardlink(t, "t/a", "t/a_link");
    symlink(t, "a", "t/symlink");
    mkfifo(&t.join("t/fifo"));
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_eq!(out.json().summary.files_scanned, 5, "{}", out.dump());
    let out = find_json(t, &["--exclude", "*.skip", "t"]);
    out.assert_code(0);
    assert_eq!(out.json().summary.files_scanned, 4, "{}", out.dump());
    let out = find_json(t, &["--min-size", "150", "--max-size", "1K", "t"]);
    out.assert_code(0);
    assert_eq!(out.json().summary.files_scanned, 2, "{}", out.dump());
    let out = find_json(t, &["--max-depth", "1", "t"]);
    out.assert_code(0);
    assert_eq!(out.json().summary.files_scanned, 4, "{}", out.dump());
}

/// Unmounts on drop.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn one_file_system_does_not_enter_other_file_systems() {
    let test = "one_file_system_does_not_enter_other_file_systems";
    if !require(is_root(), test, "mounting a tmpfs needs root") {
        return;
    }
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 60);
    write(t, "t/a", &data);
    let mnt = mkdir(t, "t/mnt");
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "dedup-test"])
        .arg(&mnt)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !require(ok, test, "mount -t tmpfs failed") {
        return;
    }
    let _guard = Mount(mnt.clone());
    write(t, "t/mnt/b", &data);
    write(t, "t/mnt/sub/c", &data);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/mnt/b", "t/mnt/sub/c"]]));
    for flag in ["-x", "--one-file-system"] {
        let out = find_json(t, &[flag, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[]));
        // a root on the other file system is scanned (its own file system)
        let out = find_json(t, &[flag, "t/mnt", "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[&["t/a", "t/mnt/b", "t/mnt/sub/c"]]));
    }
}
