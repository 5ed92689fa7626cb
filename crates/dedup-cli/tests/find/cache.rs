//! The persistent content cache (`--cache`, `--cache-dir`, `--verify`, `dedup cache`,
//! `dedup.toml`): every cached scan must give exactly the groups of a scan without the cache,
//! after adds, deletes, in-place edits that keep size and mtime, renames and moves, files
//! replaced by others of equal size and mtime, concurrent runs, damaged cache files and runs
//! killed midway. Each test keeps its cache (and its configuration directory) in its own
//! temporary directory.

use crate::common;

use std::fs::{self, File};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use common::*;
use serde_json::Value;

/// `dedup <args>` in `d`, with the configuration directory inside `d`.
fn dedup<S: AsRef<std::ffi::OsStr>>(d: &Path, args: &[S]) -> Out {
    run(cmd(d)
        .env("XDG_CONFIG_HOME", d.join("config"))
        .env("XDG_CACHE_HOME", d.join("xdg-cache"))
        .args(args))
}

/// A JSON scan of `t` with the cache in `d/cache` (plus `extra` options).
fn cached(d: &Path, extra: &[&str]) -> Out {
    let mut args = vec!["find", "--format", "json", "-v", "--cache-dir", "cache"];
    args.extend_from_slice(extra);
    args.push("t");
    dedup(d, &args)
}

/// Scans with the cache and without it; both must succeed and agree. Returns the cached run.
#[track_caller]
fn check(d: &Path) -> Out {
    let plain = dedup(d, &["find", "--format", "json", "--no-cache", "t"]);
    plain.assert_code(0);
    let with = cached(d, &[]);
    with.assert_code(0);
    assert_groups(&with, &plain.json().sets());
    with
}

/// Number of groups marked `"cached": true`.
fn cached_groups(out: &Out) -> usize {
    let r = out.json();
    r.raw["groups"].as_array().unwrap().iter().filter(|g| g["cached"] == Value::Bool(true)).count()
}

/// The hits and lookups of the `-v` cache line.
fn hits(out: &Out) -> (u64, u64) {
    let line = out
        .stderr_lines()
        .into_iter()
        .find(|l| l.starts_with("dedup: cache: "))
        .unwrap_or_else(|| panic!("no cache line\n{}", out.dump()));
    let words: Vec<&str> = line.split_whitespace().collect();
    (words[2].replace(',', "").parse().unwrap(), words[4].replace(',', "").parse().unwrap())
}

/// Files the `-v` funnel says were left to compare in full: what a scan had to read.
fn left_to_read(out: &Out) -> u64 {
    let line = out
        .stderr_lines()
        .into_iter()
        .find(|l| l.starts_with("dedup: files: "))
        .unwrap_or_else(|| panic!("no funnel line\n{}", out.dump()));
    let before = line.split(" left after samples").next().unwrap();
    before.rsplit(' ').next().unwrap().replace(',', "").parse().unwrap()
}

fn base_tree(d: &Path) {
    let big = pattern(3 << 20, 1);
    write(d, "t/big1", &big);
    write(d, "t/sub/big2", &big);
    let mid = pattern(100_000, 2);
    write(d, "t/mid1", &mid);
    write(d, "t/sub/mid2", &mid);
    write(d, "t/sub/deeper/mid3", &mid);
    write(d, "t/mid-other", &flip(&mid, 50_000));
    write(d, "t/s1", b"small file");
    write(d, "t/s2", b"small file");
    write(d, "t/s3", b"other file");
}

fn set_mtime(p: &Path, t: SystemTime) {
    File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p).unwrap().modified().unwrap()
}

#[test]
fn an_unchanged_rescan_groups_from_the_cache_and_verify_compares_again() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    // Of big1's size, apart from it by its first sample.
    write(d, "t/big-other", &flip(&pattern(3 << 20, 1), 10));
    settle();
    let first = check(d);
    assert_eq!(cached_groups(&first), 0);
    assert_eq!(hits(&first).0, 0);
    assert!(left_to_read(&first) > 0);
    let second = check(d);
    assert_eq!(cached_groups(&second), 3, "{}", second.dump());
    let (hit, looked) = hits(&second);
    assert_eq!(hit, looked);
    // Files without a copy are told apart from their size class by what the cache keeps: their
    // samples (big-other), their digest (mid-other, equal to mid1 in its samples) or the hash of
    // their content (s3): nothing is read, not even a sample.
    assert_eq!(left_to_read(&second), 0, "{}", second.dump());
    assert_eq!(second.cache_unread(), looked, "{}", second.dump());
    assert!(String::from_utf8_lossy(&second.stderr).contains("3 groups rest on cached digests"));
    let verified = cached(d, &["--verify"]);
    verified.assert_code(0);
    assert_eq!(cached_groups(&verified), 0);
    assert_groups(&verified, &second.json().sets());
    // Text output is unchanged by the cache.
    let text = dedup(d, &["find", "--cache-dir", "cache", "t"]);
    let plain = dedup(d, &["find", "t"]);
    assert_eq!(text.stdout, plain.stdout);
}

#[test]
fn files_a_fingerprint_cannot_tell_apart_are_read_again() {
    let d = tmp();
    let d = d.path();
    // Equal over their first chunks (1 and 2 MiB), apart in the third, never in a sample.
    let big = pattern(8 << 20, 3);
    write(d, "t/x1", &big);
    write(d, "t/x2", &big);
    write(d, "t/y", &flip(&big, 5 << 20));
    write(d, "t/z", &flip(&big, 6 << 20));
    settle();
    check(d);
    let again = check(d);
    // y and z share the fingerprint of x1 and x2 without a digest, so are read, and x1 is read
    // for x2 too (whose digest is equal): the group is still marked as resting on the cache.
    assert_eq!(cached_groups(&again), 1, "{}", again.dump());
    assert_eq!(left_to_read(&again), 3, "{}", again.dump());
    // z becomes a copy of y: both changed (new ctime), read again, and now a group.
    fs::copy(d.join("t/y"), d.join("t/z")).unwrap();
    settle();
    let out = check(d);
    assert_eq!(out.json().sets().len(), 2, "{}", out.dump());
}

/// New files of a cached size are fingerprinted first and compared only with the cached files
/// they could equal; the others stay unread. Small files (fingerprint of the whole content) and
/// sampled ones (fingerprint of the samples) alike.
#[test]
fn new_files_are_compared_only_with_cached_files_they_could_equal() {
    for size in [1000, 100_000] {
        let d = tmp();
        let d = d.path();
        for k in 1..=5 {
            write(d, &format!("t/k{k}"), &pattern(size, k));
        }
        let shared = pattern(size, 10);
        write(d, "t/g1", &shared);
        write(d, "t/g2", &shared);
        settle();
        check(d);
        fs::copy(d.join("t/k1"), d.join("t/n1")).unwrap();
        fs::copy(d.join("t/g1"), d.join("t/n2")).unwrap();
        write(d, "t/n3", &pattern(size, 20));
        write(d, "t/n4", &pattern(size, 21));
        write(d, "t/n5", &pattern(size, 21));
        settle();
        let out = check(d);
        let sets = out.json().sets();
        assert_eq!(sets.len(), 3, "{}", out.dump());
        // k2..k5 share no fingerprint with a new file: settled without a read. g1 and g2 are
        // known by digest: n2 is read for its own and joins them, they are not read.
        assert_eq!(out.cache_unread(), 6, "size {size}: {}", out.dump());
        assert_eq!(cached_groups(&out), 1, "size {size}: {}", out.dump());
        // And the next scan settles everything.
        let again = check(d);
        assert_eq!(again.cache_unread(), hits(&again).1, "size {size}: {}", again.dump());
    }
}

/// A new file whose fingerprint matches cached files known by digest joins them only when its
/// own digest is theirs: a file equal in its head sample but not in its middle stays apart, and
/// new files equal to each other but not to the cached ones are compared byte for byte.
#[test]
fn new_files_join_cached_copies_only_by_their_own_digest() {
    let d = tmp();
    let d = d.path();
    let shared = pattern(100_000, 10);
    write(d, "t/g1", &shared);
    write(d, "t/g2", &shared);
    settle();
    check(d);
    fs::copy(d.join("t/g1"), d.join("t/n1")).unwrap();
    write(d, "t/n2", &flip(&shared, 50_000));
    write(d, "t/n3", &flip(&shared, 60_000));
    write(d, "t/n4", &flip(&shared, 60_000));
    settle();
    let out = check(d);
    assert_groups(&out, &sets(&[&["t/g1", "t/g2", "t/n1"], &["t/n3", "t/n4"]]));
    assert_eq!(out.cache_unread(), 2, "{}", out.dump());
    assert_eq!(cached_groups(&out), 1, "{}", out.dump());
    // n3 and n4 were compared with each other, nothing else was.
    assert_eq!(left_to_read(&out), 2, "{}", out.dump());
    // With --verify every group is compared byte for byte again.
    let verified = cached(d, &["--verify"]);
    verified.assert_code(0);
    assert_eq!(cached_groups(&verified), 0);
    assert_groups(&verified, &out.json().sets());
}

#[test]
fn adds_and_deletes_give_the_right_groups() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    settle();
    check(d);
    // A new copy of a cached group, a new pair, a deleted member, a new lone file of a
    // cached size.
    fs::copy(d.join("t/mid1"), d.join("t/new-mid")).unwrap();
    write(d, "t/n1", &pattern(5000, 9));
    write(d, "t/n2", &pattern(5000, 9));
    fs::remove_file(d.join("t/s2")).unwrap();
    write(d, "t/lone-big", &pattern(3 << 20, 77));
    settle();
    let out = check(d);
    let r = out.json();
    assert!(r.contains("t/new-mid"), "{}", out.dump());
    // The new copy joined the mid group through its representative; the new lone big file was
    // compared with the big group's representative only.
    assert_eq!(cached_groups(&out), 2, "{}", out.dump());
    let again = check(d);
    assert_eq!(cached_groups(&again), 3, "{}", again.dump());
}

#[test]
fn in_place_edits_that_keep_size_and_mtime_are_caught_by_ctime() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    write(d, "t/c1", &pattern(200_000, 5));
    write(d, "t/c2", &flip(&pattern(200_000, 5), 199_999));
    settle();
    check(d);
    check(d);
    // mid2 loses its twin content, c2 gains c1's: same sizes, mtimes put back.
    for (path, data) in
        [("t/sub/mid2", flip(&pattern(100_000, 2), 10)), ("t/c2", pattern(200_000, 5))]
    {
        let p = d.join(path);
        let before = mtime(&p);
        fs::write(&p, &data).unwrap();
        set_mtime(&p, before);
        assert_eq!(mtime(&p), before);
    }
    let out = check(d);
    let r = out.json();
    assert!(!r.contains("t/sub/mid2"), "{}", out.dump());
    assert!(r.contains("t/c2"), "{}", out.dump());
}

#[test]
fn an_entry_follows_its_inode_through_renames_and_moves() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    settle();
    check(d);
    mkdir(d, "t/elsewhere");
    fs::rename(d.join("t/mid1"), d.join("t/elsewhere/renamed-mid")).unwrap();
    fs::rename(d.join("t/sub/big2"), d.join("t/big2-renamed")).unwrap();
    // A rename changes the ctime of the file on some file systems: settle again, then rescan
    // twice so the second rescan sees only unchanged metadata.
    settle();
    check(d);
    let out = check(d);
    assert!(out.json().contains("t/elsewhere/renamed-mid"));
    let (hit, looked) = hits(&out);
    assert_eq!(hit, looked, "{}", out.dump());
    assert_eq!(cached_groups(&out), 3);
}

#[test]
fn a_file_replaced_by_another_of_equal_size_and_mtime_is_read_again() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    settle();
    check(d);
    check(d);
    for path in ["t/s2", "t/sub/mid2"] {
        let p = d.join(path);
        let when = mtime(&p);
        let mut data = fs::read(&p).unwrap();
        data[0] ^= 1;
        fs::remove_file(&p).unwrap();
        // The new file may well get the old inode number; only its ctime differs.
        fs::write(&p, &data).unwrap();
        set_mtime(&p, when);
    }
    let out = check(d);
    let r = out.json();
    assert!(!r.contains("t/s2") && !r.contains("t/sub/mid2"), "{}", out.dump());
}

#[test]
fn any_path_bytes_work() {
    let d = tmp();
    let d = d.path();
    let data = pattern(10_000, 3);
    for name in [&b"t/back`tick"[..], b"t/new\nline", b"t/bad-\xff-utf8", b"t/quote\"'$(x)"] {
        write_b(d, name, &data);
    }
    settle();
    check(d);
    let out = check(d);
    assert_eq!(cached_groups(&out), 1);
    assert_eq!(out.json().groups[0].files.len(), 4);
    fs::remove_file(bpath(d, b"t/new\nline")).unwrap();
    let pruned = dedup(d, &["cache", "prune", "--cache-dir", "cache"]);
    pruned.assert_code(0);
    assert!(String::from_utf8_lossy(&pruned.stdout).contains("pruned 1 of 4"), "{}", pruned.dump());
}

#[test]
fn stats_prune_and_clear() {
    let d = tmp();
    let d = d.path();
    let stats = || {
        let out = dedup(d, &["cache", "stats", "--cache-dir", "cache"]);
        out.assert_code(0);
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(stats().contains("entries: 0"));
    base_tree(d);
    settle();
    check(d);
    check(d);
    let s = stats();
    assert!(s.contains("entries: 9") && s.contains("100.0 % hit rate"), "{s}");
    fs::remove_file(d.join("t/s1")).unwrap();
    fs::remove_file(d.join("t/big1")).unwrap();
    let pruned = dedup(d, &["cache", "prune", "--cache-dir", "cache"]);
    assert!(String::from_utf8_lossy(&pruned.stdout).contains("pruned 2 of 9"), "{}", pruned.dump());
    assert!(stats().contains("entries: 7"));
    dedup(d, &["cache", "clear", "--cache-dir", "cache"]).assert_code(0);
    assert!(stats().contains("entries: 0"));
    check(d);
}

#[test]
fn a_second_process_works_without_the_cache_while_one_holds_it() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    settle();
    check(d);
    fs::create_dir_all(d.join("cache")).unwrap();
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(d.join("cache/lock"))
        .unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let before = fs::read(d.join("cache/files.v1")).unwrap();
    let out = cached(d, &[]);
    out.assert_code(0);
    out.assert_message("warning", "in use by another dedup process");
    assert_eq!(cached_groups(&out), 0);
    assert_groups(&out, &dedup(d, &["find", "--format", "json", "t"]).json().sets());
    assert_eq!(fs::read(d.join("cache/files.v1")).unwrap(), before);
    assert!(dedup(d, &["cache", "clear", "--cache-dir", "cache"]).code() == 2);
    drop(lock);
    assert_eq!(cached_groups(&check(d)), 3);
}

#[test]
fn concurrent_runs_all_give_the_right_groups_and_leave_a_valid_cache() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    for i in 0..200 {
        write(d, &format!("t/many/{i}"), &pattern(3000 + i % 7, (i % 13) as u64));
    }
    settle();
    let expected = dedup(d, &["find", "--format", "json", "t"]).json().sets();
    for _round in 0..2 {
        let children: Vec<_> = (0..4)
            .map(|_| {
                Command::new(BIN)
                    .args(["find", "--format", "json", "--cache-dir", "cache", "t"])
                    .env("XDG_CONFIG_HOME", d.join("config"))
                    .current_dir(d)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let o = child.wait_with_output().unwrap();
            let out = Out { code: o.status.code(), stdout: o.stdout, stderr: o.stderr };
            out.assert_code(0);
            assert_groups(&out, &expected);
        }
    }
    let stats = dedup(d, &["cache", "stats", "--cache-dir", "cache"]);
    stats.assert_code(0);
    assert_eq!(cached_groups(&check(d)), expected.len());
}

#[test]
fn damaged_cache_files_are_set_aside_and_rebuilt() {
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 5] = [
        ("truncated", |b| b.truncate(b.len() / 2)),
        ("flipped digest byte", |b| b[64 + 60] ^= 1),
        ("other version", |b| b[8] = 9),
        ("garbage", |b| *b = b"not a cache at all".to_vec()),
        ("empty", Vec::clear),
    ];
    for (what, damage) in damages {
        let d = tmp();
        let d = d.path();
        base_tree(d);
        settle();
        check(d);
        let file = d.join("cache/files.v1");
        let mut bytes = fs::read(&file).unwrap();
        damage(&mut bytes);
        fs::write(&file, &bytes).unwrap();
        let stats = dedup(d, &["cache", "stats", "--cache-dir", "cache"]);
        assert_eq!(stats.code(), 2, "{what}: {}", stats.dump());
        let out = check(d);
        out.assert_message("warning", "cache file unusable");
        assert_eq!(cached_groups(&out), 0, "{what}");
        let aside: Vec<_> = fs::read_dir(d.join("cache"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("files.bad-"))
            .collect();
        assert_eq!(aside.len(), 1, "{what}");
        assert_eq!(fs::read(aside[0].path()).unwrap(), bytes, "{what}");
        // Rebuilt by that run: the next one groups from it again, without warning.
        let next = check(d);
        assert_eq!(cached_groups(&next), 3, "{what}: {}", next.dump());
        next.assert_no_message_about("unusable");
    }
}

#[test]
fn a_run_killed_at_any_point_leaves_a_usable_cache() {
    let d = tmp();
    let d = d.path();
    for g in 0..1500 {
        let data = pattern(4096 + g % 5, g as u64);
        write(d, &format!("t/{:02}/a{g}", g % 30), &data);
        write(d, &format!("t/{:02}/b{g}", (g + 3) % 30), &data);
    }
    write(d, "t/big-a", &pattern(20 << 20, 1));
    write(d, "t/big-b", &pattern(20 << 20, 1));
    settle();
    let expected = dedup(d, &["find", "--format", "json", "t"]).json().sets();
    // A temporary file as a run killed while writing the cache would leave it.
    fs::create_dir_all(d.join("cache")).unwrap();
    fs::write(d.join("cache/files.v1.tmp-999999"), b"half a cache").unwrap();
    for (round, delay_ms) in [5u64, 30, 80, 150, 300, 1000].into_iter().enumerate() {
        let mut child = Command::new(BIN)
            .args(["find", "-q", "--cache-dir", "cache", "t"])
            .env("XDG_CONFIG_HOME", d.join("config"))
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        if round % 2 == 1 {
            // Something changed between the runs, too.
            write(d, &format!("t/added{round}"), &pattern(4096, 1));
        }
        settle();
        let expected = dedup(d, &["find", "--format", "json", "t"]).json().sets();
        let out = cached(d, &[]);
        out.assert_code(0);
        out.assert_no_message_about("unusable");
        assert_groups(&out, &expected);
    }
    assert!(!d.join("cache/files.v1.tmp-999999").exists());
    let last = cached(d, &[]);
    assert_groups(&last, &dedup(d, &["find", "--format", "json", "t"]).json().sets());
    assert_eq!(cached_groups(&last), last.json().groups.len());
    drop(expected);
}

#[test]
fn the_configuration_file_turns_the_cache_on_and_no_cache_off() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    settle();
    let config = d.join("config/dedup");
    fs::create_dir_all(&config).unwrap();
    fs::write(config.join("dedup.toml"), "[cache]\nenabled = true\ndir = \"from-config\"\n")
        .unwrap();
    dedup(d, &["find", "--no-cache", "t"]).assert_code(0);
    assert!(!d.join("from-config").exists());
    dedup(d, &["find", "t"]).assert_code(0);
    assert!(d.join("from-config/files.v1").exists());
    let stats = dedup(d, &["cache", "stats"]);
    assert!(String::from_utf8_lossy(&stats.stdout).contains("entries: 9"), "{}", stats.dump());
    // Without a dir in the file: the XDG cache directory.
    fs::write(config.join("dedup.toml"), "[cache]\nenabled = true\n").unwrap();
    dedup(d, &["find", "t"]).assert_code(0);
    assert!(d.join("xdg-cache/dedup/files.v1").exists());
    fs::write(config.join("dedup.toml"), "[cache]\nenabled = yes\n").unwrap();
    let bad = dedup(d, &["find", "t"]);
    bad.assert_code(2);
    bad.assert_message("error", "dedup.toml");
}

#[test]
fn actions_use_the_cache_and_still_check_every_file() {
    let d = tmp();
    let d = d.path();
    base_tree(d);
    settle();
    check(d);
    // The plan rests on cached groups; every step is still checked byte for byte.
    let out = dedup(d, &["remove", "--dry-run", "--cache-dir", "cache", "t"]);
    out.assert_code(0);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert_eq!(plan.lines().filter(|l| l.starts_with("remove ")).count(), 4, "{}", out.dump());
    let done = dedup(d, &["remove", "--cache", "--cache-dir", "cache", "t"]);
    done.assert_code(0);
    assert!(dedup(d, &["find", "--format", "json", "t"]).json().groups.is_empty());
}

/// `dedup cache stats|prune|clear` with stdout on a full disk (/dev/full): the failure is named
/// (exit 2), never a panic.
#[test]
fn cache_commands_whose_output_cannot_be_written_say_so_without_panicking() {
    let d = tmp();
    let d = d.path();
    write(d, "t/a", b"same");
    write(d, "t/b", b"same");
    cached(d, &[]).assert_code(0);
    for action in ["stats", "prune", "clear"] {
        let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(BIN)
            .current_dir(d)
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("XDG_CACHE_HOME", d.join("xdg-cache"))
            .args(["cache", action, "--cache-dir", "cache"])
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{action}: {stderr}");
        assert!(stderr.contains("cannot write to standard output"), "{action}: {stderr}");
    }
}
