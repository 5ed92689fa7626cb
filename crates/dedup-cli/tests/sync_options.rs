//! The options rsync users reach for on the first day, on real trees: include and exclude rules
//! in the order given and read from files.

mod common;

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
