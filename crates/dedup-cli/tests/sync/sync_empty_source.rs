//! The empty-source guard's siblings: a SRC with nothing to mirror, because every entry in it is
//! excluded (a freshly made disk mounted in place of the usual one, its `lost+found` excluded),
//! empties the mirror under `--delete` as surely as an empty one; it is refused before any
//! change, the dry run too, unless `--allow-empty-source` says it is meant.

use crate::common;

use std::fs;

use common::mirror::*;
use common::store::{assert_looks_equal, look};
use common::*;

#[test]
fn a_delete_from_a_source_whose_every_entry_is_excluded_is_refused() {
    let t = tmp();
    let (s, d) = (t.path().join("mnt"), t.path().join("mirror"));
    write(&s, "lost+found/x", b"");
    write(&d, "photos/2024/a.jpg", b"a");
    write(&d, "notes", b"n");
    let before = look(&d);
    for dry in [true, false] {
        let mut args = vec![os(b"--delete"), os(b"--exclude"), os(b"/lost+found")];
        if dry {
            args.push(os(b"-n"));
        }
        args.extend([s.clone().into(), d.clone().into()]);
        let out = sync(&args);
        out.assert_code(2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("mnt has nothing to mirror") && err.contains("4 entries"),
            "{}",
            out.dump()
        );
        assert_looks_equal(&before, &look(&d), "a source with nothing to mirror deleted nothing");
    }
    // A DST holding only what the rules keep has nothing to lose: no refusal.
    let (s2, d2) = (t.path().join("mnt2"), t.path().join("mirror2"));
    write(&s2, "lost+found/x", b"");
    write(&d2, "lost+found/kept", b"k");
    let excluded = [os(b"--delete"), os(b"--exclude"), os(b"/lost+found")];
    let out = sync(&[&excluded[..], &[s2.into(), d2.clone().into()]].concat());
    out.assert_code(0);
    assert!(d2.join("lost+found/kept").exists(), "{}", out.dump());
    // Meant, it is mirrored; the excluded entries of DST stay.
    write(&d, "lost+found/kept", b"k");
    let meant = [os(b"--allow-empty-source"), s.clone().into(), d.clone().into()];
    let out = sync(&[&excluded[..], &meant[..]].concat());
    out.assert_code(0);
    let left: Vec<_> = fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [os(b"lost+found")], "{}", out.dump());
}
