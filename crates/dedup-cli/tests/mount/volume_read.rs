//! Reading a volume's stored files back, through the chunks the mount opens ahead of a reader
//! going in order: a file of many chunks reads back exact after a remount in order, from two
//! readers at once and at offsets out of order; a damaged chunk reads as EIO (whether the
//! read-ahead or the reader met it first) and the mount goes on serving the rest.

use crate::common;
use crate::volume_helpers::{data, fuse_available, volume_place, Volume};

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use common::store::repo_names;

/// Opens `path` with O_DIRECT: every read goes to the mount, past the page cache.
fn open_direct(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(path)
        .unwrap()
}

/// The whole file, read in order in requests of `step` bytes with O_DIRECT.
fn read_in_order(path: &Path, step: usize) -> std::io::Result<Vec<u8>> {
    let mut file = open_direct(path);
    let mut out = Vec::new();
    let mut buf = vec![0; step];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn a_file_of_many_chunks_reads_back_exact_in_order_from_two_readers_and_out_of_order() {
    let test = "a_file_of_many_chunks_reads_back_exact_in_order_from_two_readers_and_out_of_order";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let written = data(12 << 20, 41);
    let volume = Volume::start(&repo, "r", &point, &["--commit-interval", "3600"]);
    fs::write(volume.path("big"), &written).unwrap();
    volume.unmount_ok();

    // A fresh mount: nothing is held in memory, every chunk comes from its pack.
    let volume = Volume::start(&repo, "r", &point, &["--commit-interval", "3600"]);
    let path = volume.path("big");
    assert!(read_in_order(&path, 128 << 10).unwrap() == written, "read in order");
    let readers: Vec<_> = [(1 << 20) + 4096, 300_000]
        .into_iter()
        .map(|step| {
            let path = path.clone();
            std::thread::spawn(move || read_in_order(&path, step).unwrap())
        })
        .collect();
    for reader in readers {
        assert!(reader.join().unwrap() == written, "read by one of two readers at once");
    }
    // Backwards, by pieces that straddle chunk boundaries: no read is taken for one in order.
    let file = open_direct(&path);
    let piece = 700_001;
    let mut at = written.len();
    while at > 0 {
        let from = at.saturating_sub(piece);
        let mut buf = vec![0; at - from];
        file.read_exact_at(&mut buf, from as u64).unwrap();
        assert!(buf == written[from..at], "bytes {from}..{at} read backwards");
        at = from;
    }
    drop(file);
    volume.unmount_ok();
}

#[test]
fn a_damaged_chunk_reads_as_an_error_and_the_volume_goes_on() {
    let test = "a_damaged_chunk_reads_as_an_error_and_the_volume_goes_on";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "d", &point, &["--commit-interval", "3600"]);
    fs::write(volume.path("big"), data(8 << 20, 42)).unwrap();
    volume.unmount_ok();
    // Packs of the test repository are 1 MiB: damaging the middle of the largest damages one
    // chunk of the file, which read-ahead meets before the reader comes to it.
    let largest = repo_names(&repo, "data")
        .into_iter()
        .max_by_key(|name| fs::metadata(repo.join(name)).unwrap().len())
        .unwrap();
    let pack = repo.join(largest);
    let mut bytes = fs::read(&pack).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    fs::write(&pack, bytes).unwrap();

    let volume = Volume::start(&repo, "d", &point, &["--commit-interval", "3600"]);
    for attempt in 0..2 {
        let err = read_in_order(&volume.path("big"), 128 << 10)
            .expect_err("a damaged chunk read back as data");
        let eio = Some(rustix::io::Errno::IO.raw_os_error());
        assert_eq!(err.raw_os_error(), eio, "read {attempt}: {err}");
    }
    // The mount still answers, and takes new files.
    fs::write(volume.path("after"), b"still here").unwrap();
    assert_eq!(fs::read(volume.path("after")).unwrap(), b"still here");
    let stderr = volume.unmount_ok();
    // By the file's path in the volume (the table is free when a read meets the damage).
    let named = stderr.contains("error: reading /big (inode ") && stderr.contains("data blob");
    assert!(named, "the damage and the file that met it are named: {stderr}");
}
