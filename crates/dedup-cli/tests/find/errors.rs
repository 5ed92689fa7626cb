//! Errors and exit statuses: missing roots, usage errors, unreadable files and
//! directories (run as user nobody), error lines that stay one line.

use crate::common;

use common::*;

#[test]
fn nonexistent_root_is_an_error_and_other_roots_are_still_scanned() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 1);
    write(t, "t/a", &data);
    write(t, "u/b", &data);
    let out = find_json(t, &["t", "missing-root", "u"]);
    out.assert_code(1);
    out.assert_message("error", "missing-root");
    let r = assert_groups(&out, &sets(&[&["t/a", "u/b"]]));
    assert_eq!(r.summary.errors, 1);
    // the same in text mode
    let out = find(t, &["missing-root", "t", "u"]);
    out.assert_code(1);
    out.assert_message("error", "missing-root");
    assert_eq!(out.stdout, b"t/a\nu/b\n\n".to_vec(), "{}", out.dump());
}

#[test]
fn only_nonexistent_roots_still_exit_1_with_an_empty_report() {
    let d = tmp();
    let t = d.path();
    let out = find_json(t, &["nope1", "nope2"]);
    out.assert_code(1);
    out.assert_message("error", "nope1");
    out.assert_message("error", "nope2");
    let r = assert_groups(&out, &sets(&[]));
    assert_eq!(r.summary.errors, 2);
}

#[test]
fn quiet_does_not_silence_errors() {
    let d = tmp();
    let t = d.path();
    write(t, "t/a", b"x");
    let out = find(t, &["-q", "t", "missing-root"]);
    out.assert_code(1);
    out.assert_message("error", "missing-root");
}

#[test]
fn error_lines_escape_control_characters_in_paths() {
    let d = tmp();
    let t = d.path();
    write(t, "t/a", b"x");
    let out = find(t, &["-q", "t", "no\nsuch\rroot\u{1b}[31m"]);
    out.assert_code(1);
    let lines = out.stderr_lines();
    assert!(!lines.is_empty(), "{}", out.dump());
    for l in &lines {
        assert!(
            l.starts_with("dedup: "),
            "every stderr line must be a complete message: {l:?}\n{}",
            out.dump()
        );
        assert!(!l.contains('\r') && !l.contains('\u{1b}'), "raw control char in {l:?}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("dedup: error: ") && l.contains("no") && l.contains("such")),
        "{}",
        out.dump()
    );
}

#[test]
fn usage_errors_exit_2_without_a_report() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 2);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    let cases: &[&[&str]] = &[
        &["--no-such-option", "t"],
        &["--format", "xml", "t"],
        &["--max-depth", "abc", "t"],
        &["--max-depth", "-1", "t"],
        &["--min-size", "12Q", "t"],
        &["--max-size", "lots", "t"],
    ];
    for args in cases {
        let out = find(t, args);
        out.assert_code(2);
        assert!(out.stdout.is_empty(), "no report on a usage error ({args:?})\n{}", out.dump());
        assert!(!out.stderr.is_empty(), "a usage error must say why ({args:?})");
    }
    // -o must not create a report file on a usage error
    let out = find(t, &["-o", "report.txt", "--min-size", "bogus", "t"]);
    out.assert_code(2);
    assert!(!t.join("report.txt").exists(), "report written on a usage error");
    // unknown subcommand
    let out = run(cmd(t).args(["frobnicate", "t"]));
    out.assert_code(2);
}

#[test]
fn unwritable_output_file_is_fatal() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 3);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    let out = find(t, &["-o", "no/such/dir/report.txt", "t"]);
    out.assert_code(2);
    assert!(out.stdout.is_empty(), "{}", out.dump());
}

/// Prepares a tree that user nobody can read, except for the given parts.
fn world_readable_tree() -> tempfile::TempDir {
    let d = tmp();
    chmod(d.path(), 0o755);
    d
}

#[test]
fn unreadable_file_is_an_error_and_readable_duplicates_are_still_reported() {
    let test = "unreadable_file_is_an_error_and_readable_duplicates_are_still_reported";
    if !require(is_root(), test, "needs root to run the binary as user nobody") {
        return;
    }
    let d = world_readable_tree();
    let t = d.path();
    let data = pattern(4096, 4);
    write(t, "t/r1", &data);
    write(t, "t/r2", &data);
    // same size and content as r1/r2, so it has to be read
    let locked = write(t, "t/locked", &data);
    chmod(&locked, 0o000);
    let other = pattern(5000, 5);
    write(t, "t/sub/o1", &other);
    write(t, "t/o2", &other);
    let out = find_as_nobody(t, &["--format", "json", "t"]);
    out.assert_code(1);
    out.assert_message("error", "t/locked");
    let r = assert_groups(&out, &sets(&[&["t/r1", "t/r2"], &["t/o2", "t/sub/o1"]]));
    assert!(!r.contains("t/locked"));
    assert!(r.summary.errors >= 1, "{}", out.dump());
    // text output: the same groups, the error on stderr
    let out = find_as_nobody(t, &["t"]);
    out.assert_code(1);
    out.assert_message("error", "t/locked");
    assert_eq!(out.stdout, b"t/o2\nt/sub/o1\n\nt/r1\nt/r2\n\n".to_vec(), "{}", out.dump());
}

#[test]
fn unreadable_directory_is_an_error_and_the_rest_is_still_reported() {
    let test = "unreadable_directory_is_an_error_and_the_rest_is_still_reported";
    if !require(is_root(), test, "needs root to run the binary as user nobody") {
        return;
    }
    let d = world_readable_tree();
    let t = d.path();
    let data = pattern(4096, 6);
    write(t, "t/r1", &data);
    write(t, "t/deep/r2", &data);
    write(t, "t/locked/inside1", &data);
    write(t, "t/locked/inside2", &data);
    write(t, "t/locked/sub/inside3", &data);
    chmod(&t.join("t/locked"), 0o000);
    let out = find_as_nobody(t, &["--format", "json", "t"]);
    out.assert_code(1);
    out.assert_message("error", "t/locked");
    let r = assert_groups(&out, &sets(&[&["t/deep/r2", "t/r1"]]));
    assert!(r.summary.errors >= 1, "{}", out.dump());
    // restore so that the temp dir can be removed by anyone
    chmod(&t.join("t/locked"), 0o755);
}

#[test]
fn unreadable_root_argument_is_an_error() {
    let test = "unreadable_root_argument_is_an_error";
    if !require(is_root(), test, "needs root to run the binary as user nobody") {
        return;
    }
    let d = world_readable_tree();
    let t = d.path();
    let data = pattern(4096, 7);
    write(t, "ok/a", &data);
    write(t, "ok/b", &data);
    write(t, "closed/c", &data);
    chmod(&t.join("closed"), 0o000);
    let out = find_as_nobody(t, &["--format", "json", "closed", "ok"]);
    out.assert_code(1);
    out.assert_message("error", "closed");
    assert_groups(&out, &sets(&[&["ok/a", "ok/b"]]));
    chmod(&t.join("closed"), 0o755);
}
