//! A prune with full credentials does not turn against the data what a key holder without
//! delete rights wrote (a compromised append-only client): a forged deletion plan naming live
//! packs and index files, or a forged index file that moves a live blob to a pack where it is
//! not. Each prune keeps the real packs, warns, and leaves a repository that `check --read-data`
//! passes and whose files read back exactly.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use dedup_store::backup::{backup, BackupOptions, BackupProgress};
use dedup_store::blob::{blob_id, BlobKind};
use dedup_store::commands::{check, prune, PruneEvent};
use dedup_store::format::{Content, DeletionPlan, IndexFile, NodeKind};
use dedup_store::id::Id;
use dedup_store::pack::pack_path;
use dedup_store::prune::PruneOptions;
use dedup_store::repo::{OpenOptions, Repository, WriterMarker};

use crate::common::{noise, small_repo, ObjectLike};

/// Backs up `src`; returns the snapshot's id.
fn back_up(repo: &Repository, src: &Path) -> Id {
    let options = BackupOptions { paths: vec![src.to_path_buf()], ..BackupOptions::default() };
    backup(repo, &options, &(), &BackupProgress::default()).unwrap().id.unwrap()
}

/// Names of the objects in `folder`.
fn names(repo: &Repository, folder: &str) -> HashSet<String> {
    repo.backend().list(folder).unwrap().into_iter().map(|o| o.name).collect()
}

/// A full prune, as `dedup store prune` runs it; returns its warnings.
fn full_prune(repo: &Repository) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut events = |event: PruneEvent<'_>| {
        if let PruneEvent::Warning(w) = event {
            warnings.push(w.to_string());
        }
    };
    prune(repo, &PruneOptions::default(), &HashSet::new(), false, "admin", &mut events).unwrap();
    warnings
}

/// `check --read-data` finds nothing wrong, and every file of every snapshot reads back as
/// `expected` has it (by name).
fn assert_intact(repo: &Repository, expected: &[(&str, Vec<u8>)], case: &str) {
    let report = check(repo, true).unwrap();
    assert!(report.errors.is_empty(), "{case}: check --read-data: {:?}", report.errors);
    let index = repo.load_index().unwrap().index;
    let mut found = 0;
    for id in repo.list_snapshot_ids().unwrap() {
        let mut pending = vec![repo.load_snapshot(&id).unwrap().tree];
        while let Some(tree) = pending.pop() {
            for node in repo.read_tree(&index, &tree).unwrap().nodes {
                match node.content {
                    Content::Subtree(sub) => pending.push(sub),
                    Content::Chunks(chunks) if node.kind == NodeKind::File => {
                        let mut bytes = Vec::new();
                        for chunk in &chunks {
                            bytes.extend(repo.read_blob(&index, chunk, BlobKind::Data).unwrap());
                        }
                        let name = String::from_utf8_lossy(&node.name).to_string();
                        let (_, want) = expected
                            .iter()
                            .find(|(n, _)| *n == name)
                            .unwrap_or_else(|| panic!("{case}: unexpected file {name}"));
                        assert!(bytes == *want, "{case}: {name} does not read back exactly");
                        found += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(found >= expected.len(), "{case}: only {found} files found");
}

fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as i64
}

#[test]
fn a_forged_deletion_plan_naming_live_packs_and_index_files_deletes_nothing_live() {
    // Every pack and index file, or only the index files (whose packs, no longer indexed,
    // the next prune would take for garbage).
    for with_packs in [true, false] {
        let case = if with_packs { "forged plan" } else { "forged plan of index files" };
        let dir = tempfile::tempdir().unwrap();
        let (root, src) = (dir.path().join("repo"), dir.path().join("src"));
        let repo = small_repo(&root, true);
        fs::create_dir_all(&src).unwrap();
        let files = [("a", noise(20_000, 1)), ("b", noise(3000, 2)), ("c", noise(5000, 3))];
        for (name, bytes) in &files[..2] {
            fs::write(src.join(name), bytes).unwrap();
        }
        back_up(&repo, &src);
        fs::write(src.join("c"), &files[2].1).unwrap();
        back_up(&repo, &src);
        let packs = names(&repo, "data");

        // What a compromised client holding the key can write: a complete plan deleting every
        // pack and index file, claiming to have marked every snapshot, waiting for no one.
        let ids = |folder: &str| -> Vec<Id> {
            names(&repo, folder)
                .iter()
                .filter_map(|n| n.rsplit('/').next().and_then(Id::from_hex))
                .collect()
        };
        let forged = DeletionPlan {
            created: now_ns(),
            packs: if with_packs { ids("data") } else { Vec::new() },
            index_files: ids("index"),
            snapshots: repo.list_snapshot_ids().unwrap(),
            writers: Vec::new(),
            complete: true,
        };
        repo.write_deletion_plan(&forged).unwrap();

        let warnings = full_prune(&repo);
        let after = names(&repo, "data");
        let lost: Vec<_> = packs.difference(&after).collect();
        assert!(lost.is_empty(), "{case}: deleted {lost:?}");
        let named = if with_packs { "data/" } else { "index/" };
        assert!(
            warnings.iter().any(|w| w.contains(named) && w.contains("deletion plan")),
            "{case}: no warning names what was kept: {warnings:?}"
        );
        assert!(names(&repo, "deletions").is_empty(), "{case}: the plan was not carried out");
        assert_intact(&repo, &files, case);
        // A second prune deletes nothing live either.
        full_prune(&repo);
        let after = names(&repo, "data");
        let lost: Vec<_> = packs.difference(&after).collect();
        assert!(lost.is_empty(), "{case}, pruned again: deleted {lost:?}");
        assert_intact(&repo, &files, &format!("{case}, pruned again"));
    }
}

/// Where the forged index file says the live blob is: a pack nothing needs any more, or another
/// live pack.
#[derive(Debug, Clone, Copy)]
enum Relocated {
    ToGarbage,
    ToLivePack,
    /// To a garbage pack, the real pack listed again without it beside its real listing (the
    /// index keeps one listing of a pack: the forged one, here).
    ListedAgainWithout,
}

#[test]
fn a_forged_index_file_moving_a_live_blob_elsewhere_does_not_get_its_pack_deleted() {
    for case in [Relocated::ToGarbage, Relocated::ToLivePack, Relocated::ListedAgainWithout] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let repo = small_repo(&root, true);
        // One blob each (below the chunker's minimum): `kept`'s pack holds only it.
        let kept = noise(1000, 1);
        let other = noise(1000, 2);
        let (src, elsewhere) = (dir.path().join("src"), dir.path().join("elsewhere"));
        fs::create_dir_all(&src).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();
        fs::write(src.join("kept"), &kept).unwrap();
        back_up(&repo, &src);
        let first_index = repo.list_index_files().unwrap();
        let x = blob_id(&repo.keys().id, &kept);
        let real_pack = data_pack_holding(&repo, &x);
        fs::write(elsewhere.join("other"), &other).unwrap();
        let second = back_up(&repo, &elsewhere);
        let mut expected = vec![("kept", kept.clone())];
        match case {
            Relocated::ToGarbage | Relocated::ListedAgainWithout => {
                repo.backend().delete(&format!("snapshots/{second}")).unwrap();
            }
            Relocated::ToLivePack => expected.push(("other", other.clone())),
        }
        let target = data_pack_holding(&repo, &blob_id(&repo.keys().id, &other));

        // The forged index file: supersedes the first backup's and lists what it lists but
        // `kept`'s pack, and lists the second backup's packs with `kept`'s blob moved into the
        // other pack, at the place of that pack's own blob. The index keeps the listing of a
        // pack it reads first, in an order the test cannot choose: so that it is the forged
        // one, the second backup's own index file is taken away (as far as the index goes, the
        // repository is then what it would be had the forged file been read first).
        let relisted = matches!(case, Relocated::ListedAgainWithout);
        let mut packs = Vec::new();
        let mut second_index = Vec::new();
        for file_id in repo.list_index_files().unwrap() {
            if !first_index.contains(&file_id) {
                second_index.push(file_id);
            }
            for mut pack in repo.read_index_file(&file_id).unwrap().packs {
                if pack.id == real_pack {
                    if !relisted {
                        continue;
                    }
                    pack.blobs.clear();
                }
                if pack.id == target {
                    let mut moved = pack.blobs[0];
                    moved.id = x;
                    pack.blobs.push(moved);
                }
                packs.push(pack);
            }
        }
        let supersedes = if relisted { Vec::new() } else { first_index };
        let forged = IndexFile { supersedes, packs };
        let mut written = repo.write_index_file(&forged).unwrap();
        for file_id in second_index {
            repo.backend().delete(&format!("index/{file_id}")).unwrap();
        }
        if relisted {
            // Which listing of the real pack the index keeps depends on the order the files
            // are listed in, which a directory may keep by where each name was made: every
            // index file is written again (each under a new name) until the forged listing is
            // the one kept, as a forger could.
            let mut tries = 0;
            loop {
                let index = repo.load_index().unwrap().index;
                let moved = index.lookup(&x, BlobKind::Data).is_some_and(|l| l.pack == target);
                if moved && index.copies_dropped() == 0 {
                    break;
                }
                tries += 1;
                assert!(tries < 64, "not forged after {tries} tries");
                for file_id in repo.list_index_files().unwrap() {
                    let file = repo.read_index_file(&file_id).unwrap();
                    repo.backend().delete(&format!("index/{file_id}")).unwrap();
                    let again = repo.write_index_file(&file).unwrap();
                    if file_id == written {
                        written = again;
                    }
                }
            }
        }

        let warnings = full_prune(&repo);
        let what = format!("{case:?}");
        assert!(
            names(&repo, "data").contains(&pack_path(&real_pack)),
            "{what}: the pack holding the only authentic copy was deleted"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&x.to_string()) && w.contains(&real_pack.to_string())),
            "{what}: no warning names blob and pack: {warnings:?}"
        );
        assert_intact(&repo, &expected, &what);
        full_prune(&repo);
        assert_intact(&repo, &expected, &format!("{what}, pruned again"));
    }
}

/// The data pack whose trailer holds blob `id`.
fn data_pack_holding(repo: &Repository, id: &Id) -> Id {
    for file_id in repo.list_index_files().unwrap() {
        for pack in repo.read_index_file(&file_id).unwrap().packs {
            if pack.kind == BlobKind::Data && pack.blobs.iter().any(|b| b.id == *id) {
                return pack.id;
            }
        }
    }
    panic!("no pack holds {id}");
}

/// The check costs an honest deferred plan nothing it needs: a plan that waited for a writer,
/// with a pack repacked into a new one, is carried out by the next prune — the repacked pack
/// deleted (its blob's copy opens), no warning — and the repository stays whole.
#[test]
fn an_honest_deferred_plan_is_carried_out_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let (root, src) = (dir.path().join("repo"), dir.path().join("src"));
    let repo = small_repo(&root, true);
    let kept = noise(1000, 1);
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("kept"), &kept).unwrap();
    fs::write(src.join("gone"), noise(1000, 2)).unwrap();
    let first = back_up(&repo, &src);
    fs::remove_file(src.join("gone")).unwrap();
    back_up(&repo, &src);
    repo.backend().delete(&format!("snapshots/{first}")).unwrap();
    let packs = names(&repo, "data");

    let writer = WriterMarker::create(&repo, "elsewhere").unwrap();
    let plan = dedup_store::prune::plan(&repo, &PruneOptions::default(), &HashSet::new()).unwrap();
    assert_eq!(plan.stats.packs_repack, 1, "{:?}", plan.stats);
    let outcome = dedup_store::prune::run(&repo, &plan, "admin").unwrap();
    assert_eq!(outcome.waiting_for, 1, "the plan did not wait for the writer");
    writer.remove().unwrap();

    let warnings = full_prune(&repo);
    assert_eq!(warnings, Vec::<String>::new(), "an honest plan was warned about");
    assert!(names(&repo, "deletions").is_empty(), "the plan was not carried out");
    let after = names(&repo, "data");
    assert!(packs.difference(&after).count() >= 1, "the repacked pack was kept");
    assert_intact(&repo, &[("kept", kept)], "honest deferred plan");
}

/// Planning a prune of a repository where no blob has a second location reads each index file
/// once, as before the guard against misplaced blobs: that guard reads nothing there.
#[test]
fn a_prune_with_no_blob_in_two_places_reads_each_index_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let (root, src) = (dir.path().join("repo"), dir.path().join("src"));
    small_repo(&root, true);
    let backend = Arc::new(ObjectLike::new(&root));
    let options = OpenOptions { password: Some(b"pw".as_slice()), first_slot: None };
    let repo = Repository::open_with(backend.clone(), &options).unwrap().repository;
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("kept"), noise(1000, 1)).unwrap();
    fs::write(src.join("gone"), noise(30_000, 2)).unwrap();
    let first = back_up(&repo, &src);
    fs::remove_file(src.join("gone")).unwrap();
    back_up(&repo, &src);
    repo.backend().delete(&format!("snapshots/{first}")).unwrap();

    backend.index_reads.store(0, Ordering::Relaxed);
    let plan = dedup_store::prune::plan(&repo, &PruneOptions::default(), &HashSet::new()).unwrap();
    assert!(plan.stats.packs_repack + plan.stats.packs_delete > 0, "{:?}", plan.stats);
    let files = repo.list_index_files().unwrap().len() as u64;
    assert_eq!(backend.index_reads.load(Ordering::Relaxed), files);
    assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
}
