//! Hard links (one inode is one file; `-H`) and symbolic links (not followed by
//! default, root arguments followed, `-L`, dangling links, loops).

use crate::common;

use common::*;

// ---------------------------------------------------------------------------
// hard links
// ---------------------------------------------------------------------------

#[test]
fn hard_links_to_one_inode_are_not_duplicates() {
    let d = tmp();
    let t = d.path();
    write(t, "t/a", &pattern(500, 1));
    hardlink(t, "t/a", "t/a_link");
    hardlink(t, "t/a", "t/sub/a_link2");
    // control: a real pair
    write(t, "t/p1", &pattern(50, 1));
    write(t, "t/p2", &pattern(50, 1));
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/p1", "t/p2"]]));
    assert_eq!(r.summary.redundant_files, 1);
    assert_eq!(r.summary.redundant_bytes, 50);
}

#[test]
fn hard_linked_file_plus_a_copy_is_one_group_listing_all_paths() {
    let d = tmp();
    let t = d.path();
    let data = pattern(500, 2);
    write(t, "t/a", &data);
    hardlink(t, "t/a", "t/a_link");
    write(t, "t/copy", &data);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/a_link", "t/copy"]]));
    assert_eq!(r.summary.groups, 1);
    assert_eq!(r.summary.redundant_files, 1, "the inode counts once");
    assert_eq!(r.summary.redundant_bytes, 500);
    // the two names share (dev, ino) in the report, the copy does not
    let by_path =
        |p: &str| r.groups[0].files.iter().find(|f| f.path == p.as_bytes()).unwrap().clone();
    let (a, l, c) = (by_path("t/a"), by_path("t/a_link"), by_path("t/copy"));
    assert_eq!((a.dev, a.ino), (l.dev, l.ino));
    assert_ne!((a.dev, a.ino), (c.dev, c.ino));
    assert_eq!((a.dev, a.ino), {
        let (dev, ino, _) = ident(&t.join("t/a"));
        (dev, ino)
    });
}

#[test]
fn two_hard_linked_pairs_with_equal_content_count_two_inodes() {
    let d = tmp();
    let t = d.path();
    let data = pattern(1000, 3);
    write(t, "t/a", &data);
    hardlink(t, "t/a", "t/a2");
    write(t, "t/b", &data);
    hardlink(t, "t/b", "t/b2");
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/a2", "t/b", "t/b2"]]));
    assert_eq!(r.summary.redundant_files, 1);
    assert_eq!(r.summary.redundant_bytes, 1000);
}

#[test]
fn hardlinks_flag_makes_hard_links_duplicates() {
    let d = tmp();
    let t = d.path();
    write(t, "t/lone", &pattern(300, 4));
    hardlink(t, "t/lone", "t/lone_link");
    let data = pattern(700, 5);
    write(t, "t/a", &data);
    hardlink(t, "t/a", "t/a_link");
    write(t, "t/copy", &data);
    for flag in ["-H", "--hardlinks"] {
        let out = find_json(t, &[flag, "t"]);
        out.assert_code(0);
        let r = assert_groups(
            &out,
            &sets(&[&["t/a", "t/a_link", "t/copy"], &["t/lone", "t/lone_link"]]),
        );
        assert_eq!(r.summary.groups, 2);
        assert_eq!(r.summary.redundant_files, 2 + 1, "-H counts paths");
        assert_eq!(r.summary.redundant_bytes, 2 * 700 + 300);
    }
}

#[test]
fn hard_links_in_different_roots_are_still_one_file() {
    let d = tmp();
    let t = d.path();
    write(t, "r1/a", &pattern(300, 6));
    hardlink(t, "r1/a", "r2/a");
    write(t, "r1/p", &pattern(30, 6));
    write(t, "r2/p", &pattern(30, 6));
    let out = find_json(t, &["r1", "r2"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["r1/p", "r2/p"]]));
}

// ---------------------------------------------------------------------------
// symbolic links
// ---------------------------------------------------------------------------

fn symlink_tree(t: &std::path::Path) {
    let data = pattern(400, 10);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    symlink(t, "a", "t/link_to_a");
    symlink(t, "../outside/x", "t/link_to_outside_file");
    symlink(t, "../outside", "t/link_to_outside_dir");
    write(t, "t/lonely", &pattern(401, 11));
    symlink(t, "lonely", "t/link_to_lonely");
    let other = pattern(402, 12);
    write(t, "outside/x", &other);
    write(t, "t/y", &other);
}

#[test]
fn symlinks_are_neither_followed_nor_reported_by_default() {
    let d = tmp();
    let t = d.path();
    symlink_tree(t);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    // symlinks are not regular files: 4 regular files were considered
    assert_eq!(r.summary.files_scanned, 4);
}

#[test]
fn follow_links_flag_follows_file_and_directory_links() {
    let d = tmp();
    let t = d.path();
    let other = pattern(402, 12);
    write(t, "outside/x", &other);
    write(t, "t/y", &other);
    symlink(t, "../outside", "t/dirlink");
    let data = pattern(403, 13);
    write(t, "elsewhere/f", &data);
    write(t, "t/g", &data);
    symlink(t, "../elsewhere/f", "t/filelink");
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[]));
    for flag in ["-L", "--follow-links"] {
        let out = find_json(t, &[flag, "t"]);
        out.assert_code(0);
        assert_groups(&out, &sets(&[&["t/dirlink/x", "t/y"], &["t/filelink", "t/g"]]));
    }
}

#[test]
fn symlink_root_argument_is_followed() {
    let d = tmp();
    let t = d.path();
    let data = pattern(300, 14);
    write(t, "real/x", &data);
    write(t, "real/y", &data);
    symlink(t, "real", "rootlink");
    let out = find_json(t, &["rootlink"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["rootlink/x", "rootlink/y"]]));
    // also with a trailing slash
    let out = find_json(t, &["rootlink/"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["rootlink/x", "rootlink/y"]]));
}

#[test]
fn symlink_to_a_file_as_root_argument_is_followed() {
    let d = tmp();
    let t = d.path();
    let data = pattern(300, 15);
    write(t, "elsewhere/f", &data);
    write(t, "other/g", &data);
    symlink(t, "elsewhere/f", "flink");
    let out = find_json(t, &["flink", "other"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["flink", "other/g"]]));
}

#[test]
fn dangling_symlinks_are_skipped() {
    let d = tmp();
    let t = d.path();
    let data = pattern(300, 16);
    write(t, "t/a", &data);
    write(t, "t/b", &data);
    symlink(t, "does-not-exist", "t/dangling");
    symlink(t, "../nowhere/at/all", "t/sub/dangling2");
    for args in [&["t"][..], &["-L", "t"][..]] {
        let out = find_json(t, args);
        out.assert_code(0);
        assert_groups(&out, &sets(&[&["t/a", "t/b"]]));
    }
}

#[test]
fn symlink_loops_with_follow_links_terminate() {
    let d = tmp();
    let t = d.path();
    let data = pattern(300, 17);
    write(t, "t/a", &data);
    write(t, "t/d/b", &data);
    symlink(t, "..", "t/d/up"); // t/d/up -> t
    symlink(t, "..", "t/d/e/back"); // t/d/e/back -> t/d
    symlink(t, "../..", "t/d/e/top"); // t/d/e/top -> t
    symlink(t, "self", "t/self"); // ELOOP
    symlink(t, "loop2", "t/loop1");
    symlink(t, "loop1", "t/loop2");
    let mut c = cmd(t);
    c.timeout(std::time::Duration::from_secs(60)).args(["find", "--format", "json", "-L", "t"]);
    let out = run(&mut c);
    let code = out.code();
    assert!(code == 0 || code == 1, "{}", out.dump());
    // every file is reached once: the links only lead back into the chain
    assert_groups(&out, &sets(&[&["t/a", "t/d/b"]]));
    // default mode: not followed, same answer
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/a", "t/d/b"]]));
}

#[test]
fn symlink_alias_of_a_root_does_not_make_a_file_its_own_duplicate() {
    let d = tmp();
    let t = d.path();
    write(t, "a/x", &pattern(300, 18));
    symlink(t, "a", "alias");
    write(t, "c/p1", &pattern(30, 18));
    write(t, "c/p2", &pattern(30, 18));
    let out = find_json(t, &["a", "alias", "c"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["c/p1", "c/p2"]]));
}
