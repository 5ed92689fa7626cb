//! `--files-from` and a symlink on a listed path's way: `link/secret` where SRC's `link` is a
//! symlink (to a directory outside SRC) is not in SRC, since no link is followed. It is named
//! (`listed in --files-from, but not in SRC`), nothing outside SRC is read, and it counts as a
//! source part not read: exit 1, and `--delete` deletes nothing.

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;

use common::mirror::*;
use common::*;

#[test]
fn a_listed_path_through_a_symlink_is_named_as_not_in_src_and_stops_deletions() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&t.path().join("outside"), "secret", b"not SRC's");
    write(&s, "keep/a", b"a");
    symlink("../outside", s.join("link")).unwrap();
    write(&d, "keep/stale", b"would go with --delete if all was read");
    let list = t.path().join("list");
    fs::write(&list, "link/secret\nkeep/\n").unwrap();
    for dry in [true, false] {
        let mut args = vec![os(b"--delete"), os(b"--files-from"), list.clone().into()];
        if dry {
            args.push(os(b"-n"));
        }
        args.extend([s.clone().into(), d.clone().into()]);
        let out = sync(&args);
        out.assert_code(1);
        out.assert_message("error", "link: listed in --files-from, but not in SRC");
        assert!(!d.join("link").exists(), "{}", out.dump());
        assert!(d.join("keep/stale").exists(), "nothing deleted\n{}", out.dump());
    }
    assert_eq!(fs::read(d.join("keep/a")).unwrap(), b"a");
}
