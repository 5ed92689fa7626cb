//! A DST that is a symlink: to a directory, it is followed (the user named it, as rsync and cp
//! follow it); to nothing (or a directory on DST's way that is one), the run is refused before
//! anything is made, with a message saying so rather than that DST exists.

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;

use common::mirror::*;
use common::*;

#[test]
fn a_dangling_symlink_as_dst_or_on_its_way_is_refused_by_name() {
    let t = tmp();
    let s = t.path().join("src");
    write(&s, "a", b"a");
    let dangling = t.path().join("mirror");
    symlink("gone/away", &dangling).unwrap();
    for dst in [dangling.clone(), dangling.join("sub")] {
        for dry in [false, true] {
            let mut args = vec![s.clone().into_os_string(), dst.clone().into_os_string()];
            if dry {
                args.insert(0, os(b"-n"));
            }
            let out = sync(&args);
            out.assert_code(2);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("mirror: a symlink to \"gone/away\""), "{}", out.dump());
            assert!(!t.path().join("gone").exists(), "nothing made: {}", out.dump());
        }
    }
    assert_eq!(fs::read_link(&dangling).unwrap(), std::path::Path::new("gone/away"));
    // A symlink to a directory is followed.
    fs::create_dir_all(t.path().join("gone/away")).unwrap();
    sync(&[s.clone(), dangling.clone()]).assert_code(0);
    assert_mirror(&s, &t.path().join("gone/away"));
}
