//! When a backup lists `data/` to adopt packs that no index lists (docs/store-format.md §11,
//! §12): only when a stale writer marker says a session was killed; never after clean sessions,
//! nor after one that stopped on an error (it indexes what it stored before it goes).

use crate::common;
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use dedup_store::backend::{Backend, LocalBackend};
use dedup_store::backup::{backup, BackupOptions, BackupOutcome, BackupProgress};
use dedup_store::blob::BlobKind;
use dedup_store::format::{ChunkerParams, KdfParams};
use dedup_store::repo::{BlobSink, InitOptions, Repository, WriterMarker, STALE_AFTER};
use dedup_store::Id;

fn open(path: &Path) -> (Repository, Arc<common::ObjectLike>) {
    let options = InitOptions {
        password: Some(b"pw".to_vec()),
        chunker: ChunkerParams::FastCdc { min: 16 << 10, avg: 64 << 10, max: 256 << 10 },
        pack_size: 1 << 20,
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    Repository::init(Arc::new(LocalBackend::new(path)), options).unwrap();
    let backend = Arc::new(common::ObjectLike::new(path));
    let repo = Repository::open(backend.clone(), b"pw").unwrap();
    (repo, backend)
}

fn run(repo: &Repository, src: &Path) -> dedup_store::error::Result<BackupOutcome> {
    let options =
        BackupOptions { paths: vec![src.to_path_buf()], host: "h".into(), ..Default::default() };
    backup(repo, &options, &(), &BackupProgress::default())
}

/// Packs in `data/` that the index does not list.
fn unindexed_packs(repo: &Repository, backend: &common::ObjectLike) -> usize {
    let index = repo.load_index_without(&HashSet::new()).unwrap().index;
    let packs = backend.inner.list("data").unwrap();
    packs
        .iter()
        .filter_map(|o| o.name.rsplit('/').next().and_then(Id::from_hex))
        .filter(|id| !index.has_pack(id))
        .count()
}

fn source(dir: &Path, files: u64, seed: u64) -> std::path::PathBuf {
    let src = dir.join(format!("src-{seed}"));
    fs::create_dir_all(&src).unwrap();
    for i in 0..files {
        fs::write(src.join(format!("f{i:02}")), common::noise(600 << 10, seed * 100 + i)).unwrap();
    }
    src
}

#[test]
fn clean_backups_do_not_list_data() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, backend) = open(&dir.path().join("repo"));
    let src = source(dir.path(), 4, 1);
    let first = run(&repo, &src).unwrap();
    assert!(first.packs_written > 1);
    run(&repo, &src).unwrap();
    fs::write(src.join("new"), common::noise(300 << 10, 7)).unwrap();
    run(&repo, &src).unwrap();
    assert_eq!(backend.data_listings.load(Ordering::Relaxed), 0, "a backup listed data/");
    assert!(repo.writer_markers().unwrap().is_empty());
}

#[test]
fn a_stale_marker_makes_the_next_backup_adopt_and_remove_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("repo");
    let (repo, backend) = open(&repo_dir);
    let src = source(dir.path(), 1, 2);
    run(&repo, &src).unwrap();

    // A session of another host, killed: packs stored, no index file, its marker left behind.
    let marker = WriterMarker::create(&repo, "elsewhere.invalid").unwrap();
    let marker_name = marker.name();
    marker.leave();
    let index = repo.load_index_without(&HashSet::new()).unwrap().index;
    let killed = BlobSink::new(&repo, index, false);
    // Enough for full packs of 1 MiB in blobs spread over several open packs.
    for i in 0..24 {
        killed.store(BlobKind::Data, &common::noise(256 << 10, 1000 + i)).unwrap();
    }
    assert!(killed.stats().packs_written >= 1);
    drop(killed);
    let orphans = unindexed_packs(&repo, &backend);
    assert!(orphans >= 1);

    // While the marker is fresh its session may still be at work: no listing, no adoption.
    let fresh = run(&repo, &src).unwrap();
    assert_eq!((fresh.packs_adopted, backend.data_listings.load(Ordering::Relaxed)), (0, 0));
    assert_eq!(unindexed_packs(&repo, &backend), orphans);

    // Unrefreshed for longer than STALE_AFTER (the storage's clock decides): the session is gone.
    let marker_file = fs::File::options().write(true).open(repo_dir.join(&marker_name)).unwrap();
    marker_file.set_modified(SystemTime::now() - STALE_AFTER - Duration::from_secs(60)).unwrap();
    drop(marker_file);
    let adopting = run(&repo, &src).unwrap();
    assert_eq!(adopting.packs_adopted, orphans as u64);
    assert_eq!(backend.data_listings.load(Ordering::Relaxed), 1);
    assert_eq!(unindexed_packs(&repo, &backend), 0);
    assert!(repo.writer_markers().unwrap().is_empty(), "the stale marker was left");

    let after = run(&repo, &src).unwrap();
    assert_eq!(after.packs_adopted, 0);
    assert_eq!(backend.data_listings.load(Ordering::Relaxed), 1, "listed again");
}

#[test]
fn a_backup_that_fails_indexes_what_it_stored_and_withdraws_its_marker() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, backend) = open(&dir.path().join("repo"));
    let small = source(dir.path(), 1, 3);
    run(&repo, &small).unwrap();
    let big = source(dir.path(), 12, 4);

    backend.packs_left.store(3, Ordering::Relaxed);
    let err = run(&repo, &big).expect_err("the backup must fail");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    backend.packs_left.store(u64::MAX, Ordering::Relaxed);
    assert!(repo.writer_markers().unwrap().is_empty(), "the failed backup left its marker");
    assert_eq!(unindexed_packs(&repo, &backend), 0, "the failed backup left packs unindexed");
    let resumed = run(&repo, &big).unwrap();
    assert_eq!(resumed.packs_adopted, 0);
    assert_eq!(backend.data_listings.load(Ordering::Relaxed), 0);
}
