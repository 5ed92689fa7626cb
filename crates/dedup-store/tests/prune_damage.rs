//! A prune refuses to repack a pack whose reachable blob is damaged: it fails naming the pack and
//! the blob, and deletes nothing — whether the blob is proven by its box's tag alone (encrypted
//! repositories) or opened and its id checked (unencrypted ones).

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use dedup_store::backup::{backup, BackupOptions, BackupProgress};
use dedup_store::blob::blob_id;
use dedup_store::pack::read_trailer;
use dedup_store::prune::{self, PruneOptions};

mod common;
use common::{noise, small_repo};

/// Every file under `root`.
fn files(root: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.insert(path);
            }
        }
    }
    out
}

#[test]
fn a_damaged_blob_in_a_pack_to_repack_stops_the_prune_before_any_deletion() {
    for encrypted in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (root, src) = (dir.path().join("repo"), dir.path().join("src"));
        let repo = small_repo(&root, encrypted);
        // Below the chunker's minimum, each file is one blob; both land in the first backup's
        // data pack, of which the second snapshot keeps half: a pack to repack.
        let kept = noise(1000, 1);
        fs::create_dir_all(&src).unwrap();
        fs::write(src.join("kept"), &kept).unwrap();
        fs::write(src.join("gone"), noise(1000, 2)).unwrap();
        let options = BackupOptions { paths: vec![src.clone()], ..BackupOptions::default() };
        let first = backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
        fs::remove_file(src.join("gone")).unwrap();
        backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
        repo.backend().delete(&format!("snapshots/{}", first.id.unwrap())).unwrap();

        // One byte of the kept blob flipped where it is stored.
        let id = blob_id(&repo.keys().id, &kept);
        let (pack, entry) = repo
            .backend()
            .list("data")
            .unwrap()
            .into_iter()
            .find_map(|object| {
                let parsed =
                    read_trailer(repo.backend(), repo.sealer(), &object.name, object.size).ok()?;
                let entry = parsed.entries.into_iter().find(|e| e.id == id)?;
                Some((object.name, entry))
            })
            .expect("the kept file's blob is in a pack");
        let file = fs::OpenOptions::new().read(true).write(true).open(root.join(&pack)).unwrap();
        let at = u64::from(entry.offset) + u64::from(entry.stored_len) / 2;
        let mut byte = [0u8; 1];
        file.read_exact_at(&mut byte, at).unwrap();
        file.write_all_at(&[byte[0] ^ 0x10], at).unwrap();
        drop(file);

        let before = files(&root);
        let plan = prune::plan(&repo, &PruneOptions::default(), &HashSet::new()).unwrap();
        assert_eq!(plan.stats.packs_repack, 1, "encrypted {encrypted}: {:?}", plan.stats);
        let err = prune::run(&repo, &plan, "here").unwrap_err().to_string();
        assert!(err.contains(&pack) && err.contains(&id.to_string()), "{encrypted}: {err}");
        let after = files(&root);
        let lost: Vec<_> = before.difference(&after).collect();
        assert!(lost.is_empty(), "encrypted {encrypted}: the failed prune deleted {lost:?}");
    }
}
