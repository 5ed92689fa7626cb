//! A disk that did not mount below SRC: `/etc/fstab` names `SRC/data` as a mount point, nothing
//! is mounted there, and `--delete` would empty the mirror's `data`. The run names it, deletes
//! nothing and exits 1; once the disk is mounted the run mirrors it; `--allow-empty-source`
//! mirrors the empty directory. Each run sees the test's own `/etc/fstab` ([`with_fstab`]).

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::path::Path;

use common::*;

/// `dedup sync ARGS` with `fstab` for `/etc/fstab` and a disk mounted at `disk`, if given.
fn sync_in_namespace(fstab: &Path, disk: Option<&Path>, args: &[OsString]) -> Out {
    run(with_fstab(fstab, disk).arg(BIN).arg("sync").args(args))
}

#[test]
fn delete_keeps_the_mirror_of_a_mount_point_with_nothing_mounted_on_it() {
    if !require(is_root(), "sync_unmounted", "needs root for a private mount namespace") {
        return;
    }
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("mirror"));
    fs::create_dir_all(s.join("data")).unwrap();
    write(&s, "home/notes", b"new notes");
    write(&d, "data/photo.jpg", b"only copy");
    write(&d, "home/gone", b"deleted from SRC");
    let fstab = t.path().join("fstab");
    let point = s.join("data");
    // A CD drive's mount point, never mounted and with nothing in the mirror, holds nothing back.
    fs::create_dir_all(s.join("cdrom")).unwrap();
    let table = format!(
        "# test\nUUID=0 / ext4 defaults 0 1\nLABEL=photos {} xfs noauto 0 2\n\
         /dev/sr0 {} udf,iso9660 user,noauto 0 0\n",
        point.display(),
        s.join("cdrom").display()
    );
    fs::write(&fstab, table).unwrap();
    let args = [os(b"--delete"), s.clone().into(), d.clone().into()];

    for dry in [true, false] {
        let mut with = args.to_vec();
        if dry {
            with.insert(0, os(b"-n"));
        }
        let out = sync_in_namespace(&fstab, None, &with);
        out.assert_code(1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{}: a mount point in /etc/fstab with nothing mounted",
                point.display()
            )),
            "{}",
            out.dump()
        );
        assert_eq!(fs::read(d.join("data/photo.jpg")).unwrap(), b"only copy", "{}", out.dump());
        assert!(d.join("home/gone").exists(), "no deletion anywhere: {}", out.dump());
        assert!(!err.contains("cdrom"), "{err}");
    }
    // The rest was mirrored.
    assert_eq!(fs::read(d.join("home/notes")).unwrap(), b"new notes");

    // Mounted, it is mirrored as usual, deletions included.
    let out = sync_in_namespace(&fstab, Some(&point), &args);
    out.assert_code(0);
    assert_eq!(fs::read(d.join("data/photo.jpg")).unwrap(), b"p\n", "{}", out.dump());
    assert!(!d.join("home/gone").exists(), "{}", out.dump());

    // Meant: the empty directory is mirrored.
    let meant = [&[os(b"--allow-empty-source")][..], &args[..]].concat();
    let out = sync_in_namespace(&fstab, None, &meant);
    out.assert_code(0);
    assert!(!d.join("data/photo.jpg").exists(), "{}", out.dump());
    assert!(d.join("data").is_dir(), "{}", out.dump());
}
