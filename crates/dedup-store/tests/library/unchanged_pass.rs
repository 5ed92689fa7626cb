//! The unchanged-file pass takes a parent's chunks only while the index still lists them: a
//! file whose chunks the repository lost since the parent is read and stored again, never named
//! in a snapshot by chunks that are gone.

use std::fs;

use dedup_store::backup::{backup, BackupOptions, BackupProgress};
use dedup_store::blob::BlobKind;
use dedup_store::format::IndexFile;
use dedup_store::restore::{restore, RestoreOptions};

use crate::common::{noise, small_repo};

#[test]
fn a_parent_whose_data_the_index_lost_is_not_trusted_and_its_files_are_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(src.join("sub")).unwrap();
    fs::write(src.join("sub/kept"), noise(50_000, 7)).unwrap();
    fs::write(src.join("top"), noise(30_000, 8)).unwrap();
    // Timestamps within a second of the parent's start are not trusted by the unchanged pass.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let repo = small_repo(&dir.path().join("repo"), true);
    let options = crate::common::backup_of(&src);
    let first = backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    let parent = Some((first.id.unwrap(), first.snapshot.clone()));

    // The index keeps the tree packs (the parent still reads) and forgets the data packs, as
    // after a prune that deleted them: their chunks are gone as far as any writer can tell.
    let files = repo.list_index_files().unwrap();
    let mut file = IndexFile::default();
    for id in &files {
        let read = repo.read_index_file(id).unwrap();
        file.packs.extend(read.packs.into_iter().filter(|p| p.kind == BlobKind::Tree));
    }
    assert!(!file.packs.is_empty());
    repo.write_index_file(&file).unwrap();
    for id in &files {
        repo.backend().delete(&format!("index/{id}")).unwrap();
    }

    let second = BackupOptions { parent, ..options };
    let again = backup(&repo, &second, &(), &BackupProgress::default()).unwrap();
    let summary = again.snapshot.summary;
    assert_eq!(summary.files_unchanged, 0, "{summary:?}");
    assert_eq!(summary.bytes_read, 80_000, "{summary:?}");
    assert!(summary.blobs_added > 0, "{summary:?}");

    let node = dedup_store::tree_walk::resolve(
        &repo,
        again.snapshot.tree,
        src.as_os_str().as_encoded_bytes(),
    )
    .unwrap();
    let target = dir.path().join("target");
    let restored = restore(&repo, &node, &target, RestoreOptions::default(), &()).unwrap();
    assert_eq!(restored.errors, 0);
    assert_eq!(fs::read(target.join("sub/kept")).unwrap(), noise(50_000, 7));
    assert_eq!(fs::read(target.join("top")).unwrap(), noise(30_000, 8));
}
