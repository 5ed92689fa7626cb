//! Special files (FIFOs, sockets, devices), empty files, hidden files.

use crate::common;

use common::*;
use std::time::Duration;

/// A short timeout: a FIFO opened for reading blocks forever.
fn find_json_quick(dir: &std::path::Path, args: &[&str]) -> Out {
    let mut c = cmd(dir);
    c.timeout(Duration::from_secs(60)).args(["find", "--format", "json"]).args(args);
    run(&mut c)
}

#[test]
fn fifo_in_the_tree_does_not_hang_and_is_not_reported() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 1);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    mkdir(t, "t/sub");
    mkfifo(&t.join("t/pipe"));
    mkfifo(&t.join("t/sub/pipe2"));
    let out = find_json_quick(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    assert_eq!(r.summary.files_scanned, 2, "a FIFO is not a regular file");
}

#[test]
fn fifo_with_include_empty_is_not_grouped_with_empty_files() {
    // A FIFO has size 0; it must not join the group of empty files (and must
    // not be opened).
    let d = tmp();
    let t = d.path();
    write(t, "t/e1", b"");
    write(t, "t/e2", b"");
    mkfifo(&t.join("t/pipe"));
    mkfifo(&t.join("t/pipe2"));
    let out = find_json_quick(t, &["--include-empty", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/e1", "t/e2"]]));
}

#[test]
fn fifo_as_root_argument_does_not_hang() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 2);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    mkfifo(&t.join("pipe"));
    let out = find_json_quick(t, &["pipe", "t"]);
    let code = out.code();
    assert!(code == 0 || code == 1, "{}", out.dump());
    assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    let out = find_json_quick(t, &["--include-empty", "pipe", "t"]);
    let code = out.code();
    assert!(code == 0 || code == 1, "{}", out.dump());
    assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
}

#[test]
fn sockets_are_skipped() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 3);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    write(t, "t/e1", b"");
    write(t, "t/e2", b"");
    let _l1 = std::os::unix::net::UnixListener::bind(t.join("t/sock1")).unwrap();
    let _l2 = std::os::unix::net::UnixListener::bind(t.join("t/sock2")).unwrap();
    let out = find_json_quick(t, &["--include-empty", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/b"], &["t/e1", "t/e2"]]));
}

#[test]
fn device_nodes_are_skipped() {
    if !require(is_root(), "device_nodes_are_skipped", "mknod needs root") {
        return;
    }
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 4);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    write(t, "t/e1", b"");
    write(t, "t/e2", b"");
    mkdir(t, "t/dev");
    // /dev/zero and /dev/null twins: reading the first never ends
    for (name, minor) in [("zero1", "5"), ("zero2", "5"), ("null1", "3"), ("null2", "3")] {
        let st = std::process::Command::new("mknod")
            .arg(t.join("t/dev").join(name))
            .args(["c", "1", minor])
            .status()
            .unwrap();
        assert!(st.success(), "mknod failed");
    }
    let out = find_json_quick(t, &["--include-empty", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/b"], &["t/e1", "t/e2"]]));
}

#[test]
fn empty_files_are_not_duplicates_by_default() {
    let d = tmp();
    let t = d.path();
    write(t, "t/e1", b"");
    write(t, "t/e2", b"");
    write(t, "t/sub/e3", b"");
    let data = pattern(10, 5);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    assert_eq!(r.summary.groups, 1);
}

#[test]
fn empty_files_are_grouped_with_include_empty() {
    let d = tmp();
    let t = d.path();
    write(t, "t/e1", b"");
    write(t, "t/e2", b"");
    write(t, "t/sub/e3", b"");
    let data = pattern(10, 6);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    let out = find_json(t, &["--include-empty", "t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/b"], &["t/e1", "t/e2", "t/sub/e3"]]));
    // groups by size descending: the empty group is last
    assert_eq!(r.groups[0].size, 10);
    assert_eq!(r.groups[1].size, 0);
    assert_eq!(r.summary.groups, 2);
    assert_eq!(r.summary.redundant_files, 1 + 2);
    assert_eq!(r.summary.redundant_bytes, 10);
}

#[test]
fn hard_linked_empty_file_alone_is_not_a_group() {
    let d = tmp();
    let t = d.path();
    write(t, "t/e", b"");
    hardlink(t, "t/e", "t/e_link");
    let out = find_json(t, &["--include-empty", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[]));
    let out = find_json(t, &["--include-empty", "-H", "t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/e", "t/e_link"]]));
}

#[test]
fn hidden_files_and_directories_are_scanned_and_ignore_files_not_honoured() {
    let d = tmp();
    let t = d.path();
    let data = pattern(256, 7);
    write(t, "t/visible", &data);
    write(t, "t/.hidden", &data);
    write(t, "t/.dir/inner", &data);
    write(t, "t/.git/objects/ab/cdef", &data);
    write(t, "t/sub/.x/.y", &data);
    write(t, "t/ignored/by-gitignore", &data);
    write(t, "t/ignored.log", &data);
    // ignore files that other tools would honour
    write(t, "t/.gitignore", b"*\nignored/\n*.log\n");
    write(t, "t/.ignore", b"*\n");
    write(t, "t/.fdignore", b"*\n");
    write(t, "t/.git/info/exclude", b"*\n");
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(
        &out,
        &sets(&[
            &[
                "t/.dir/inner",
                "t/.git/objects/ab/cdef",
                "t/.hidden",
                "t/ignored.log",
                "t/ignored/by-gitignore",
                "t/sub/.x/.y",
                "t/visible",
            ],
            &["t/.fdignore", "t/.git/info/exclude", "t/.ignore"],
        ]),
    );
}

#[test]
fn hidden_root_directory() {
    let d = tmp();
    let t = d.path();
    let data = pattern(256, 8);
    write(t, ".t/a", &data);
    write(t, ".t/b", &data);
    let out = find_json(t, &[".t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&[".t/a", ".t/b"]]));
}
