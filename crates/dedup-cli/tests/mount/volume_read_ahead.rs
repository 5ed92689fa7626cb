//! The chunks a volume opens ahead of a reader going in order never stand in for the file: a
//! write to a later part of the file while it is being read, a truncate under the reader and a
//! hole made ahead of it all read back as the file now is; a pack cut short under a stored file
//! reads as EIO naming the pack, and the mount goes on.

use crate::common;
use crate::volume_helpers::{data, fuse_available, volume_place, Volume};

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use common::store::repo_names;

const MIB: usize = 1 << 20;

/// Opens `path` with O_DIRECT: every read goes to the mount, past the page cache.
fn open_direct(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(path)
        .unwrap()
}

/// Reads on in order from `*at` in requests of 128 KiB until `until` or the end of the file,
/// checking each against `model`; leaves `*at` where it stopped.
fn read_on(file: &File, at: &mut usize, until: usize, model: &[u8], what: &str) {
    let mut buf = vec![0; 128 << 10];
    while *at < until {
        let n = file.read_at(&mut buf, *at as u64).unwrap();
        let end = (*at + n).min(model.len());
        assert_eq!(n, end - *at, "{what}: a read at {at} gave {n} bytes, the file has {end}");
        if n == 0 {
            return;
        }
        assert!(buf[..n] == model[*at..end], "{what}: bytes {at}..{end} differ");
        *at = end;
    }
}

#[test]
fn reads_in_order_see_writes_truncates_and_holes_made_ahead_of_them() {
    let test = "reads_in_order_see_writes_truncates_and_holes_made_ahead_of_them";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let mut model = data(12 * MIB, 51);
    let volume = Volume::start(&repo, "a", &point, &["--commit-interval", "3600"]);
    fs::write(volume.path("big"), &model).unwrap();
    volume.unmount_ok();

    // A fresh mount: every chunk comes from its pack, opened ahead of the reader.
    let volume = Volume::start(&repo, "a", &point, &["--commit-interval", "3600"]);
    let path = volume.path("big");
    let reader = open_direct(&path);
    let writer = OpenOptions::new().write(true).open(&path).unwrap();
    let mut at = 0;
    read_on(&reader, &mut at, 2 * MIB, &model, "the start");

    // New bytes where the read-ahead has opened the stored chunks, across a chunk boundary or two.
    let new = data(300_000, 52);
    let from = 5 * MIB + 1000;
    writer.write_all_at(&new, from as u64).unwrap();
    writer.sync_all().unwrap();
    model[from..from + new.len()].copy_from_slice(&new);
    read_on(&reader, &mut at, 7 * MIB, &model, "after a write ahead of the reader");

    // Cut short ahead of the reader: it comes to the new end, not to the opened chunks past it.
    let cut = 9 * MIB + 123;
    writer.set_len(cut as u64).unwrap();
    model.truncate(cut);
    read_on(&reader, &mut at, usize::MAX, &model, "after a truncate");
    assert_eq!(at, cut, "the reader stops at the new end");

    // Grown again with a hole, and bytes after it: the hole reads as zeros, not as the chunks
    // that were there before the truncate.
    let tail = data(70_000, 53);
    let hole_end = 11 * MIB + 5;
    writer.write_all_at(&tail, hole_end as u64).unwrap();
    writer.sync_all().unwrap();
    model.resize(hole_end, 0);
    model.extend_from_slice(&tail);
    let mut at = 8 * MIB;
    read_on(&reader, &mut at, usize::MAX, &model, "across the hole");
    assert_eq!(at, model.len());

    let mut at = 0;
    read_on(&open_direct(&path), &mut at, usize::MAX, &model, "a new reader");
    drop((reader, writer));
    volume.unmount_ok();

    // What was committed at unmount reads the same from the packs alone.
    let volume = Volume::start(&repo, "a", &point, &["--commit-interval", "3600"]);
    let mut at = 0;
    read_on(&open_direct(&volume.path("big")), &mut at, usize::MAX, &model, "after a remount");
    assert_eq!(at, model.len());
    volume.unmount_ok();
}

#[test]
fn a_pack_cut_short_reads_as_an_error_naming_it_and_the_volume_goes_on() {
    let test = "a_pack_cut_short_reads_as_an_error_naming_it_and_the_volume_goes_on";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "c", &point, &["--commit-interval", "3600"]);
    fs::write(volume.path("big"), data(8 * MIB, 54)).unwrap();
    volume.unmount_ok();
    // In a pack of its own: a session's packs hold only what it stored.
    let volume = Volume::start(&repo, "c", &point, &["--commit-interval", "3600"]);
    fs::write(volume.path("small"), b"kept apart").unwrap();
    volume.unmount_ok();
    // Packs of the test repository are 1 MiB: the largest holds chunks of the large file only.
    let largest = repo_names(&repo, "data")
        .into_iter()
        .max_by_key(|name| fs::metadata(repo.join(name)).unwrap().len())
        .unwrap();
    let pack = fs::OpenOptions::new().write(true).open(repo.join(&largest)).unwrap();
    pack.set_len(pack.metadata().unwrap().len() / 3).unwrap();
    drop(pack);

    let volume = Volume::start(&repo, "c", &point, &["--commit-interval", "3600"]);
    let file = open_direct(&volume.path("big"));
    let mut buf = vec![0; 128 << 10];
    let mut at = 0u64;
    let err = loop {
        match file.read_at(&mut buf, at) {
            Ok(0) => panic!("the whole file read back from a pack cut short"),
            Ok(n) => at += n as u64,
            Err(err) => break err,
        }
    };
    assert_eq!(err.raw_os_error(), Some(rustix::io::Errno::IO.raw_os_error()), "{err}");
    drop(file);
    assert_eq!(fs::read(volume.path("small")).unwrap(), b"kept apart");
    let stderr = volume.unmount_ok();
    let named = stderr.contains(&largest) && stderr.contains("truncated");
    assert!(named, "the read names the pack {largest} and why: {stderr}");
}
