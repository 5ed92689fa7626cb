//! A prune refuses to repack a pack whose reachable blob is damaged: it fails naming the pack and
//! the blob, and deletes nothing — whether the blob is proven by its box's tag alone (encrypted
//! repositories) or opened and its id checked (unencrypted ones), and whether the boxes are read
//! straight into the new pack (a local directory) or in joined range requests (object storage,
//! here a local directory that offers only requests).

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dedup_store::backend::{Backend, LocalBackend};
use dedup_store::backup::{backup, BackupOptions, BackupProgress};
use dedup_store::blob::blob_id;
use dedup_store::pack::read_trailer;
use dedup_store::prune::{self, PruneOptions};
use dedup_store::repo::{slot_census, OpenOptions, Repository};

use crate::common;
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

/// The repository at `root` opened again, as object storage sees it ([`common::ObjectLike`]) unless `ranged`.
fn reopen(root: &Path, ranged: bool) -> Repository {
    let backend: Arc<dyn Backend> = if ranged {
        Arc::new(LocalBackend::new(root))
    } else {
        Arc::new(common::ObjectLike::new(root))
    };
    // An unencrypted repository opens only without a password (docs/store-format.md §4).
    let encrypted = slot_census(backend.as_ref()).unwrap().with_password > 0;
    let options = OpenOptions { password: encrypted.then_some(b"pw".as_slice()), first_slot: None };
    Repository::open_with(backend, &options).unwrap().repository
}

/// A repository at `root` whose second snapshot keeps half of the first backup's data pack (the
/// file `kept`, below the chunker's minimum and so one blob), the first snapshot forgotten: a
/// pack to repack. Returns the kept file's bytes.
fn one_pack_to_repack(root: &Path, src: &Path, encrypted: bool) -> Vec<u8> {
    let repo = small_repo(root, encrypted);
    let kept = noise(1000, 1);
    fs::create_dir_all(src).unwrap();
    fs::write(src.join("kept"), &kept).unwrap();
    fs::write(src.join("gone"), noise(1000, 2)).unwrap();
    let options = BackupOptions { paths: vec![src.to_path_buf()], ..BackupOptions::default() };
    let first = backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    fs::remove_file(src.join("gone")).unwrap();
    backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    repo.backend().delete(&format!("snapshots/{}", first.id.unwrap())).unwrap();
    kept
}

/// Both ways of reading the boxes copy the same bytes: the new pack holds the same boxes (its
/// trailer, sealed with a fresh nonce, differs).
#[test]
fn a_repack_copies_the_same_boxes_whether_read_alone_or_in_requests() {
    for encrypted in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        let mut copied = Vec::new();
        for ranged in [true, false] {
            let root = dir.path().join(format!("repo-{ranged}"));
            if ranged {
                one_pack_to_repack(&root, &src, encrypted);
                copy_tree(&root, &dir.path().join("repo-false"));
            }
            let repo = reopen(&root, ranged);
            let before = files(&root);
            let plan = prune::plan(&repo, &PruneOptions::default(), &HashSet::new()).unwrap();
            assert_eq!(plan.stats.packs_repack, 1, "encrypted {encrypted}: {:?}", plan.stats);
            prune::run(&repo, &plan, "here").unwrap();
            let mut boxes = Vec::new();
            for path in files(&root.join("data")).difference(&before) {
                let name = path.strip_prefix(&root).unwrap().to_str().unwrap();
                let size = fs::metadata(path).unwrap().len();
                for entry in
                    read_trailer(repo.backend(), repo.sealer(), name, size).unwrap().entries
                {
                    let at = u64::from(entry.offset);
                    let bytes = repo.backend().get_range(name, at, entry.stored_len.into());
                    boxes.push((entry.id, bytes.unwrap()));
                }
            }
            assert!(!boxes.is_empty(), "encrypted {encrypted}, ranged {ranged}: nothing copied");
            copied.push(boxes);
        }
        assert!(
            copied[0] == copied[1],
            "encrypted {encrypted}: the two ways copied different boxes"
        );
    }
}

/// Copies the tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    for file in files(from) {
        let target = to.join(file.strip_prefix(from).unwrap());
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::copy(&file, &target).unwrap();
    }
}

#[test]
fn a_damaged_blob_in_a_pack_to_repack_stops_the_prune_before_any_deletion() {
    for (encrypted, ranged) in [(true, true), (false, true), (true, false), (false, false)] {
        let dir = tempfile::tempdir().unwrap();
        let (root, src) = (dir.path().join("repo"), dir.path().join("src"));
        let kept = one_pack_to_repack(&root, &src, encrypted);
        let repo = reopen(&root, ranged);

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
        assert!(
            err.contains(&pack) && err.contains(&id.to_string()),
            "{encrypted} {ranged}: {err}"
        );
        let after = files(&root);
        let lost: Vec<_> = before.difference(&after).collect();
        assert!(lost.is_empty(), "{encrypted} {ranged}: the failed prune deleted {lost:?}");
    }
}
