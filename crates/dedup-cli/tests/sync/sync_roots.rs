//! SRC and DST: neither may lie inside the other, whatever path reaches it (a bind mount, a
//! symlink), refused with exit 2 before anything changes; a DST whose parents are missing is
//! created with them.

use crate::common;

use std::fs;

use common::mirror::*;
use common::*;

/// The case: `data/` bind-mounted at `view/`. Mirroring `data/photos` into `view` would
/// rename the photos out of SRC and delete the rest of `data`; mirroring `data` into
/// `view/photos/mirror` would mirror a tree into itself. Both are refused, nothing changed.
#[test]
fn a_bind_mount_does_not_hide_that_one_tree_lies_inside_the_other() {
    let test = "a_bind_mount_does_not_hide_that_one_tree_lies_inside_the_other";
    if !require(is_root(), test, "mount --bind needs root") {
        return;
    }
    let t = tmp();
    let (data, view) = (t.path().join("data"), t.path().join("view"));
    write(&data, "photos/p1.jpg", &pattern(30_000, 1));
    write(&data, "photos/p2.jpg", &pattern(40_000, 2));
    write(&data, "doc1", b"a document");
    fs::create_dir(&view).unwrap();
    let Some(_mounted) = Mounted::new(&[os(b"--bind"), data.clone().into()], &view) else {
        require(false, test, "mount --bind failed");
        return;
    };
    let before = describe(&data);
    for args in [
        vec![os(b"--delete"), data.join("photos").into(), view.clone().into()],
        vec![os(b"--delete"), view.join("photos").into(), data.clone().into()],
        vec![data.clone().into(), view.join("photos/mirror").into()],
        vec![view.clone().into(), data.join("photos").into()],
        vec![data.clone().into(), view.clone().into()],
    ] {
        let out = sync(&args);
        out.assert_code(2);
        assert!(String::from_utf8_lossy(&out.stderr).contains("overlap"), "{}", out.dump());
        assert_eq!(describe(&data), before, "{args:?} changed the tree\n{}", out.dump());
    }
    // A symlink is seen through too.
    std::os::unix::fs::symlink(&data, t.path().join("alias")).unwrap();
    let out = sync(&[data.clone(), t.path().join("alias/photos/mirror")]);
    out.assert_code(2);
    assert_eq!(describe(&data), before);
}

#[test]
fn a_destination_whose_parents_are_missing_is_created_with_them() {
    let t = tmp();
    let s = t.path().join("src");
    write(&s, "a/b", b"content");
    let d = t.path().join("one/two/three/dst");
    let dry = sync(&[os(b"-n"), s.clone().into(), d.clone().into()]);
    dry.assert_code(0);
    assert!(!t.path().join("one").exists(), "a dry run makes nothing");
    let real = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    real.assert_code(0);
    assert_same_run(&dry, &real);
    assert_mirror(&s, &d);
    // Inside SRC, even where the parents are missing.
    let inside = s.join("new/deeper/dst");
    sync(&[s.clone(), inside]).assert_code(2);
    assert!(!s.join("new").exists());
}
