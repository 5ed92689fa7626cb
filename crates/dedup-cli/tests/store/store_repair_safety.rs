//! Repair that only repairs (issue 35): `repair index` never deletes a pack while a blob in it
//! may still authenticate (a damaged header hides nothing; a pack whose blobs cannot be located
//! stays), and `init` refuses a location that holds any file of a repository.

use crate::common;

use std::fs;
use std::path::Path;

use common::act::contents;
use common::store::*;
use common::*;

/// A tree of a few files over several 1 MiB packs.
fn tree(root: &Path) {
    for d in 0..2u64 {
        fs::create_dir_all(root.join(format!("d{d}"))).unwrap();
        for f in 0..4u64 {
            fs::write(root.join(format!("d{d}/f{f}")), pattern(200_000, 10 * d + f)).unwrap();
        }
    }
}

/// A repository holding one backup of `tree`; returns (repository, source).
fn backed_up(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (repo, src) = (dir.join("repo"), dir.join("src"));
    tree(&src);
    init_repo(&repo);
    backup_json(&repo, &src);
    (repo, src)
}

/// The largest pack of data blobs (sub-kind 0 in byte 6 of its header).
fn a_data_pack(repo: &Path) -> String {
    repo_names(repo, "data")
        .into_iter()
        .filter(|name| fs::read(repo.join(name)).unwrap()[6] == 0)
        .max_by_key(|name| fs::metadata(repo.join(name)).unwrap().len())
        .expect("a data pack")
}

/// Removes every index file: the index is lost, the packs must tell.
fn lose_the_index(repo: &Path) {
    for name in repo_names(repo, "index") {
        fs::remove_file(repo.join(name)).unwrap();
    }
}

/// Restores the newest snapshot and compares it with `src`.
fn assert_latest_restores(repo: &Path, src: &Path, target: &Path) {
    store_ok(repo, &["restore", "latest", "--target", target.to_str().unwrap()]);
    let restored = target.join(src.strip_prefix("/").unwrap());
    assert_eq!(contents(&restored), contents(src), "the snapshot restores exactly");
}

#[test]
fn a_flipped_reserved_header_byte_and_a_lost_index_lose_nothing() {
    let dir = tmp();
    let (repo, src) = backed_up(dir.path());
    let pack = a_data_pack(&repo);
    let mut bytes = fs::read(repo.join(&pack)).unwrap();
    bytes[7] ^= 0x01;
    fs::write(repo.join(&pack), &bytes).unwrap();
    lose_the_index(&repo);

    let out = store(&repo, &["repair", "index"]);
    out.assert_code(0);
    let line = out
        .stderr_lines()
        .into_iter()
        .find(|l| l.contains(&pack))
        .unwrap_or_else(|| panic!("the pack is not named\n{}", out.dump()));
    assert!(line.contains("header byte 7 (reserved) is 0x01, not 0x00"), "{line}");
    assert!(line.contains(", 0 lost") && line.ends_with("the pack is deleted"), "{line}");
    assert!(!line.contains(": 0 blob(s) copied"), "{line}");
    assert!(!repo.join(&pack).exists(), "every blob of it is stored elsewhere: it goes");
    store_ok(&repo, &["check", "--read-data"]);
    assert_latest_restores(&repo, &src, &dir.path().join("restored"));
}

#[test]
fn a_pack_whose_blobs_cannot_be_located_stays_where_it_is() {
    let dir = tmp();
    let (repo, _src) = backed_up(dir.path());
    let pack = a_data_pack(&repo);
    let mut bytes = fs::read(repo.join(&pack)).unwrap();
    // Inside the trailer box: no trailer, and with the index lost nothing else says where the
    // blobs are, though every one of them is intact.
    let at = bytes.len() - 8 - 20;
    bytes[at] ^= 0x01;
    fs::write(repo.join(&pack), &bytes).unwrap();
    lose_the_index(&repo);

    let out = store(&repo, &["repair", "index"]);
    out.assert_code(1);
    let named = out.stderr_lines().into_iter().any(|l| {
        l.starts_with(&format!("dedup: {pack}: damaged"))
            && l.contains("its blobs cannot be located")
            && l.ends_with("(left in place, not indexed)")
    });
    assert!(named, "{}", out.dump());
    assert_eq!(fs::read(repo.join(&pack)).unwrap(), bytes, "the pack is left as it was");
}

#[test]
fn a_damaged_trailer_of_an_indexed_pack_is_salvaged_from_the_index_and_nothing_is_lost() {
    let dir = tmp();
    let (repo, src) = backed_up(dir.path());
    let pack = a_data_pack(&repo);
    let mut bytes = fs::read(repo.join(&pack)).unwrap();
    let at = bytes.len() - 8 - 20;
    bytes[at] ^= 0x01;
    fs::write(repo.join(&pack), &bytes).unwrap();

    let out = store(&repo, &["repair", "index"]);
    out.assert_code(0);
    let line = out.stderr_lines().into_iter().find(|l| l.contains(&pack)).unwrap();
    assert!(line.contains(", 0 lost") && line.ends_with("the pack is deleted"), "{line}");
    store_ok(&repo, &["check", "--read-data"]);
    assert_latest_restores(&repo, &src, &dir.path().join("restored"));
}

#[test]
fn init_refuses_a_location_holding_part_of_a_repository_and_changes_nothing() {
    let dir = tmp();
    let (repo, src) = backed_up(dir.path());
    let config = fs::read(repo.join("config")).unwrap();
    fs::remove_file(repo.join("config")).unwrap();
    let before = repo_files(&repo);

    let out = store(&repo, &["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"]);
    out.assert_code(2);
    out.assert_message("error", "holds part of a repository (keys/ (1 file(s)), snapshots/ (1");
    out.assert_message("error", "no config: nothing was written");
    assert!(repo_files(&repo) == before, "a refused init changed the location");

    // The lost config put back, the old password opens everything again.
    fs::write(repo.join("config"), config).unwrap();
    assert_latest_restores(&repo, &src, &dir.path().join("restored"));
}

#[test]
fn a_pack_that_cannot_be_read_keeps_its_index_entries() {
    let test = "a_pack_that_cannot_be_read_keeps_its_index_entries";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tmp();
    let (repo, src) = backed_up(dir.path());
    let pack = a_data_pack(&repo);
    // Nobody repairs a repository of his in which one pack is root's alone: reading it fails
    // with an I/O error, which is no sign of damage.
    std::process::Command::new("chown").args(["-R", "65534:65534"]).arg(&repo).status().unwrap();
    std::os::unix::fs::chown(repo.join(&pack), Some(0), Some(0)).unwrap();
    let closed = <fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
    fs::set_permissions(repo.join(&pack), closed).unwrap();
    let mut up = Some(repo.as_path());
    while let Some(d) = up.filter(|d| d.starts_with(dir.path())) {
        let open = <fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
        fs::set_permissions(d, open).unwrap();
        up = d.parent();
    }

    let out = store_as_nobody(&repo, &["repair", "index"]);
    out.assert_code(1);
    let named = out.stderr_lines().into_iter().any(|l| {
        l.contains(&pack) && l.contains("Permission denied") && l.contains("stays indexed")
    });
    assert!(named, "{}", out.dump());
    assert!(repo.join(&pack).exists());
    // Read again by root, everything restores: the pack's blobs never left the index.
    store_ok(&repo, &["check", "--read-data"]);
    assert_latest_restores(&repo, &src, &dir.path().join("restored"));
}
