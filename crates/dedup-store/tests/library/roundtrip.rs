//! Backup → restore round trips through the library on a tree with every entry kind, the
//! unchanged-file pass, and check finding damage.

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use dedup_store::backend::LocalBackend;
use dedup_store::backup::{backup, BackupOptions, BackupProgress};
use dedup_store::repo::Repository;
use dedup_store::restore::{restore, RestoreOptions};

use crate::common;
use common::{noise, small_repo};

fn make_tree(root: &Path) {
    fs::create_dir_all(root.join("a/b/c")).unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    fs::write(root.join("a/one"), b"1").unwrap();
    fs::write(root.join("a/empty-file"), b"").unwrap();
    fs::write(root.join("a/b/big"), noise(100_000, 1)).unwrap();
    fs::write(root.join("a/b/c/copy"), noise(100_000, 1)).unwrap();
    fs::hard_link(root.join("a/one"), root.join("a/b/link-to-one")).unwrap();
    symlink("../one", root.join("a/b/rel")).unwrap();
    symlink("/nowhere/at/all", root.join("dangling")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o640),
        0,
    )
    .unwrap();
    let sparse = fs::File::create(root.join("sparse")).unwrap();
    sparse.set_len(8 << 20).unwrap();
    fs::write(root.join("a/\u{e9}t\u{e9}\nnewline"), b"name").unwrap();
    fs::set_permissions(root.join("a/one"), fs::Permissions::from_mode(0o4755)).unwrap();
    let _ = rustix::fs::setxattr(
        root.join("a/b/big"),
        "user.test",
        b"value",
        rustix::fs::XattrFlags::empty(),
    );
}

fn compare(src: &Path, dst: &Path) {
    let mut pending = vec![(src.to_path_buf(), dst.to_path_buf())];
    while let Some((a, b)) = pending.pop() {
        let ma = fs::symlink_metadata(&a).unwrap();
        let mb = fs::symlink_metadata(&b).unwrap_or_else(|e| panic!("{}: {e}", b.display()));
        assert_eq!(ma.file_type(), mb.file_type(), "{}", a.display());
        assert_eq!(ma.mode(), mb.mode(), "{}", a.display());
        if !ma.is_dir() {
            assert_eq!(ma.mtime_nsec(), mb.mtime_nsec(), "{}", a.display());
            assert_eq!(ma.mtime(), mb.mtime(), "{}", a.display());
        }
        if ma.is_file() {
            assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap(), "{}", a.display());
            assert_eq!(ma.nlink(), mb.nlink(), "{}", a.display());
        } else if ma.file_type().is_symlink() {
            assert_eq!(fs::read_link(&a).unwrap(), fs::read_link(&b).unwrap());
        } else if ma.is_dir() {
            assert_eq!(ma.mtime(), mb.mtime(), "{}", a.display());
            let mut names: Vec<_> =
                fs::read_dir(&a).unwrap().map(|e| e.unwrap().file_name()).collect();
            let mut other: Vec<_> =
                fs::read_dir(&b).unwrap().map(|e| e.unwrap().file_name()).collect();
            names.sort();
            other.sort();
            assert_eq!(names, other, "{}", a.display());
            for name in names {
                pending.push((a.join(&name), b.join(&name)));
            }
        }
    }
}

#[test]
fn a_tree_of_every_kind_restores_exactly_and_unchanged_files_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    make_tree(&src);
    // Timestamps within a second of the parent's start are not trusted by the unchanged pass.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let repo = small_repo(&dir.path().join("repo"), true);
    let options = crate::common::backup_of(&src);
    let first = backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    let summary = first.snapshot.summary;
    assert_eq!(summary.errors, 0);
    assert!(summary.files_new >= 7);
    // The two copies of 100 kB of noise and the 8 MiB hole are stored once: far below the logical size.
    assert!(summary.bytes_added < 200_000, "{summary:?}");

    let repo =
        Repository::open(Arc::new(LocalBackend::new(dir.path().join("repo"))), b"pw").unwrap();
    let node = dedup_store::tree_walk::resolve(
        &repo,
        first.snapshot.tree,
        src.as_os_str().as_encoded_bytes(),
    )
    .unwrap();
    let target = dir.path().join("target");
    let restored = restore(&repo, &node, &target, RestoreOptions::default(), &()).unwrap();
    assert_eq!(restored.errors, 0);
    compare(&src, &target);
    let sparse = fs::metadata(target.join("sparse")).unwrap();
    assert_eq!(sparse.len(), 8 << 20);
    assert!(sparse.blocks() < 64, "the hole stays a hole: {} blocks", sparse.blocks());
    assert_eq!(
        fs::metadata(target.join("a/one")).unwrap().ino(),
        fs::metadata(target.join("a/b/link-to-one")).unwrap().ino()
    );

    let second =
        BackupOptions { parent: Some((first.id.unwrap(), first.snapshot.clone())), ..options };
    let again = backup(&repo, &second, &(), &BackupProgress::default()).unwrap();
    assert_eq!(again.snapshot.summary.bytes_read, 0, "{:?}", again.snapshot.summary);
    assert!(again.snapshot.summary.files_unchanged >= 7);

    let report = dedup_store::commands::check(&repo, true).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.blobs_read > 0);
}

#[test]
fn check_names_a_damaged_pack_and_a_wrong_password_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::write(src.join("f"), noise(50_000, 2)).unwrap();
    let repo_dir = dir.path().join("repo");
    let repo = small_repo(&repo_dir, true);
    let options = BackupOptions { paths: vec![src], ..BackupOptions::default() };
    backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    let backend = LocalBackend::new(&repo_dir);
    use dedup_store::backend::Backend;
    let pack = backend.list("data").unwrap().into_iter().map(|o| o.name).next().unwrap();
    let path = repo_dir.join(&pack);
    let mut bytes = fs::read(&path).unwrap();
    bytes[100] ^= 1;
    fs::write(&path, bytes).unwrap();
    let report = dedup_store::commands::check(&repo, true).unwrap();
    assert!(report.errors.iter().any(|e| e.contains(&pack)), "{:?}", report.errors);
    assert!(matches!(
        Repository::open(Arc::new(LocalBackend::new(&repo_dir)), b"wrong"),
        Err(dedup_store::Error::WrongPassword)
    ));
}

#[test]
fn a_snapshot_naming_a_status_tree_is_refused_in_a_repository_without_status_trees() {
    let dir = tempfile::tempdir().unwrap();
    let options = dedup_store::repo::InitOptions {
        password: None,
        format_version: 2,
        // The flat kind: the default, kind 4, needs format version 4.
        chunker: dedup_store::format::ChunkerParams::FastCdc {
            min: 512 << 10,
            avg: 1 << 20,
            max: 8 << 20,
        },
        kdf: dedup_store::format::KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..dedup_store::repo::InitOptions::default()
    };
    let repo =
        Repository::init(Arc::new(LocalBackend::new(dir.path().join("repo"))), options).unwrap();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::write(src.join("f"), b"x").unwrap();
    let options = BackupOptions { paths: vec![src], host: "h".into(), ..BackupOptions::default() };
    let done = backup(&repo, &options, &(), &BackupProgress::default()).unwrap();
    assert_eq!(done.snapshot.status_tree, None);
    // §9: a snapshot of version 2 is valid in format version 3 only.
    let mut forged = done.snapshot.clone();
    forged.status_tree = Some(forged.tree);
    let id = repo.save_snapshot(&forged).unwrap();
    let err = repo.load_snapshot(&id).unwrap_err().to_string();
    assert!(err.contains("damaged") && err.contains("version 2"), "{err}");
}
