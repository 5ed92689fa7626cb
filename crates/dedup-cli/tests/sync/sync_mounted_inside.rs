//! One tree mounted inside the other, below its root rather than above it: SRC bind-mounted at
//! `DST/mnt` (where `--delete` would delete SRC's own files through the mount, as SRC has no
//! `mnt`) or DST bind-mounted inside SRC (where the mirror would be fed into itself). The walk
//! sees every directory's identity, so either is found before anything changes: refused as an
//! overlap (exit 2), the dry run too, nothing changed in either tree.

use crate::common;

use common::mirror::*;
use common::*;

#[test]
fn a_tree_mounted_below_the_other_root_is_refused_before_anything_changes() {
    let test = "a_tree_mounted_below_the_other_root_is_refused_before_anything_changes";
    if !require(is_root(), test, "mount --bind needs root") {
        return;
    }
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "precious", b"the only copy");
    write(&s, "dir/inner", b"inner");
    write(&d, "mnt/.keep", b"");
    write(&d, "old", b"old");
    let Some(_src_in_dst) = Mounted::new(&[os(b"--bind"), s.clone().into()], &d.join("mnt")) else {
        require(false, test, "mount --bind failed");
        return;
    };
    let (src_before, dst_before) = (describe(&s), describe(&d));
    for dry in [true, false] {
        let mut args = vec![os(b"--delete"), s.clone().into(), d.clone().into()];
        if dry {
            args.insert(0, os(b"-n"));
        }
        let out = sync(&args);
        out.assert_code(2);
        out.assert_message("error", "overlap");
        assert!(String::from_utf8_lossy(&out.stderr).contains("dst/mnt"), "{}", out.dump());
        assert_eq!(describe(&s), src_before, "SRC changed\n{}", out.dump());
        assert_eq!(describe(&d), dst_before, "DST changed\n{}", out.dump());
    }
    drop(_src_in_dst);
    // DST inside SRC the same way.
    write(&s, "mnt/.keep", b"");
    let Some(_dst_in_src) = Mounted::new(&[os(b"--bind"), d.clone().into()], &s.join("mnt")) else {
        require(false, test, "mount --bind failed");
        return;
    };
    let (src_before, dst_before) = (describe(&s), describe(&d));
    let out = sync(&[s.clone(), d.clone()]);
    out.assert_code(2);
    out.assert_message("error", "overlap");
    assert_eq!(describe(&s), src_before, "SRC changed\n{}", out.dump());
    assert_eq!(describe(&d), dst_before, "DST changed\n{}", out.dump());
}
