//! Overlapping and repeated roots: a file is never its own duplicate and one
//! directory entry is listed once.

use crate::common;

use common::*;

/// a/x, a/y, a/sub/z identical; a/lone, a/sub/lone2 unique.
fn tree(t: &std::path::Path) {
    let data = pattern(321, 1);
    write(t, "a/x", &data);
    write(t, "a/y", &data);
    write(t, "a/sub/z", &data);
    write(t, "a/lone", &pattern(400, 2));
    write(t, "a/sub/lone2", &pattern(401, 3));
}

#[test]
fn repeated_and_nested_roots_list_each_entry_once() {
    let d = tmp();
    let t = d.path();
    tree(t);
    for args in [
        &["a", "a"][..],
        &["a", "a", "a/sub"][..],
        &["a/sub", "a"][..],
        &["a", "a/sub", "a/sub/"][..],
        &["a/x", "a"][..],
        &["a", "a/x", "a/y", "a/sub/z"][..],
    ] {
        let out = find_json(t, args);
        out.assert_code(0);
        let r = assert_groups(&out, &sets(&[&["a/sub/z", "a/x", "a/y"]]));
        assert_eq!(r.summary.redundant_files, 2, "{args:?}");
        assert_eq!(r.summary.redundant_bytes, 2 * 321, "{args:?}");
    }
}

#[test]
fn a_lone_file_under_repeated_roots_is_not_its_own_duplicate() {
    let d = tmp();
    let t = d.path();
    write(t, "a/only", &pattern(500, 4));
    write(t, "a/sub/only2", &pattern(501, 5));
    // control: a real pair under another root
    write(t, "c/p1", &pattern(50, 4));
    write(t, "c/p2", &pattern(50, 4));
    let control = sets(&[&["c/p1", "c/p2"]]);
    for args in [
        &["a", "a"][..],
        &["a", "a", "a/sub"][..],
        &["./a", "a"][..],
        &["a/only", "a/only", "a"][..],
        &["a", "a/."][..],
    ] {
        let mut args = args.to_vec();
        args.push("c");
        let out = find_json(t, &args);
        out.assert_code(0);
        assert_groups(&out, &control);
        // and not with -H either: one path is one path
        let mut with_h = vec!["-H"];
        with_h.extend_from_slice(&args);
        let out = find_json(t, &with_h);
        out.assert_code(0);
        assert_groups(&out, &control);
    }
}

fn strip_dot(p: &[u8]) -> Vec<u8> {
    p.strip_prefix(b"./").unwrap_or(p).to_vec()
}

#[test]
fn differently_spelled_roots_list_each_entry_once() {
    let d = tmp();
    let t = d.path();
    tree(t);
    for args in [&["./a", "a"][..], &["a", "./a"][..], &["a", "./a/sub"][..]] {
        let out = find_json(t, args);
        out.assert_code(0);
        let r = out.json();
        assert_eq!(r.groups.len(), 1, "{args:?}\n{}", out.dump());
        let mut paths: Vec<Vec<u8>> =
            r.groups[0].files.iter().map(|f| strip_dot(&f.path)).collect();
        paths.sort();
        assert_eq!(
            paths,
            vec![b"a/sub/z".to_vec(), b"a/x".to_vec(), b"a/y".to_vec()],
            "{args:?}: each entry once\n{}",
            out.dump()
        );
        assert_eq!(r.summary.redundant_files, 2);
    }
}

#[test]
fn repeated_roots_with_hard_links() {
    let d = tmp();
    let t = d.path();
    let data = pattern(600, 6);
    write(t, "a/h1", &data);
    hardlink(t, "a/h1", "a/h2");
    // one inode, two names, roots repeated: no group (the -H run below is
    // the control)
    let out = find_json(t, &["a", "a"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[]));
    // with -H the two names are duplicates, each listed once
    let out = find_json(t, &["-H", "a", "a"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["a/h1", "a/h2"]]));
    assert_eq!(r.summary.redundant_files, 1);
    // plus a copy
    write(t, "a/sub/copy", &data);
    let out = find_json(t, &["a", "a/sub", "a"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["a/h1", "a/h2", "a/sub/copy"]]));
    assert_eq!(r.summary.redundant_files, 1);
    let out = find_json(t, &["-H", "a", "a/sub", "a"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["a/h1", "a/h2", "a/sub/copy"]]));
    assert_eq!(r.summary.redundant_files, 2);
}

#[test]
fn overlapping_roots_in_text_output() {
    let d = tmp();
    let t = d.path();
    tree(t);
    let out = find(t, &["a", "a", "a/sub"]);
    out.assert_code(0);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a/sub/z\na/x\na/y\n\n", "{}", out.dump());
}
