//! Extended attributes: a file capability survives a change of owner (the kernel drops it on
//! `chown`), and attributes someone else took from or changed on DST are noticed and set again
//! (the entry's change time moved past its directory's).

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::mirror::*;
use common::*;

fn xattr(p: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let n = rustix::fs::lgetxattr(p, name, &mut buf[..]).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// A change to a DST entry is noticed by its change time being later than its directory's,
/// which the run set last: one made within the same clock tick (a few ms, on a file system that
/// stamps by the coarse clock) cannot be told apart, so the tests change DST after that tick.
fn past_the_runs_tick() {
    std::thread::sleep(std::time::Duration::from_millis(30));
}

fn setcap(caps: &str, p: &Path) -> bool {
    Command::new("setcap").arg(caps).arg(p).status().is_ok_and(|s| s.success())
}

#[test]
fn a_file_capability_survives_a_change_of_owner() {
    let test = "a_file_capability_survives_a_change_of_owner";
    if !require(is_root(), test, "setting owners and capabilities needs root") {
        return;
    }
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "prog", &pattern(5_000, 1));
    std::os::unix::fs::chown(s.join("prog"), Some(1000), Some(1000)).unwrap();
    if !require(setcap("cap_net_raw+ep", &s.join("prog")), test, "setcap failed (no libcap2-bin?)")
    {
        return;
    }
    let cap = xattr(&s.join("prog"), "security.capability").expect("capability set");
    sync(&[s.clone(), d.clone()]).assert_code(0);
    assert_eq!(xattr(&d.join("prog"), "security.capability").as_ref(), Some(&cap));
    // A change of owner alone: chown drops the capability, which is then given again; the
    // mirror must end with both.
    std::os::unix::fs::chown(s.join("prog"), Some(2000), Some(2000)).unwrap();
    assert!(setcap("cap_net_raw+ep", &s.join("prog")));
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(changes(&out), ["update prog"], "{}", out.dump());
    assert_eq!(
        xattr(&d.join("prog"), "security.capability").as_ref(),
        Some(&cap),
        "{}",
        out.dump()
    );
    assert_mirror(&s, &d);
    // Taken from DST by someone else: noticed, and set again.
    past_the_runs_tick();
    assert!(setcap("-r", &d.join("prog")));
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(changes(&out), ["update prog"], "{}", out.dump());
    assert_eq!(xattr(&d.join("prog"), "security.capability").as_ref(), Some(&cap));
    // And then nothing is left to do.
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    assert!(changes(&out).is_empty(), "{}", out.dump());
}

#[test]
fn attributes_taken_from_or_changed_in_dst_are_noticed_and_set_again() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", &pattern(3_000, 2));
    write(&s, "sub/g", &pattern(4_000, 3));
    set_xattr(&s.join("f"), "user.tag", "kept");
    set_xattr(&s.join("sub/g"), "user.tag", "kept too");
    sync(&[s.clone(), d.clone()]).assert_code(0);
    assert_mirror(&s, &d);
    past_the_runs_tick();
    rustix::fs::lremovexattr(d.join("f"), "user.tag").unwrap();
    set_xattr(&d.join("sub/g"), "user.tag", "changed by someone");
    set_xattr(&d.join("sub/g"), "user.extra", "added by someone");
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(changes(&out), ["update f", "update sub/g"], "{}", out.dump());
    assert_mirror(&s, &d);
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    assert!(changes(&out).is_empty(), "{}", out.dump());
    fs::remove_dir_all(&d).unwrap();
}

/// A POSIX ACL in the kernel's extended-attribute form: (tag, permissions, id) entries.
fn posix_acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
    let mut acl = 2u32.to_le_bytes().to_vec();
    for &(tag, perm, id) in entries {
        acl.extend(tag.to_le_bytes());
        acl.extend(perm.to_le_bytes());
        acl.extend(id.to_le_bytes());
    }
    acl
}

fn xattr_names(p: &Path) -> Vec<String> {
    let mut buf = vec![0u8; 4096];
    let n = rustix::fs::llistxattr(p, &mut buf[..]).unwrap();
    buf[..n]
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect()
}

#[test]
fn a_default_acl_in_dst_gives_the_mirror_no_acl_the_source_lacks() {
    let test = "a_default_acl_in_dst_gives_the_mirror_no_acl_the_source_lacks";
    if !require(is_root(), test, "removing system attributes needs root") {
        return;
    }
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "f", &pattern(3_000, 4));
    write(&s, "sub/g", &pattern(2_000, 5));
    fs::set_permissions(s.join("f"), std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let fifo = s.join("sub/pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    // DST's default ACL lets the user nobody in: every entry made in it would inherit an access
    // ACL granting nobody what the group may do, which the source never granted.
    fs::create_dir(&d).unwrap();
    let acl = posix_acl(&[
        (1, 7, u32::MAX),
        (2, 7, 65534),
        (4, 5, u32::MAX),
        (0x10, 7, u32::MAX),
        (0x20, 5, u32::MAX),
    ]);
    let flags = rustix::fs::XattrFlags::empty();
    if !require(
        rustix::fs::lsetxattr(&d, "system.posix_acl_default", &acl, flags).is_ok(),
        test,
        "the temporary directory's file system takes no ACLs",
    ) {
        return;
    }
    sync(&[s.clone(), d.clone()]).assert_code(0);
    assert_mirror(&s, &d);
    for rel in ["", "f", "sub", "sub/g", "sub/pipe"] {
        assert_eq!(xattr_names(&d.join(rel)), Vec::<String>::new(), "{rel}");
    }
}
