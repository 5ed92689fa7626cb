//! Listing a volume's directories: a directory read while its names are removed (`readdir` and
//! `unlink` in one loop, as `rm`-like tools do) gives every name once and ends empty; after a
//! remount, a listing with attributes (`ls -l`, `tar`, `du`: the kernel's READDIRPLUS) shows
//! each entry as a lookup of it would, for files, hard links, symlinks, directories and odd
//! names alike.

use crate::volume_helpers::{data, fuse_available, volume_place, Volume};

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// A name of about 100 bytes, so that a few dozen fill one buffer of the kernel's.
fn long_name(n: usize) -> String {
    format!("{n:05}-{}", "a-name-long-enough-that-few-fit-in-one-buffer-of-the-kernel-".repeat(2))
}

#[test]
fn a_directory_emptied_while_it_is_read_gives_every_name_once() {
    if !fuse_available("a_directory_emptied_while_it_is_read_gives_every_name_once") {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "listing", &point, &[] as &[&str]);
    let dir = volume.path("many");
    fs::create_dir(&dir).unwrap();
    let made: BTreeSet<String> = (0..600).map(long_name).collect();
    for name in &made {
        fs::write(dir.join(name), b"x").unwrap();
    }
    // One pass of readdir, each name removed as soon as it is read: a listing that moved under
    // the reader would skip the names that slid into the places already read.
    let mut seen = BTreeSet::new();
    for entry in fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(seen.insert(name.clone()), "{name} listed twice");
        fs::remove_file(dir.join(&name)).unwrap();
    }
    let missed: Vec<&String> = made.difference(&seen).collect();
    assert!(
        missed.is_empty(),
        "{} of {} names never listed, e.g. {:?}",
        missed.len(),
        made.len(),
        missed.first()
    );
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "the directory is empty");
    fs::remove_dir(&dir).unwrap();
    // A rewound listing sees what was created since it was opened.
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("before"), b"").unwrap();
    let mut reader = fs::read_dir(&dir).unwrap();
    assert_eq!(reader.next().unwrap().unwrap().file_name(), "before");
    fs::write(dir.join("after"), b"").unwrap();
    let names: BTreeSet<OsString> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["after", "before"].map(OsString::from).into(), "a new listing");
    drop(reader);
    volume.unmount_ok();
}

/// Every entry under `dir` with what `lstat` says of it, through a directory listing.
fn listed(dir: &Path) -> BTreeMap<OsString, (u32, u64, u64, i64, Option<OsString>)> {
    let mut found = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        let target = meta
            .file_type()
            .is_symlink()
            .then(|| fs::read_link(entry.path()).unwrap().into_os_string());
        let size = if meta.is_dir() { 0 } else { meta.len() };
        found.insert(entry.file_name(), (meta.mode(), size, meta.nlink(), meta.mtime(), target));
    }
    found
}

#[test]
fn a_listing_after_a_remount_shows_what_a_lookup_would() {
    if !fuse_available("a_listing_after_a_remount_shows_what_a_lookup_would") {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "listing", &point, &[] as &[&str]);
    let dir = volume.path("d");
    fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    fs::write(dir.join("big"), data(3 << 20, 5)).unwrap();
    fs::write(dir.join("empty"), b"").unwrap();
    fs::write(dir.join(OsStr::from_bytes(b"caf\xe9 \xff")), b"odd name").unwrap();
    fs::write(dir.join("secret"), b"0640").unwrap();
    fs::set_permissions(dir.join("secret"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::hard_link(dir.join("secret"), dir.join("secret-link")).unwrap();
    std::os::unix::fs::symlink("big", dir.join("to-big")).unwrap();
    for n in 0..300 {
        fs::write(dir.join(long_name(n)), n.to_string()).unwrap();
    }
    let before = listed(&dir);
    assert_eq!(before.len(), 307);
    volume.unmount_ok();

    let volume = Volume::start(&repo, "listing", &point, &[] as &[&str]);
    let after = listed(&volume.path("d"));
    assert_eq!(after, before, "the same entries, modes, sizes, links, times and targets");
    let secret = &after[OsStr::new("secret")];
    assert_eq!((secret.0 & 0o7777, secret.2), (0o640, 2), "mode and hard links");
    assert_eq!(after[OsStr::new("big")].1, 3 << 20);
    assert_eq!(fs::read(volume.path("d/to-big")).unwrap(), data(3 << 20, 5));
    volume.unmount_ok();
}
