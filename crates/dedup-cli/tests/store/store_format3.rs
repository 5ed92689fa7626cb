//! Repository format version 3 (docs/store-format.md §10, §13): copies of a directory share
//! their tree blob; status trees keep the unchanged-file check working, survive a prune, and a
//! damaged one is damage that `check` names and that costs a backup only reads; a repository of
//! format version 2 keeps its trees and its unchanged backups.

use crate::common;

use std::fs;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use common::store::*;
use common::*;

/// Creates a repository like [`init_repo`] with `--format-version V` (the default when `None`).
#[track_caller]
fn init_version(repo: &Path, version: Option<&str>) {
    let mut args = vec!["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"];
    args.extend(["--pack-size", "1M", "--chunker", "fastcdc:16K/64K/256K"]);
    if let Some(version) = version {
        args.extend(["--format-version", version]);
    }
    store_ok(repo, &args);
}

/// A directory of `files` small files with long names, and a subdirectory, its times an hour
/// old, so that a backup right after can prove them unchanged (the racy-timestamp guard).
fn listing(root: &Path, files: usize) {
    fs::create_dir_all(root.join("sub")).unwrap();
    for i in 0..files {
        let name = format!("a-file-with-a-rather-long-name-{i:04}.txt");
        fs::write(root.join(&name), format!("content {i}\n")).unwrap();
        fs::write(root.join("sub").join(name), format!("below {i}\n")).unwrap();
    }
}

fn stats(repo: &Path) -> serde_json::Value {
    serde_json::from_str(&store_ok(repo, &["stats", "--json"])).unwrap()
}

fn number(value: &serde_json::Value, key: &str) -> u64 {
    value[key].as_u64().unwrap_or_else(|| panic!("no {key} in {value}"))
}

/// Waits out the racy-timestamp guard (1 s) after the source's last change.
fn settle() {
    std::thread::sleep(Duration::from_millis(1_200));
}

#[test]
fn copies_of_a_directory_share_their_trees_in_version_3_and_not_in_version_2() {
    let dir = tmp();
    let growth = |version: &str| {
        let src = dir.path().join(format!("src-{version}"));
        listing(&src.join("a"), 60);
        let (one, two) =
            (dir.path().join(format!("one-{version}")), dir.path().join(format!("two-{version}")));
        init_version(&one, Some(version));
        backup_json(&one, &src);
        // A copy has other inodes and ctimes: only its status differs.
        let copied = std::process::Command::new("cp")
            .args(["-a", "--", "a", "b"])
            .current_dir(&src)
            .status()
            .unwrap();
        assert!(copied.success());
        init_version(&two, Some(version));
        backup_json(&two, &src);
        let restored = dir.path().join(format!("restored-{version}"));
        assert_restores(&two, "latest", &src, &restored);
        let (a, b) = (stats(&one), stats(&two));
        (number(&b, "tree_bytes") - number(&a, "tree_bytes"), number(&b, "tree_blobs"))
    };
    let (grown_2, trees_2) = growth("2");
    let (grown_3, trees_3) = growth("3");
    // Version 2: the copy's two trees again, whole. Version 3: its two status trees (a few bytes
    // an entry) and one more entry in the parent's tree and status tree.
    assert!(grown_3 * 4 < grown_2, "version 3 grew by {grown_3} B, version 2 by {grown_2} B");
    // Trees of / … src, a and a/sub, and in version 3 a status tree for each and for the copy's.
    assert!(trees_3 < 2 * trees_2, "{trees_3} tree blobs in version 3, {trees_2} in version 2");
}

/// Restores `snapshot` into `target` and compares it with `src` (contents, modes, links).
#[track_caller]
fn assert_restores(repo: &Path, snapshot: &str, src: &Path, target: &Path) {
    let out = store(
        repo,
        &["restore".as_ref(), snapshot.as_ref(), "--target".as_ref(), target.as_os_str()],
    );
    out.assert_code(0);
    let restored = target.join(src.strip_prefix("/").unwrap());
    assert_eq!(look(&restored), look(src), "{}", out.dump());
}

#[test]
fn hard_links_restore_as_links_and_an_unchanged_backup_reads_nothing_in_version_3() {
    let dir = quiet_tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    listing(&src, 10);
    fs::hard_link(src.join("sub/a-file-with-a-rather-long-name-0001.txt"), src.join("linked"))
        .unwrap();
    // An atime of its own, which only the status tree keeps.
    let (atime, mtime) = (
        UNIX_EPOCH + Duration::from_secs(1_000_000_000),
        UNIX_EPOCH + Duration::from_secs(1_100_000_000),
    );
    let times = fs::FileTimes::new().set_accessed(atime).set_modified(mtime);
    fs::File::options().write(true).open(src.join("linked")).unwrap().set_times(times).unwrap();
    init_version(&repo, None);
    settle();
    let mut above = Ancestors::of(&src);
    backup_json(&repo, &src);
    let again = above.still_backup(|| backup_json(&repo, &src));
    assert_eq!(
        (again["files_unchanged"].as_u64(), again["bytes_read"].as_u64()),
        (Some(21), Some(0)),
        "{again}"
    );
    assert_eq!(
        again["bytes_added"].as_u64(),
        Some(0),
        "an unchanged backup stored something: {again}"
    );
    let target = dir.path().join("restored");
    assert_restores(&repo, "latest", &src, &target);
    let restored = target.join(src.strip_prefix("/").unwrap());
    use std::os::unix::fs::MetadataExt;
    let (a, b) = (
        fs::metadata(restored.join("linked")).unwrap(),
        fs::metadata(restored.join("sub/a-file-with-a-rather-long-name-0001.txt")).unwrap(),
    );
    assert_eq!((a.ino(), a.nlink()), (b.ino(), 2), "the hard link was not restored as a link");
    // Read before anything reads the file (reading an atime older than the mtime updates it).
    let fresh = dir.path().join("fresh");
    store_ok(
        &repo,
        &["restore".as_ref(), "latest".as_ref(), "--target".as_ref(), fresh.as_os_str()],
    );
    let restored = fresh.join(src.strip_prefix("/").unwrap()).join("linked");
    let got = fs::metadata(restored).unwrap().accessed().unwrap();
    assert_eq!(got, atime, "the atime was not restored from the status tree");
}

#[test]
fn a_version_2_repository_keeps_its_trees_and_its_unchanged_backups() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    listing(&src, 5);
    init_version(&repo, Some("2"));
    settle();
    backup_json(&repo, &src);
    let again = backup_json(&repo, &src);
    assert_eq!(
        (again["files_unchanged"].as_u64(), again["bytes_read"].as_u64()),
        (Some(10), Some(0)),
        "{again}"
    );
    // The config says version 2 in its first plaintext byte; unencrypted repositories show it.
    let plain = dir.path().join("plain");
    store_ok(&plain, &["init", "--insecure-no-encryption", "--format-version", "2"]);
    // After the header (8 bytes) and the unencrypted box's zero nonce (24).
    assert_eq!(fs::read(plain.join("config")).unwrap()[32], 2, "the config is not of version 2");
    let plain3 = dir.path().join("plain3");
    store_ok(&plain3, &["init", "--insecure-no-encryption", "--format-version", "3"]);
    assert_eq!(fs::read(plain3.join("config")).unwrap()[32], 3, "not of version 3");
    let plain4 = dir.path().join("plain4");
    store_ok(&plain4, &["init", "--insecure-no-encryption"]);
    assert_eq!(
        fs::read(plain4.join("config")).unwrap()[32],
        4,
        "a new repository is not of version 4"
    );
    // Its trees are of version 1 (§10): no tree blob of version 2, no status tree.
    let open = dir.path().join("open");
    let args = ["init", "--insecure-no-encryption", "--compression", "off", "--format-version"];
    store_ok(&open, &[&args[..], &["2"]].concat());
    backup_json(&open, &src);
    let versions = tree_blob_versions(&open);
    assert!(!versions.is_empty() && versions.iter().all(|v| *v == 1), "{versions:?}");
    let out = store(&plain, &["init", "--insecure-no-encryption", "--format-version", "5"]);
    assert_ne!(out.code, Some(0), "--format-version 5 was taken");
    // The version asked for, whatever the chunker (a version-2 config may hold any kind, §13),
    // and never below what the chunker needs.
    for chunker in ["fixed:65536", "fastcdc-normalised"] {
        let at = dir.path().join(chunker.replace(':', "-"));
        let args = ["init", "--insecure-no-encryption", "--format-version", "2", "--chunker"];
        store_ok(&at, &[&args[..], &[chunker]].concat());
        assert_eq!(fs::read(at.join("config")).unwrap()[32], 2, "{chunker}: not of version 2");
    }
    let flat_in_1 = dir.path().join("flat-in-1");
    let out = store(&flat_in_1, &["init", "--insecure-no-encryption", "--format-version", "1"]);
    assert_ne!(out.code, Some(0), "--format-version 1 was taken for the flat chunker");
    assert_restores(&repo, "latest", &src, &dir.path().join("restored"));
    store_ok(&repo, &["check"]);
}

#[test]
fn prune_keeps_the_status_trees_of_kept_snapshots() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    listing(&src, 20);
    init_version(&repo, None);
    settle();
    backup_json(&repo, &src);
    // A second snapshot whose trees and status trees differ: one file more, one file less.
    fs::remove_file(src.join("a-file-with-a-rather-long-name-0003.txt")).unwrap();
    fs::write(src.join("sub/new"), "new\n").unwrap();
    settle();
    backup_json(&repo, &src);
    let first = snapshot_ids(&repo)[0].clone();
    store_ok(&repo, &["forget", &first[..8]]);
    store_ok(&repo, &["prune", "--max-unused", "0"]);
    let out = store(&repo, &["check", "--read-data"]);
    out.assert_code(0);
    assert!(out.stderr_lines().is_empty(), "check found something:\n{}", out.dump());
    let again = backup_json(&repo, &src);
    assert_eq!(
        (again["files_unchanged"].as_u64(), again["bytes_read"].as_u64()),
        (Some(40), Some(0)),
        "{again}"
    );
}

fn snapshot_ids(repo: &Path) -> Vec<String> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    list.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
}

/// The packs under `data/`.
fn packs(repo: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for shard in fs::read_dir(repo.join("data")).unwrap() {
        for pack in fs::read_dir(shard.unwrap().path()).unwrap() {
            out.push(pack.unwrap().path());
        }
    }
    out.sort();
    out
}

/// Where, in the unencrypted pack `bytes`, each blob's plaintext begins, with whether it is
/// stored as is (compression 0), read from the pack's trailer as docs/store-format.md §2, §7 say.
fn blobs_in(bytes: &[u8]) -> Vec<(bool, usize)> {
    let le32 = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[bytes.len() - 4..], b"DDPT");
    // Version 1: the trailer's length, then the magic. Version 2 (format version 4): the
    // lengths box (24-byte nonce, trailer and padding lengths, 16-byte tag), then the magic.
    let trailer_end = match bytes[4] {
        1 => bytes.len() - 8,
        _ => bytes.len() - 52 - le32(bytes.len() - 52 + 24 + 4),
    };
    let trailer_len =
        if bytes[4] == 1 { le32(bytes.len() - 8) } else { le32(bytes.len() - 52 + 24) };
    // The box: a 24-byte nonce, the plaintext, a 16-byte tag.
    let trailer = &bytes[trailer_end - trailer_len + 24..trailer_end - 16];
    let count = u32::from_le_bytes(trailer[1..5].try_into().unwrap()) as usize;
    (0..count)
        .map(|i| {
            let entry = &trailer[5 + i * 45..5 + (i + 1) * 45];
            let (compression, offset) =
                (entry[32], u32::from_le_bytes(entry[33..37].try_into().unwrap()));
            (compression == 0, offset as usize + 24)
        })
        .collect()
}

/// Where, in the unencrypted pack `bytes`, the stored-as-is status trees of `entries` entries
/// begin (their plaintext).
fn status_trees_in(bytes: &[u8], entries: u32) -> Vec<usize> {
    blobs_in(bytes)
        .into_iter()
        .filter(|&(as_is, plain)| {
            let count = u32::from_le_bytes(bytes[plain + 1..plain + 5].try_into().unwrap());
            as_is && bytes[plain] == 0x81 && count == entries
        })
        .map(|(_, plain)| plain)
        .collect()
}

/// The first plaintext byte (the version) of every tree blob of the unencrypted, uncompressed
/// repository `repo`.
fn tree_blob_versions(repo: &Path) -> Vec<u8> {
    let mut versions = Vec::new();
    for pack in packs(repo) {
        let bytes = fs::read(&pack).unwrap();
        // The pack header's kind byte: 1 for trees.
        if bytes[6] == 1 {
            for (as_is, plain) in blobs_in(&bytes) {
                assert!(as_is, "a compressed tree blob in {}", pack.display());
                versions.push(bytes[plain]);
            }
        }
    }
    versions
}

#[test]
fn a_file_changed_in_one_of_two_copies_sharing_a_tree_is_read_again_and_restored_apart() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    listing(&src.join("a"), 6);
    let copied =
        std::process::Command::new("cp").args(["-a", "--", "a", "b"]).current_dir(&src).status();
    assert!(copied.unwrap().success());
    store_ok(&repo, &["init", "--insecure-no-encryption", "--compression", "off"]);
    settle();
    backup_json(&repo, &src);
    // The copies share their trees: / … src, a (= b), a/sub (= b/sub).
    let depth = src.components().count() as u64;
    let trees = tree_blob_versions(&repo).iter().filter(|v| **v == 2).count() as u64;
    assert_eq!(trees, depth + 2, "the copies do not share their tree blobs");
    // Same size and mtime in one copy only: only its status (ctime) tells it apart.
    let changed = src.join("b/sub/a-file-with-a-rather-long-name-0003.txt");
    let mtime = fs::metadata(&changed).unwrap().modified().unwrap();
    fs::write(&changed, "BELOW 3\n").unwrap();
    fs::File::options().write(true).open(&changed).unwrap().set_modified(mtime).unwrap();
    settle();
    let second = backup_json(&repo, &src);
    assert_eq!(
        (second["files_changed"].as_u64(), second["files_unchanged"].as_u64()),
        (Some(1), Some(23)),
        "{second}"
    );
    let target = dir.path().join("restored");
    assert_restores(&repo, "latest", &src, &target);
    let restored = target.join(src.strip_prefix("/").unwrap());
    let name = "sub/a-file-with-a-rather-long-name-0003.txt";
    assert_eq!(fs::read_to_string(restored.join("a").join(name)).unwrap(), "below 3\n");
    assert_eq!(fs::read_to_string(restored.join("b").join(name)).unwrap(), "BELOW 3\n");
}

#[test]
fn a_damaged_status_tree_is_damage_for_check_and_only_reads_for_a_backup() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    listing(&src, 8);
    // Blobs as they are, so that the test finds a status tree by its bytes.
    store_ok(&repo, &["init", "--insecure-no-encryption", "--compression", "off"]);
    settle();
    backup_json(&repo, &src);
    let before = packs(&repo);
    // Setting a file's mtime to what it is changes only its ctime: the second snapshot has new
    // status trees for its directory and those above.
    let touched = src.join("sub/a-file-with-a-rather-long-name-0002.txt");
    let mtime = fs::metadata(&touched).unwrap().modified().unwrap();
    fs::File::options().write(true).open(&touched).unwrap().set_modified(mtime).unwrap();
    settle();
    let second = backup_json(&repo, &src);
    assert_eq!(second["files_changed"].as_u64(), Some(1), "{second}");
    // The status tree of `sub` (8 entries) in the pack of trees the second backup wrote.
    let new: Vec<_> = packs(&repo).into_iter().filter(|p| !before.contains(p)).collect();
    let mut damaged = 0;
    for pack in new {
        let mut bytes = fs::read(&pack).unwrap();
        if bytes[6] != 1 {
            continue;
        }
        for at in status_trees_in(&bytes, 8) {
            bytes[at + 6] ^= 0x40;
            damaged += 1;
        }
        fs::write(&pack, bytes).unwrap();
    }
    assert_eq!(damaged, 1, "expected one status tree of 8 entries among the new trees");

    let out = store(&repo, &["check"]);
    assert_ne!(out.code, Some(0), "check passed a damaged status tree:\n{}", out.dump());
    let latest = snapshot_ids(&repo).pop().unwrap();
    assert!(
        out.dump().contains(&format!("snapshot {}: status trees: ", &latest[..8])),
        "check did not name the snapshot and its status tree:\n{}",
        out.dump()
    );
    // Its trees are whole: it restores; the next backup reads the files of `sub` again (its
    // status is lost), proves the others unchanged, and succeeds.
    assert_restores(&repo, &latest[..8], &src, &dir.path().join("restored"));
    let first = snapshot_ids(&repo)[0].clone();
    let third = backup_json(&repo, &src);
    let third_id = third["snapshot"].as_str().unwrap().to_string();
    assert_eq!(
        (third["files_unchanged"].as_u64(), third["files_changed"].as_u64()),
        (Some(8), Some(8)),
        "{third}"
    );
    // The third snapshot's status tree of `sub` has the bytes of the damaged one, so it is that
    // blob (a session does not store a second copy, docs/store-format.md §10): prune keeps it
    // with a warning instead of failing until every snapshot naming it is gone.
    let out = store(&repo, &["prune", "--max-unused", "0"]);
    out.assert_code(0);
    assert!(out.dump().contains("warning: status tree "), "{}", out.dump());

    // repair snapshots writes a copy whose other status trees stay, after which check is clean
    // and a backup from the copy reads only the files of `sub` again.
    store_ok(&repo, &["repair", "snapshots", "--forget"]);
    store_ok(&repo, &["check"]);
    let repaired = snapshot_ids(&repo)
        .into_iter()
        .find(|id| !id.starts_with(&third_id[..8]) && !id.starts_with(&first[..8]))
        .expect("the repaired copy");
    let fourth = store(
        &repo,
        &[
            "backup".as_ref(),
            "--json".as_ref(),
            "--parent".as_ref(),
            repaired[..8].as_ref(),
            src.as_os_str(),
        ],
    );
    fourth.assert_code(0);
    let fourth: serde_json::Value = serde_json::from_slice(&fourth.stdout).unwrap();
    assert_eq!(
        (fourth["files_unchanged"].as_u64(), fourth["files_changed"].as_u64()),
        (Some(8), Some(8)),
        "{fourth}"
    );
    store_ok(&repo, &["check"]);
    store_ok(&repo, &["prune"]);
}
