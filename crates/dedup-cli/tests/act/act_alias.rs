//! The same file seen twice: through an overlayfs mount (another device, so it looks like a
//! second copy), a bind mount, a symlinked directory, `.` and an absolute path, hard links. An
//! action must never take the only copy of the bytes away.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::act::*;
use common::*;

/// An overlay mount of `lower` at `merged`, unmounted when dropped.
struct Overlay {
    merged: PathBuf,
}

impl Overlay {
    fn new(d: &Path, test: &str) -> Option<Overlay> {
        if !require(is_root(), test, "mounting an overlay needs root") {
            return None;
        }
        for dir in ["lower", "upper", "work", "merged"] {
            mkdir(d, dir);
        }
        let options = format!(
            "lowerdir={},upperdir={},workdir={}",
            d.join("lower").display(),
            d.join("upper").display(),
            d.join("work").display()
        );
        let merged = d.join("merged");
        let ok = Command::new("mount")
            .args(["-t", "overlay", "overlay", "-o", &options])
            .arg(&merged)
            .status()
            .is_ok_and(|s| s.success());
        require(ok, test, "mount -t overlay failed").then_some(Overlay { merged })
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.merged).status();
    }
}

#[test]
fn a_file_kept_on_an_overlay_never_costs_the_lower_file_it_shows() {
    let t = tmp();
    let d = t.path();
    write(d, "lower/only-copy", b"the only copy of these bytes");
    let Some(_overlay) =
        Overlay::new(d, "a_file_kept_on_an_overlay_never_costs_the_lower_file_it_shows")
    else {
        return;
    };
    // merged/only-copy is lower/only-copy seen through the overlay: another device number.
    for action in [&["remove"][..], &["symlink"]] {
        let dry = dedup(d, &[action, &["-n", "merged", "lower"]].concat());
        let out = dedup(d, &[action, &["merged", "lower"]].concat());
        out.assert_code(1);
        out.assert_message("skipped", "lower/only-copy");
        assert!(stderr(&out).contains("stacking file system"), "{}", out.dump());
        assert_eq!(stdout(&dry), stdout(&out), "the dry run shows what the run does");
        assert!(fs::symlink_metadata(d.join("lower/only-copy")).unwrap().is_file());
        assert_eq!(fs::read(d.join("merged/only-copy")).unwrap(), b"the only copy of these bytes");
    }
    // Keeping the lower file and removing its overlay view: skipped too (an upper file would go).
    let out = dedup(d, &["remove", "lower", "merged"]);
    out.assert_code(1);
    assert_eq!(fs::read(d.join("lower/only-copy")).unwrap(), b"the only copy of these bytes");
}

#[test]
fn an_upper_file_kept_is_never_removed_through_its_overlay_view() {
    let t = tmp();
    let d = t.path();
    let test = "an_upper_file_kept_is_never_removed_through_its_overlay_view";
    mkdir(d, "upper");
    write(d, "upper/only-copy", b"written through the overlay");
    let Some(_overlay) = Overlay::new(d, test) else {
        return;
    };
    // merged/only-copy is upper/only-copy: removing it through the overlay removes the upper file.
    for action in [&["remove"][..], &["symlink"]] {
        let out = dedup(d, &[action, &["upper", "merged"]].concat());
        out.assert_code(1);
        out.assert_message("skipped", "merged/only-copy");
        assert_eq!(fs::read(d.join("upper/only-copy")).unwrap(), b"written through the overlay");
        assert!(fs::symlink_metadata(d.join("upper/only-copy")).unwrap().is_file());
    }
}

#[test]
fn the_same_file_named_twice_is_never_its_own_duplicate() {
    let t = tmp();
    let d = t.path();
    write(d, "tree/sub/f", b"one file, many names");
    hardlink(d, "tree/sub/f", "tree/sub/g");
    symlink(d, "tree", "alias");
    let abs = d.join("tree").to_string_lossy().into_owned();
    for action in [&["remove"][..], &["link"], &["symlink"], &["move", "--to", "aside"]] {
        for roots in [
            &["tree", "tree"][..],
            &[".", &abs],
            &["tree", "alias"],
            &["tree/sub", "tree"],
            &["-H", "tree"],
        ] {
            let out = dedup(d, &[action, roots].concat());
            out.assert_code(0);
            assert!(stdout(&out).is_empty(), "{action:?} {roots:?}: {}", out.dump());
            assert_eq!(fs::read(d.join("tree/sub/f")).unwrap(), b"one file, many names");
            assert_eq!(fs::read(d.join("tree/sub/g")).unwrap(), b"one file, many names");
        }
    }
    if !require(is_root(), "the_same_file_named_twice_is_never_its_own_duplicate", "bind mount") {
        return;
    }
    mkdir(d, "bound");
    let bound = Command::new("mount")
        .arg("--bind")
        .arg(d.join("tree"))
        .arg(d.join("bound"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(bound, "mount --bind failed");
    let out = dedup(d, &["remove", "tree", "bound"]);
    let _ = Command::new("umount").arg(d.join("bound")).status();
    out.assert_code(0);
    assert!(stdout(&out).is_empty(), "{}", out.dump());
    assert_eq!(fs::read(d.join("tree/sub/f")).unwrap(), b"one file, many names");
}
