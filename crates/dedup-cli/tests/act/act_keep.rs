//! The choice of the file to keep: rules that contradict each other are a usage error (exit 2,
//! nothing changed) rather than a silent guess, and a rule every member of a group matches still
//! keeps exactly one of them.

use crate::common;

use std::fs;

use common::act::*;
use common::*;

#[test]
fn contradictory_or_repeated_keep_rules_are_refused_and_nothing_changes() {
    let t = tmp();
    let d = t.path();
    write(d, "tree/a", b"same");
    write(d, "tree/deep/b", b"same");
    for rules in [
        &["--keep", "newest", "--keep", "oldest"][..],
        &["--keep", "shallowest,deepest"],
        &["--keep", "first-root,newest,first-root"],
    ] {
        let out = dedup(d, &[&["remove"], rules, &["tree"]].concat());
        out.assert_code(2);
        assert!(stderr(&out).contains("contradict"), "{rules:?}: {}", out.dump());
        assert!(stdout(&out).is_empty(), "{rules:?}: {}", out.dump());
        assert_eq!(fs::read(d.join("tree/a")).unwrap(), b"same");
        assert_eq!(fs::read(d.join("tree/deep/b")).unwrap(), b"same");
    }
    // Rules that work together are accepted.
    let out = dedup(d, &["remove", "-n", "--keep", "newest,deepest,first-root", "tree"]);
    out.assert_code(0);
}

#[test]
fn a_preference_every_copy_matches_still_keeps_one() {
    let t = tmp();
    let d = t.path();
    for name in ["a", "b", "c"] {
        write(d, &format!("tree/{name}.jpg"), b"same picture");
    }
    let out = dedup(d, &["remove", "--prefer", "**/*.jpg", "--keep", "newest", "tree"]);
    out.assert_code(0);
    let left = contents(&d.join("tree"));
    assert_eq!(left.len(), 1, "{left:?}\n{}", out.dump());
}
