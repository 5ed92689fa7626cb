//! A backup whose repository starts refusing writes part-way (as a full disk does): the backup
//! fails with that error, stops reading the source soon after, and leaves no snapshot and no
//! writer marker.

use crate::common;
use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use dedup_store::backend::LocalBackend;
use dedup_store::backup::{backup, BackupOptions, BackupProgress};
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
