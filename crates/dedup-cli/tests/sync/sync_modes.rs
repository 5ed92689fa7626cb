//! Permission bits of new copies whatever the umask: a file created with the bits it will keep
//! is not asked for its status afterwards (its bits are those asked for less the umask), so the
//! bits a umask takes away must be given back.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::mirror::*;
use common::*;

/// `dedup sync SRC DST` run by `sh` after `umask MASK`.
fn sync_under_umask(mask: &str, src: &Path, dst: &Path) -> Out {
    let mut c = assert_cmd::Command::new("sh");
    c.args(["-c", &format!("umask {mask}; exec \"$0\" sync -q \"$1\" \"$2\""), BIN])
        .arg(src)
        .arg(dst)
        .timeout(std::time::Duration::from_secs(120));
    run(&mut c)
}

#[test]
fn new_copies_get_the_sources_bits_whatever_the_umask() {
    let t = tmp();
    let s = t.path().join("src");
    let modes = [0o777, 0o666, 0o640, 0o604, 0o600, 0o444, 0o400];
    for (i, mode) in modes.iter().enumerate() {
        let p = write(&s, &format!("sub/f{i}"), &pattern(1_000 + i, 7));
        fs::set_permissions(p, fs::Permissions::from_mode(*mode)).unwrap();
    }
    fs::set_permissions(s.join("sub"), fs::Permissions::from_mode(0o775)).unwrap();
    for mask in ["077", "000", "022", "027"] {
        let d = t.path().join(format!("dst-{mask}"));
        sync_under_umask(mask, &s, &d).assert_code(0);
        assert_mirror(&s, &d);
        for (i, mode) in modes.iter().enumerate() {
            let got = fs::metadata(d.join(format!("sub/f{i}"))).unwrap().permissions().mode();
            assert_eq!(got & 0o7777, *mode, "umask {mask}, f{i}");
        }
    }
}

/// A set-group-ID directory in DST hands its group to every file made in it: a copy of a file
/// of group root, made there, must still end up of group root, or the directory's group could
/// read what the source kept from it.
#[test]
fn a_copy_made_in_a_set_group_id_directory_keeps_the_sources_group() {
    use std::os::unix::fs::MetadataExt;
    if !require(is_root(), "a_copy_made_in_a_set_group_id_directory…", "needs root") {
        return;
    }
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let secret = write(&s, "shared/secret", b"root and its group only");
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::chown(&secret, Some(0), Some(0)).unwrap();
    // DST's directory already there, of group nogroup (65534), set-group-ID.
    fs::create_dir_all(d.join("shared")).unwrap();
    std::os::unix::fs::chown(d.join("shared"), Some(0), Some(65534)).unwrap();
    fs::set_permissions(d.join("shared"), fs::Permissions::from_mode(0o2775)).unwrap();
    std::os::unix::fs::chown(s.join("shared"), Some(0), Some(65534)).unwrap();
    fs::set_permissions(s.join("shared"), fs::Permissions::from_mode(0o2775)).unwrap();
    sync_under_umask("022", &s, &d).assert_code(0);
    let copy = fs::metadata(d.join("shared/secret")).unwrap();
    assert_eq!((copy.uid(), copy.gid()), (0, 0), "the copy's owner and group");
    assert_eq!(copy.mode() & 0o7777, 0o640);
    assert_mirror(&s, &d);
}
