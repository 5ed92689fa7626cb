//! `--dirs --dry-run` shows exactly what the real run does: a duplicated directory holding
//! entries the steps do not take out (empty files, symlinks) is not shown as removed, and both
//! runs name it and exit 1.

use crate::common;

use std::fs;

use common::act::*;
use common::*;

#[test]
fn a_directory_the_run_cannot_empty_is_not_previewed_as_removed() {
    for action in [&["remove"][..], &["move", "--to", "aside"]] {
        let t = tmp();
        let d = t.path();
        for dir in ["A", "B"] {
            write(d, &format!("{dir}/x"), b"one");
            write(d, &format!("{dir}/sub/y"), b"two");
            write(d, &format!("{dir}/e"), b"");
            symlink(d, "x", &format!("{dir}/l"));
        }
        let dry = dedup(d, &[action, &["-n", "--dirs", "."]].concat());
        let out = dedup(d, &[action, &["--dirs", "."]].concat());
        assert_eq!(stdout(&dry), stdout(&out), "{action:?}: the dry run shows what the run does");
        assert!(!stdout(&out).contains("rmdir"), "{action:?}: {}", out.dump());
        dry.assert_code(1);
        out.assert_code(1);
        dry.assert_message("skipped", "./B");
        assert!(fs::symlink_metadata(d.join("B/l")).is_ok() && d.join("B/e").is_file());
    }
}
