//! `link` and `symlink` make a duplicate share the kept file's inode, so its owner, group and
//! mode become the kept file's: a private file linked to a world-writable copy could then be
//! changed by anyone. Such duplicates are skipped unless `--any-owner`. `remove` skips a
//! duplicate of another user (its owner would be left without a copy of their own); `reflink`
//! keeps every file's inode and is not concerned.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::act::*;
use common::*;

fn pair(d: &Path) {
    write(d, "tree/a-shared", b"same bytes");
    write(d, "tree/b-private", b"same bytes");
    chmod(&d.join("tree/a-shared"), 0o666);
    chmod(&d.join("tree/b-private"), 0o600);
    if is_root() {
        let chown = std::process::Command::new("chown")
            .arg("nobody")
            .arg(d.join("tree/a-shared"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(chown, "chown nobody failed");
    }
}

#[test]
fn link_and_symlink_skip_a_duplicate_with_another_owner_or_mode() {
    for action in ["link", "symlink"] {
        let t = tmp();
        let d = t.path();
        pair(d);
        let private = ident(&d.join("tree/b-private"));
        let dry = dedup(d, &[action, "-n", "tree"]);
        let out = dedup(d, &[action, "tree"]);
        out.assert_code(1);
        out.assert_message("skipped", "tree/b-private");
        assert!(stderr(&out).contains("--any-owner"), "{}", out.dump());
        assert_eq!(stdout(&dry), stdout(&out));
        assert!(stdout(&out).is_empty(), "{}", out.dump());
        assert_eq!(ident(&d.join("tree/b-private")), private, "{action}");
        let mode = fs::symlink_metadata(d.join("tree/b-private")).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o600);
        // Asked for, it is done.
        let out = dedup(d, &[action, "--any-owner", "tree"]);
        out.assert_code(0);
        assert_eq!(stdout(&out).lines().count(), 1, "{}", out.dump());
    }
}

#[test]
fn duplicates_with_equal_owner_and_mode_are_linked() {
    let t = tmp();
    let d = t.path();
    pair(d);
    write(d, "tree/c-private", b"same bytes");
    chmod(&d.join("tree/c-private"), 0o600);
    // b and c have the same mode: linked; a is left alone.
    let out = dedup(d, &["link", "--prefer", "**/b-*", "tree"]);
    out.assert_code(1);
    assert_eq!(ident(&d.join("tree/b-private")).1, ident(&d.join("tree/c-private")).1);
}

#[test]
fn remove_skips_a_duplicate_of_another_user() {
    let test = "remove_skips_a_duplicate_of_another_user";
    if !require(is_root(), test, "giving a file to another user needs root") {
        return;
    }
    let t = tmp();
    let d = t.path();
    pair(d);
    // Kept: b-private (root's); a-shared is nobody's, and nobody's only copy.
    let out = dedup(d, &["remove", "--prefer", "**/b-*", "tree"]);
    out.assert_code(1);
    out.assert_message("skipped", "tree/a-shared");
    assert!(stderr(&out).contains("another user"), "{}", out.dump());
    assert_eq!(fs::read(d.join("tree/a-shared")).unwrap(), b"same bytes");
    // Asked for, the other user's duplicate goes too.
    let out = dedup(d, &["remove", "--any-owner", "--prefer", "**/b-*", "tree"]);
    out.assert_code(0);
    assert_eq!(contents(&d.join("tree")).len(), 1, "{}", out.dump());
}
