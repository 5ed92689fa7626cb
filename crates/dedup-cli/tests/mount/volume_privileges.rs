//! Set-user-ID, set-group-ID and file capabilities after a write, a truncate (also by
//! `O_TRUNC`) and a chown, by a caller with and without CAP_FSETID: a volume leaves what tmpfs
//! leaves. The volume clears the mode bits itself (it takes FUSE_HANDLE_KILLPRIV_V2, which
//! spares a `getxattr` round trip per write), so each case is one it must get right.

use crate::common;
use crate::volume_helpers::{fuse_available, volume_place, Volume};

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use rustix::fs::XattrFlags;

const SETPRIV: &str = "/usr/bin/setpriv";

/// A version-2 `security.capability` value granting CAP_NET_RAW, effective.
fn capability() -> Vec<u8> {
    let words: [u32; 5] = [0x0200_0001, 1 << 13, 0, 0, 0];
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn has_capability(path: &Path) -> bool {
    let mut value = [0u8; 64];
    rustix::fs::getxattr(path, "security.capability", &mut value).is_ok()
}

/// Runs `argv` as root, without CAP_FSETID when `without_fsetid`.
fn run(without_fsetid: bool, argv: &[&str]) {
    let mut command = if without_fsetid {
        let mut c = Command::new(SETPRIV);
        c.args(["--bounding-set=-fsetid", "--"]).args(argv);
        c
    } else {
        let mut c = Command::new(argv[0]);
        c.args(&argv[1..]);
        c
    };
    let status = command.status().unwrap();
    assert!(status.success(), "{argv:?}: {status}");
}

/// What each operation leaves in `dir`: (case, permission bits, capability still there).
fn outcomes(dir: &Path) -> Vec<(String, u32, bool)> {
    let operations: [(&str, &[&str]); 4] = [
        ("write", &["sh", "-c", "printf x >> \"$0\""]),
        ("truncate", &["truncate", "-s", "3"]),
        ("open-trunc", &["sh", "-c", ": > \"$0\""]),
        ("chown", &["chown", "0:0"]),
    ];
    let mut seen = Vec::new();
    for (mode, with_capability) in [(0o6755, false), (0o2745, false), (0o755, true)] {
        for (name, argv) in operations {
            for without_fsetid in [false, true] {
                let case =
                    format!("{mode:o} cap={with_capability} {name} fsetid={}", !without_fsetid);
                let path = dir.join(case.replace([' ', '='], "-"));
                fs::write(&path, b"ab").unwrap();
                fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
                if with_capability {
                    rustix::fs::setxattr(
                        &path,
                        "security.capability",
                        &capability(),
                        XattrFlags::empty(),
                    )
                    .unwrap();
                }
                let path_text = path.to_str().unwrap();
                let mut full: Vec<&str> = argv.to_vec();
                full.push(path_text);
                run(without_fsetid, &full);
                let mode = fs::metadata(&path).unwrap().mode() & 0o7777;
                seen.push((case, mode, has_capability(&path)));
            }
        }
    }
    seen
}

#[test]
fn a_volume_clears_set_ids_and_capabilities_as_tmpfs_does() {
    let test = "a_volume_clears_set_ids_and_capabilities_as_tmpfs_does";
    if !fuse_available(test) {
        return;
    }
    let root = rustix::process::geteuid().is_root();
    let tmpfs = Path::new("/dev/shm");
    let ready = root && Path::new(SETPRIV).exists() && tmpfs.is_dir();
    if !common::require(ready, test, "needs root, setpriv and a tmpfs at /dev/shm") {
        return;
    }
    let reference = tempfile::tempdir_in(tmpfs).unwrap();
    let expected = outcomes(reference.path());
    // The rules themselves, so that the comparison cannot pass on a kernel that kept them all.
    let of = |case: &str| expected.iter().find(|(c, ..)| c == case).map(|(_, m, cap)| (*m, *cap));
    assert_eq!(of("6755 cap=false write fsetid=true"), Some((0o6755, false)));
    assert_eq!(of("6755 cap=false write fsetid=false"), Some((0o755, false)));
    assert_eq!(of("2745 cap=false truncate fsetid=false"), Some((0o2745, false)));
    assert_eq!(of("6755 cap=false chown fsetid=true"), Some((0o755, false)));
    assert_eq!(of("755 cap=true write fsetid=true"), Some((0o755, false)));

    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "privileges", &point, &["--commit-interval", "3600"]);
    fs::create_dir(volume.path("d")).unwrap();
    let got = outcomes(&volume.path("d"));
    let differ: Vec<_> = expected.iter().zip(&got).filter(|(e, g)| e != g).collect();
    assert!(differ.is_empty(), "tmpfs, then the volume:\n{differ:#?}");
    // Still so in the committed tree, as read by a fresh mount.
    volume.unmount_ok();
    let volume = Volume::start(&repo, "privileges", &point, &["--commit-interval", "3600"]);
    for (case, mode, capability) in &got {
        let path = volume.path("d").join(case.replace([' ', '='], "-"));
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, *mode, "{case}");
        assert_eq!(has_capability(&path), *capability, "{case}");
    }
    volume.unmount_ok();
}
