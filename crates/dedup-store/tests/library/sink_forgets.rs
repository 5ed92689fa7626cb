//! A session's sink after a pack could not be written (a full disk): it forgets the blobs of
//! every pack it gave up, so that storing them again stores them, and the flush that follows
//! indexes each one; none is believed stored while it never landed.

use crate::common;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use dedup_store::backend::LocalBackend;
use dedup_store::blob::BlobKind;
use dedup_store::format::{ChunkerParams, KdfParams};
use dedup_store::repo::{BlobSink, InitOptions, Repository};

fn open_refusing_packs(path: &Path) -> (Repository, Arc<common::ObjectLike>) {
    let options = InitOptions {
        password: Some(b"pw".to_vec()),
        chunker: ChunkerParams::FastCdc { min: 16 << 10, avg: 64 << 10, max: 256 << 10 },
        pack_size: 1 << 20,
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    Repository::init(Arc::new(LocalBackend::new(path)), options).unwrap();
    let backend = Arc::new(common::ObjectLike::filling_up(path, 0));
    (Repository::open(backend.clone(), b"pw").unwrap(), backend)
}

#[test]
fn the_blobs_of_packs_that_failed_are_stored_again_when_they_come_again() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, backend) = open_refusing_packs(&dir.path().join("repo"));
    let sink = BlobSink::new(&repo, repo.load_index_without(&HashSet::new()).unwrap().index, false);
    let blobs: Vec<Vec<u8>> = (0..48).map(|n| common::noise(64 << 10, 500 + n)).collect();
    let mut failed = 0;
    for blob in &blobs {
        failed += usize::from(sink.store(BlobKind::Data, blob).is_err());
    }
    let flushed = sink.flush();
    assert!(failed > 0 || flushed.is_err(), "a full repository took every pack");

    // Room again: every blob given again is stored, and the flush indexes all of them.
    backend.packs_left.store(u64::MAX, Ordering::Relaxed);
    let ids: Vec<_> = blobs.iter().map(|blob| sink.store(BlobKind::Data, blob).unwrap()).collect();
    sink.flush().unwrap();
    for (id, blob) in ids.iter().zip(&blobs) {
        let location = sink.locate(id, BlobKind::Data).unwrap_or_else(|| {
            panic!("blob {id} believed stored after its pack failed; it is in no index")
        });
        assert!(repo.read_blob_at(&location, BlobKind::Data).unwrap() == *blob);
    }
}
