//! Set-user-ID and set-group-ID bits when the owner cannot be kept: a user mirroring another's
//! set-ID program gets a copy of their own, and the bit would make it run with the mirroring
//! user's rights for whoever may execute it. Dropped as `cp -p` drops them (rsync keeps them),
//! kept where the copy keeps the owner or group they belong to, and on directories.

use crate::common;

use std::fs;
use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};

use common::mirror::*;
use common::*;

const NOBODY: u32 = 65534;

#[test]
fn set_id_bits_are_dropped_where_an_unprivileged_copy_cannot_keep_their_owner() {
    let test = "set_id_bits_are_dropped_where_an_unprivileged_copy_cannot_keep_their_owner";
    if !require(is_root(), test, "needs root (to run as nobody via setpriv)") {
        return;
    }
    let t = tmp();
    chmod(t.path(), 0o755);
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let files = [
        ("roots-suid", (0, 0), 0o4755, 0o755),
        ("roots-sgid", (NOBODY, 0), 0o2755, 0o755),
        ("nobodys-suid-sgid", (NOBODY, NOBODY), 0o6755, 0o6755),
    ];
    for (name, (uid, gid), mode, _) in files {
        write(&s, name, name.as_bytes());
        chown(s.join(name), Some(uid), Some(gid)).unwrap();
        chmod(&s.join(name), mode);
    }
    fs::create_dir(s.join("shared")).unwrap();
    chmod(&s.join("shared"), 0o2775);
    fs::create_dir(&d).unwrap();
    give_to_nobody(&d);
    let first = sync_as_nobody(&[s.clone(), d.clone()]);
    first.assert_code(0);
    for (name, _, _, kept) in files {
        let mode = fs::metadata(d.join(name)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, kept, "{name}: {mode:o}\n{}", first.dump());
        assert_eq!(fs::metadata(d.join(name)).unwrap().uid(), NOBODY);
    }
    let dir_mode = fs::metadata(d.join("shared")).unwrap().permissions().mode() & 0o7777;
    assert_eq!(dir_mode, 0o2775, "a directory keeps its set-group-ID bit");
    // The copies without the bits are up to date: a rerun changes nothing.
    let again = sync_as_nobody(&[os(b"-i"), s.into(), d.into()]);
    again.assert_code(0);
    assert!(changes(&again).is_empty(), "{}", again.dump());
}
