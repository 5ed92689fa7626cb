//! A backup whose repository starts refusing writes part-way (as a full disk does): the backup
//! fails with that error, stops reading the source soon after, and leaves no snapshot and no
//! writer marker. A repair whose storage stops answering stops, the old index kept.

use crate::common;
use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use dedup_store::backend::LocalBackend;
use dedup_store::backup::{backup, BackupOptions, BackupProgress};
use dedup_store::commands::repair_index;
use dedup_store::format::{ChunkerParams, KdfParams};
use dedup_store::repo::{InitOptions, Repository};

fn open_filling(path: &Path, packs: u64) -> Repository {
    let options = InitOptions {
        password: Some(b"pw".to_vec()),
        chunker: ChunkerParams::FastCdc { min: 16 << 10, avg: 64 << 10, max: 256 << 10 },
        pack_size: 1 << 20,
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    Repository::init(Arc::new(LocalBackend::new(path)), options).unwrap();
    let backend = common::ObjectLike::filling_up(path, packs);
    Repository::open(Arc::new(backend), b"pw").unwrap()
}

#[test]
fn a_backup_into_a_full_repository_stops_reading_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    // One directory of many incompressible files: the backup reads them on one thread in turn.
    let files = 40;
    for i in 0..files {
        fs::write(src.join(format!("f{i:02}")), common::noise(1 << 20, i as u64)).unwrap();
    }
    let repo = open_filling(&dir.path().join("repo"), 2);
    let options = BackupOptions { paths: vec![src], host: "h".into(), ..Default::default() };
    let progress = BackupProgress::default();
    let err = backup(&repo, &options, &(), &progress).expect_err("the backup must fail");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    let read = progress.bytes_read.load(Ordering::Relaxed);
    assert!(
        read < ((files as u64) << 20) / 2,
        "the backup read {read} bytes after the repository refused its writes"
    );
    assert!(repo.list_snapshot_ids().unwrap().is_empty());
    assert!(repo.writer_markers().unwrap().is_empty(), "the failed backup left its marker");
}

/// `repair index --read-data` against a server that went away tried every pack in turn (each
/// failing only after its retries, ~11 s on S3: 94 minutes for 513 packs) before failing. It
/// now stops after a few packs in a row could not be read, and the index files stay.
#[test]
fn a_repair_whose_storage_stops_answering_stops_and_keeps_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    for i in 0..12 {
        fs::write(src.join(format!("f{i:02}")), common::noise(1 << 20, i as u64)).unwrap();
    }
    let path = dir.path().join("repo");
    let repo = open_filling(&path, u64::MAX);
    let options = BackupOptions { paths: vec![src], host: "h".into(), ..Default::default() };
    backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    let index_before = repo.list_index_files().unwrap();

    let backend = Arc::new(common::ObjectLike::new(&path));
    let repo = Repository::open(backend.clone(), b"pw").unwrap();
    let packs = repo.backend().list("data").unwrap().len();
    assert!(packs >= 8, "{packs} packs: too few to tell");
    backend.packs_unreachable.store(true, Ordering::Relaxed);
    let err = repair_index(&repo, "h", true).expect_err("a repair that read no pack succeeded");
    assert!(err.to_string().contains("packs in a row could not be read"), "{err}");
    let reads = backend.pack_reads.load(Ordering::Relaxed);
    assert!(reads <= 3, "{reads} pack reads of {packs} after the storage stopped answering");
    assert_eq!(repo.list_index_files().unwrap(), index_before, "the index changed");
    assert!(repo.writer_markers().unwrap().is_empty(), "the failed repair left its marker");
}
