//! The options rsync users reach for on the first day, on real trees: include and exclude rules
//! in the order given and read from files.

use crate::common;

use std::io::Write;
use std::process::Stdio;

use common::mirror::*;
use common::*;

fn args(list: &[&str]) -> Vec<std::ffi::OsString> {
    list.iter().map(|a| os(a.as_bytes())).collect()
}

/// `--include '*/' --include '*.jpg' --exclude '*'`: the JPEGs at any depth and the directories
/// leading to them; with `--delete` the other DST files are excluded, so kept, while a JPEG SRC no
/// longer has goes.
#[test]
fn includes_before_a_catch_all_exclude_mirror_only_what_they_name() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a.jpg", b"top");
    write(&s, "notes.txt", b"not a picture");
    write(&s, "trip/day1/b.jpg", b"deep");
    write(&s, "trip/day1/b.raw", b"raw");
    write(&d, "trip/old.jpg", b"gone from SRC");
    write(&d, "trip/mine.txt", b"excluded in DST: kept");
    let (s_arg, d_arg) = (s.to_str().unwrap(), d.to_str().unwrap());
    let rules = ["--include", "*/", "--include", "*.jpg", "--exclude", "*"];
    let mut list = vec!["--delete"];
    list.extend(rules);
    list.extend([s_arg, d_arg]);
    sync(&args(&list)).assert_code(0);
    assert_eq!(std::fs::read(d.join("a.jpg")).unwrap(), b"top");
    assert_eq!(std::fs::read(d.join("trip/day1/b.jpg")).unwrap(), b"deep");
    assert!(!d.join("notes.txt").exists() && !d.join("trip/day1/b.raw").exists());
    assert!(!d.join("trip/old.jpg").exists(), "an included DST file SRC lacks is deleted");
    assert_eq!(std::fs::read(d.join("trip/mine.txt")).unwrap(), b"excluded in DST: kept");
    // The order matters: the catch-all first leaves everything out.
    let d2 = t.path().join("dst2");
    let mut list = vec!["--exclude", "*", "--include", "*.jpg"];
    list.extend([s_arg, d2.to_str().unwrap()]);
    sync(&args(&list)).assert_code(0);
    assert_eq!(std::fs::read_dir(&d2).unwrap().count(), 0);
}

/// `--exclude-from` and `--include-from` read one rule a line, comments and blank lines skipped,
/// `+ `/`- ` prefixes and `!` as rsync reads them, at their place among `--include`/`--exclude`;
/// `-` is standard input, and `-0` splits at NUL bytes.
#[test]
fn rules_from_files_take_their_place_among_the_options() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    for f in ["a.o", "b.o", "keep.o", "c.log", "d.txt", "sub/e.o", "sub/f.txt", "x y.txt"] {
        write(&s, f, f.as_bytes());
    }
    let from = write(t.path(), "rules", b"# objects\n+ keep.o\n*.o\n\n; logs\n*.log\n");
    let mut list = vec!["--include", "sub/e.o", "--exclude-from", from.to_str().unwrap()];
    list.extend([s.to_str().unwrap(), d.to_str().unwrap()]);
    sync(&args(&list)).assert_code(0);
    let mut got: Vec<String> =
        describe(&d).keys().map(|k| String::from_utf8_lossy(k).into_owned()).collect();
    got.sort();
    assert_eq!(got, [".", "d.txt", "keep.o", "sub", "sub/e.o", "sub/f.txt", "x y.txt"]);

    // From standard input, NUL-separated: a name with a space, and `!` dropping what came first.
    let d2 = t.path().join("dst2");
    let mut c = std::process::Command::new(BIN);
    c.arg("sync").args(["--exclude", "*.txt", "-0", "--include-from", "-", "--exclude", "*"]);
    c.arg(&s).arg(&d2).stdin(Stdio::piped()).stdout(Stdio::null());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"!\0x y.txt\0- a.o\0d.txt\0").unwrap();
    assert!(child.wait().unwrap().success());
    let mut got: Vec<String> =
        describe(&d2).keys().map(|k| String::from_utf8_lossy(k).into_owned()).collect();
    got.sort();
    assert_eq!(got, [".", "d.txt", "x y.txt"]);
}

/// A pattern that cannot be read, or a rules file that cannot, stops the run before anything
/// is made, naming it (exit 2).
#[test]
fn a_bad_pattern_or_a_missing_rules_file_changes_nothing() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", b"x");
    let (s_arg, d_arg) = (s.to_str().unwrap(), d.to_str().unwrap());
    let out = sync(&args(&["--exclude", "a[b", s_arg, d_arg]));
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"a[b\""), "{}", out.dump());
    let out = sync(&args(&["--include-from", "/nonexistent/rules", s_arg, d_arg]));
    out.assert_code(2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--include-from /nonexistent/rules"));
    assert!(!d.exists());
}

/// An excluded entry is left out before it is examined, as rsync does: one this user could not
/// even examine (in a root-owned directory it may list but not search) is no problem, and the
/// run is complete (exit 0); not excluded, it is one (exit 1).
#[test]
fn an_excluded_entry_is_never_examined_so_cannot_fail() {
    let name = "an_excluded_entry_is_never_examined_so_cannot_fail";
    if !require(is_root(), name, "needs root (to run as nobody via setpriv)") {
        return;
    }
    let t = tmp();
    chmod(t.path(), 0o755);
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "mine/f", b"x");
    write(&s, "locked/secret.o", b"root's");
    give_to_nobody(&s.join("mine"));
    chmod(&s.join("locked"), 0o744);
    let d2 = t.path().join("d2");
    for dst in [&d, &d2] {
        std::fs::create_dir(dst).unwrap();
        give_to_nobody(dst);
    }
    let d_arg = d.to_str().unwrap();
    let out = sync_as_nobody(&args(&["--exclude", "*.o", s.to_str().unwrap(), d_arg]));
    out.assert_code(0);
    assert_eq!(std::fs::read(d.join("mine/f")).unwrap(), b"x");
    assert!(d.join("locked").is_dir() && !d.join("locked/secret.o").exists());
    let out = sync_as_nobody(&args(&[s.to_str().unwrap(), d2.to_str().unwrap()]));
    out.assert_code(1);
}

/// `-i` prints each change as `rsync -ai` does: on the same change to the same tree, the same
/// lines (rsync names each entry of a deleted directory besides the directory; dedup the
/// directory alone); the dry run prints what the real run then does.
#[test]
fn itemized_changes_are_the_lines_rsync_prints() {
    let have = std::process::Command::new("rsync").arg("--version").output().is_ok();
    if !require(have, "itemized_changes_are_the_lines_rsync_prints", "rsync not installed") {
        return;
    }
    let t = tmp();
    let s = t.path().join("src");
    for (f, text) in [("changed", "a"), ("modeonly", "b"), ("timeonly", "c"), ("gone", "d")] {
        write(&s, f, text.as_bytes());
    }
    write(&s, "sub/keep", b"e");
    write(&s, "gonedir/z", b"z");
    symlink(&s, "target", "oldlink");
    let (ours, theirs) = (t.path().join("ours"), t.path().join("theirs"));
    for d in [&ours, &theirs] {
        let ok = std::process::Command::new("cp").arg("-a").arg(&s).arg(d).status().unwrap();
        assert!(ok.success());
    }
    write(&s, "changed", b"a, and more");
    set_mtime(&s.join("changed"), 1_700_000_000, 5);
    chmod(&s.join("modeonly"), 0o600);
    set_mtime(&s.join("timeonly"), 1_600_000_000, 0);
    std::fs::remove_file(s.join("gone")).unwrap();
    std::fs::remove_dir_all(s.join("gonedir")).unwrap();
    write(&s, "new.txt", b"n");
    write(&s, "newdir/f", b"x");
    symlink(&s, "target", "link");
    std::fs::remove_file(s.join("oldlink")).unwrap();
    symlink(&s, "other", "oldlink");
    mkfifo(&s.join("fifo"));
    chmod(&s.join("sub"), 0o700);
    // rsync itemizes a time that differs by whole seconds only.
    set_mtime(&s.join("oldlink"), 1_650_000_000, 0);
    set_mtime(&s, 1_650_000_000, 0);
    let run = |extra: &[&str]| {
        let mut a = args(&["-i", "--delete"]);
        a.extend(args(extra));
        a.extend([s.clone().into(), ours.clone().into()]);
        sync(&a)
    };
    let dry = run(&["-n"]);
    let real = run(&[]);
    real.assert_code(0);
    assert_same_run(&dry, &real);
    let rsync = std::process::Command::new("rsync")
        .args(["-ai", "--delete"])
        .arg(format!("{}/", s.display()))
        .arg(format!("{}/", theirs.display()))
        .output()
        .unwrap();
    assert!(rsync.status.success());
    let deleted_dirs: Vec<String> = String::from_utf8_lossy(&rsync.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("*deleting   ").filter(|p| p.ends_with('/')))
        .map(str::to_owned)
        .collect();
    let mut theirs_lines: Vec<String> = String::from_utf8_lossy(&rsync.stdout)
        .lines()
        .filter(|l| {
            let below = |d: &String| {
                l.strip_prefix("*deleting   ").is_some_and(|p| p != d && p.starts_with(d.as_str()))
            };
            !deleted_dirs.iter().any(below)
        })
        .map(str::to_owned)
        .collect();
    theirs_lines.sort();
    assert_eq!(changes(&real), theirs_lines, "{}", real.dump());
    assert!(theirs_lines.contains(&">f.st...... changed".to_string()));
}

/// Every path below `root` with its content (`<dir>`, `-> target` for symlinks), sorted.
fn listing(root: &std::path::Path) -> Vec<String> {
    describe(root)
        .into_iter()
        .filter(|(k, _)| k != b".")
        .map(|(k, n)| {
            let what = match n.kind {
                "dir" => "<dir>".to_string(),
                "symlink" => format!("-> {}", String::from_utf8_lossy(&n.content)),
                _ => String::from_utf8_lossy(&n.content).into_owned(),
            };
            format!("{} {what}", String::from_utf8_lossy(&k))
        })
        .collect()
}

fn run_args(flags: &[&str], s: &std::path::Path, d: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut a = args(flags);
    a.extend([s.into(), d.into()]);
    a
}

/// `--backup-dir`: what a run replaces (a file's content, a file that becomes a symlink) or
/// deletes (a file, a directory with its contents) is moved to its path below DIR, a relative
/// DIR lying beside DST through `..`; the dry run prints the same `backup` lines; a run with
/// nothing to do keeps nothing; a later backup of the same path replaces the earlier one.
#[test]
fn a_backup_dir_keeps_what_a_run_replaces_or_deletes_at_its_path() {
    let t = tmp();
    let (s, d, bk) = (t.path().join("src"), t.path().join("dst"), t.path().join("bk"));
    for (f, text) in [("same", "s"), ("changed", "v1"), ("gone", "g"), ("becomes-link", "l")] {
        write(&s, f, text.as_bytes());
    }
    write(&s, "dir/inner", b"i");
    write(&s, "dir/deeper/x", b"x");
    write(&s, "keep/sub/edited", b"e1");
    sync(&run_args(&[], &s, &d)).assert_code(0);
    write(&s, "changed", b"v2, longer");
    write(&s, "keep/sub/edited", b"e2, longer");
    std::fs::remove_file(s.join("gone")).unwrap();
    std::fs::remove_dir_all(s.join("dir")).unwrap();
    std::fs::remove_file(s.join("becomes-link")).unwrap();
    symlink(&s, "same", "becomes-link");
    let flags = ["-v", "--delete", "--backup-dir", "../bk"];
    let dry = sync(&run_args(&[&flags[..], &["-n"]].concat(), &s, &d));
    assert!(!bk.exists(), "a dry run makes nothing");
    let real = sync(&run_args(&flags, &s, &d));
    real.assert_code(0);
    assert_same_run(&dry, &real);
    assert!(changes(&real).contains(&"backup keep/sub/edited".to_string()), "{}", real.dump());
    assert!(String::from_utf8_lossy(&real.stderr).contains("backed up 5"), "{}", real.dump());
    assert_mirror(&s, &d);
    assert_eq!(
        listing(&bk),
        [
            "becomes-link l",
            "changed v1",
            "dir <dir>",
            "dir/deeper <dir>",
            "dir/deeper/x x",
            "dir/inner i",
            "gone g",
            "keep <dir>",
            "keep/sub <dir>",
            "keep/sub/edited e1",
        ]
    );
    let again = sync(&run_args(&flags, &s, &d));
    again.assert_code(0);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("backed up"), "{}", again.dump());
    write(&s, "changed", b"v3, longer still");
    sync(&run_args(&flags, &s, &d)).assert_code(0);
    assert_eq!(std::fs::read(bk.join("changed")).unwrap(), b"v2, longer", "the later backup");
}

/// A relative `--backup-dir` below DST is left out of the mirror: never deleted, not even with
/// `--delete-excluded`, and a SRC directory of that path is not mirrored into it. A suffix goes
/// on each file's name, a directory's included.
#[test]
fn a_backup_dir_inside_dst_is_left_out_of_the_mirror() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", b"v1");
    write(&s, "d/g", b"g");
    write(&s, "old/2024/from-src", b"SRC's own old/2024: not mirrored there");
    write(&s, "old/other", b"the rest of SRC's old/ is");
    let flags = ["--delete", "--delete-excluded", "--exclude", "*.tmp"];
    let flags = [&flags[..], &["--backup-dir", "old/2024", "--suffix", ".bak"]].concat();
    sync(&run_args(&flags, &s, &d)).assert_code(0);
    assert!(!d.join("old/2024").exists(), "nothing to keep: no backup directory made");
    assert_eq!(std::fs::read(d.join("old/other")).unwrap(), b"the rest of SRC's old/ is");
    write(&s, "f", b"v2, longer");
    std::fs::remove_dir_all(s.join("d")).unwrap();
    sync(&run_args(&flags, &s, &d)).assert_code(0);
    let bk = d.join("old/2024");
    assert_eq!(listing(&bk), ["d <dir>", "d/g.bak g", "f.bak v1"]);
    // Again, with nothing to do: the backups stay, and are no part of the mirror.
    let out = sync(&run_args(&flags, &s, &d));
    out.assert_code(0);
    assert_eq!(listing(&bk), ["d <dir>", "d/g.bak g", "f.bak v1"]);
    assert!(!d.join("old/2024/from-src").exists());
    assert_eq!(std::fs::read(d.join("f")).unwrap(), b"v2, longer");
}

/// A `--log` file inside DST was an entry SRC lacks: `--delete` removed the log the run was
/// writing, and the run exited 0 with no log anywhere. It is now left out of the mirror on both
/// sides, as a backup directory inside DST is: at DST's top or in a directory of its own.
#[test]
fn a_log_inside_dst_is_left_out_of_the_mirror() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", b"a");
    for log in [d.join("changes.jsonl"), d.join("logs/changes.jsonl")] {
        write(&d, "old", b"old");
        write(&d, "logs/not-kept", b"x");
        let flags = ["--delete", "--log", log.to_str().unwrap()];
        sync(&run_args(&flags, &s, &d)).assert_code(0);
        let written = std::fs::read_to_string(&log).expect("the log is gone");
        assert!(written.contains("\"old\""), "{written}");
        write(&s, "b", b"b");
        sync(&run_args(&flags, &s, &d)).assert_code(0);
        let written = std::fs::read_to_string(&log).expect("the log is gone");
        assert!(written.contains("\"b\""), "{written}");
        assert!(!d.join("old").exists() && !d.join("logs/not-kept").exists());
        std::fs::remove_file(s.join("b")).unwrap();
        std::fs::remove_file(&log).unwrap();
    }
}

/// `-b` keeps what is replaced or deleted beside itself, with `~` (or `--suffix`): a deleted
/// directory whole; and `--delete` never deletes names ending with the suffix, though SRC lacks
/// them.
#[test]
fn backups_beside_their_files_carry_the_suffix_and_outlive_delete() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", b"v1");
    write(&s, "g", b"g");
    write(&s, "dir/x", b"x");
    sync(&run_args(&[], &s, &d)).assert_code(0);
    write(&s, "f", b"v2, longer");
    std::fs::remove_file(s.join("g")).unwrap();
    std::fs::remove_dir_all(s.join("dir")).unwrap();
    sync(&run_args(&["-b", "--delete"], &s, &d)).assert_code(0);
    let want = ["dir~ <dir>", "dir~/x x", "f v2, longer", "f~ v1", "g~ g"];
    assert_eq!(listing(&d), want);
    sync(&run_args(&["-b", "--delete"], &s, &d)).assert_code(0);
    assert_eq!(listing(&d), want, "backups are never deleted");
    write(&s, "f", b"v3, longer still");
    sync(&run_args(&["-b", "--suffix", ".old", "--delete"], &s, &d)).assert_code(0);
    assert_eq!(std::fs::read(d.join("f.old")).unwrap(), b"v2, longer");
    assert!(!d.join("f~").exists(), "`~` is no backup suffix of this run: deleted");
}

/// The directories a backup directory gets on the way to a backup have the modes of DST's, so a
/// file kept from a private directory is no more exposed there.
#[test]
fn backup_directories_are_as_private_as_dsts() {
    let t = tmp();
    let (s, d, bk) = (t.path().join("src"), t.path().join("dst"), t.path().join("bk"));
    write(&s, "private/deeper/f", b"v1");
    chmod(&s.join("private"), 0o700);
    sync(&run_args(&[], &s, &d)).assert_code(0);
    write(&s, "private/deeper/f", b"v2, longer");
    sync(&run_args(&["--backup-dir", bk.to_str().unwrap()], &s, &d)).assert_code(0);
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&bk.join("private")), 0o700);
    assert_eq!(mode(&bk.join("private/deeper")), mode(&d.join("private/deeper")));
    assert_eq!(mode(&bk), 0o700, "made by the run: private");
    assert_eq!(std::fs::read(bk.join("private/deeper/f")).unwrap(), b"v1");
}

/// Backups that could not be kept, or that would put data where it does not belong, are
/// refused before anything is made (exit 2): a backup directory inside SRC, holding DST, on
/// another file system (a move cannot cross it), a suffix with a `/`, an empty suffix beside
/// the files, a suffix without a backup.
#[test]
fn backups_that_cannot_be_kept_safely_are_refused() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", b"x");
    let shm = std::path::Path::new("/dev/shm");
    let other_fs = shm.is_dir() && ino_dev(shm) != ino_dev(t.path());
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["--backup-dir", s.to_str().unwrap()],
        vec!["--backup-dir", "../src/kept"],
        vec!["--backup-dir", ".."],
        vec!["-b", "--suffix", "a/b"],
        vec!["-b", "--suffix", ""],
        vec!["--suffix", ".bak"],
    ];
    let shm_dir = shm.join(format!("dedup-test-bk-{}", std::process::id()));
    if other_fs {
        cases.push(vec!["--backup-dir", shm_dir.to_str().unwrap()]);
    }
    for case in cases {
        let out = sync(&run_args(&case, &s, &d));
        out.assert_code(2);
        assert!(!d.exists(), "{case:?}: nothing made\n{}", out.dump());
    }
    assert!(!shm_dir.exists());
}

fn ino_dev(p: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).unwrap().dev()
}

/// Every way a run puts another entry in place of a DST file keeps the old one first: a hard
/// link of SRC's group made over it, a FIFO or a directory made in its place; the dry run lists
/// the same backups. A file SRC moved is renamed in DST, not kept: it lives on at its new path.
#[test]
fn every_kind_of_replacement_keeps_the_old_entry() {
    let t = tmp();
    let (s, d, bk) = (t.path().join("src"), t.path().join("dst"), t.path().join("bk"));
    write(&s, "a", b"linked content");
    write(&s, "old-name", &pattern(5000, 7));
    for f in ["b", "p", "e"] {
        write(&s, f, format!("DST's {f}").as_bytes());
    }
    sync(&run_args(&[], &s, &d)).assert_code(0);
    std::fs::remove_file(s.join("b")).unwrap();
    hardlink(&s, "a", "b");
    std::fs::rename(s.join("old-name"), s.join("new-name")).unwrap();
    std::fs::remove_file(s.join("p")).unwrap();
    mkfifo(&s.join("p"));
    std::fs::remove_file(s.join("e")).unwrap();
    write(&s, "e/inside", b"e is a directory now");
    let flags = ["-v", "--delete", "--backup-dir", bk.to_str().unwrap()];
    let dry = sync(&run_args(&[&flags[..], &["-n"]].concat(), &s, &d));
    let real = sync(&run_args(&flags, &s, &d));
    real.assert_code(0);
    assert_same_run(&dry, &real);
    assert!(changes(&real).contains(&"rename new-name <- old-name".to_string()), "{}", real.dump());
    assert_mirror(&s, &d);
    assert_eq!(listing(&bk), ["b DST's b", "e DST's e", "p DST's p"]);
}

/// `--files-from`: the listed paths with the directories leading to them; `c/` adds c's entries
/// and `-r` everything below; `--delete` removes only in directories mirrored whole. A rerun has
/// nothing to do (a listed directory with an xattr included), the dry run prints what the real
/// run does, and a listed path SRC lacks is an error that stops every deletion (exit 1).
#[test]
fn files_from_mirrors_the_listed_paths_and_deletes_only_where_whole() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    for f in ["a/b/file", "a/other", "c/x", "c/sub/y", "d/e/z", "top"] {
        write(&s, f, f.as_bytes());
    }
    set_xattr(&s.join("d"), "user.note", "listed, not entered");
    for f in ["a/stale", "c/stale", "c/sub/stale", "d/stale", "zz/q", "topstale"] {
        write(&d, f, b"old");
    }
    let list = write(t.path(), "list", b"a/b/file\n# comment\nc/\n/d\n");
    let flags = ["-v", "--delete", "--files-from", list.to_str().unwrap()];
    let dry = sync(&run_args(&[&["-n"], &flags[..]].concat(), &s, &d));
    let real = sync(&run_args(&flags, &s, &d));
    real.assert_code(0);
    assert_same_run(&dry, &real);
    let names = |root: &std::path::Path| -> Vec<String> {
        describe(root).keys().map(|k| String::from_utf8_lossy(k).into_owned()).collect()
    };
    let want = [
        ".",
        "a",
        "a/b",
        "a/b/file",
        "a/stale",
        "c",
        "c/sub",
        "c/sub/stale",
        "c/x",
        "d",
        "d/stale",
        "topstale",
        "zz",
        "zz/q",
    ];
    assert_eq!(names(&d), want);
    let again = sync(&run_args(&flags, &s, &d));
    again.assert_code(0);
    assert!(again.stdout.is_empty(), "a rerun changes nothing\n{}", again.dump());
    // -r: the listed directories whole.
    let flags_r = ["-r", "--delete", "--files-from", list.to_str().unwrap()];
    sync(&run_args(&flags_r, &s, &d)).assert_code(0);
    let want = [
        ".", "a", "a/b", "a/b/file", "a/stale", "c", "c/sub", "c/sub/y", "c/x", "d", "d/e",
        "d/e/z", "topstale", "zz", "zz/q",
    ];
    assert_eq!(names(&d), want);
    // A listed path SRC lacks: named, exit 1, and nothing deleted.
    write(&d, "c/new-stale", b"old");
    let bad = write(t.path(), "bad", b"c/\nmissing/file\n");
    let out = sync(&run_args(&["--delete", "--files-from", bad.to_str().unwrap()], &s, &d));
    out.assert_code(1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing: listed in --files-from"));
    assert!(d.join("c/new-stale").exists());
    // From standard input, NUL-separated.
    let d2 = t.path().join("d2");
    let mut c = std::process::Command::new(BIN);
    c.args(["sync", "-0", "--files-from", "-"]).arg(&s).arg(&d2).stdin(Stdio::piped());
    let mut child = c.stdout(Stdio::null()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"top\0a/other\0").unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(names(&d2), [".", "a", "a/other", "top"]);
}

/// `dedup sync -h` groups the options and ends with examples; `--help` adds the rules, the exit
/// status and an example of each of rsync's options.
#[test]
fn the_help_groups_the_options_and_shows_examples() {
    let short = sync(&args(&["-h"]));
    short.assert_code(0);
    let text = String::from_utf8_lossy(&short.stdout);
    for want in ["Deleting and keeping:", "Selecting what to mirror:", "Examples:", "--backup-dir"]
    {
        assert!(text.contains(want), "{want} missing from\n{text}");
    }
    let long = sync(&args(&["--help"]));
    let text = String::from_utf8_lossy(&long.stdout);
    for want in
        ["Exit status:", "--include '*/'", "--files-from -", "-ni --delete", "--backup-dir ../"]
    {
        assert!(text.contains(want), "{want} missing from\n{text}");
    }
}

/// A backup that cannot be made stops the change that needed it: the old file stays in place,
/// nothing half-made is left, and the run says so (exit 1). Here the backup directory is root's
/// and the run is nobody's; and below a backup directory a symlink planted on the way is never
/// followed.
#[test]
fn a_backup_that_cannot_be_made_leaves_the_old_file_in_place() {
    let name = "a_backup_that_cannot_be_made_leaves_the_old_file_in_place";
    if !require(is_root(), name, "needs root (to run as nobody via setpriv)") {
        return;
    }
    let t = tmp();
    chmod(t.path(), 0o755);
    let (s, d, bk) = (t.path().join("src"), t.path().join("dst"), t.path().join("bk"));
    write(&s, "f", b"v1");
    write(&s, "sub/g", b"g1");
    std::fs::create_dir(&bk).unwrap();
    sync(&run_args(&[], &s, &d)).assert_code(0);
    give_to_nobody(&s);
    give_to_nobody(&d);
    write(&s, "f", b"v2, longer");
    give_to_nobody(&s);
    let out = sync_as_nobody(&run_args(&["--backup-dir", bk.to_str().unwrap()], &s, &d));
    out.assert_code(1);
    assert_eq!(std::fs::read(d.join("f")).unwrap(), b"v1", "{}", out.dump());
    assert!(temp_names(&d).is_empty(), "{:?}", temp_names(&d));
    // A symlink in the backup directory, where the backup of sub/g would go, leads outside.
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let inner = d.join("kept");
    std::fs::create_dir(&inner).unwrap();
    std::os::unix::fs::symlink(&outside, inner.join("sub")).unwrap();
    write(&s, "sub/g", b"g2, longer");
    let out = sync(&run_args(&["--backup-dir", "kept"], &s, &d));
    out.assert_code(1);
    assert_eq!(std::fs::read(d.join("sub/g")).unwrap(), b"g1", "{}", out.dump());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing written through it");
}
