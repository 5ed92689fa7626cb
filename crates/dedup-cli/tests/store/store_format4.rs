//! Repository format version 4 (docs/store-format.md §5, §7, §13): the default at init, with
//! chunker kind 4 and packs of version 2; every older version is still created on request, keeps
//! its chunker and its packs of version 1 through backups and prunes, and restores; a prune of a
//! version-4 repository writes padded packs; a padded pack cut short in its padding, where no
//! blob is lost, is still named by a `check` that reads no data.

use crate::common;

use std::fs;
use std::path::Path;

use common::store::*;
use common::*;

/// §7: the bucket of a pack of `len` bytes.
fn bucket(len: u64) -> u64 {
    if len <= 65_536 {
        return 65_536;
    }
    let step = 1u64 << (len.ilog2() - 5);
    len.div_ceil(step) * step
}

/// Each pack's header version byte and length.
fn packs(repo: &Path) -> Vec<(u8, u64)> {
    repo_names(repo, "data")
        .iter()
        .map(|name| {
            let bytes = fs::read(repo.join(name)).unwrap();
            (bytes[4], bytes.len() as u64)
        })
        .collect()
}

fn tree(src: &Path, round: u64) {
    for i in 0..6u64 {
        write(src, &format!("d{}/f{i}", i % 2), &pattern(40_000 + 9_000 * i as usize, i + round));
    }
    write(src, "small", format!("round {round}\n").as_bytes());
}

#[test]
fn every_format_version_is_created_on_request_and_keeps_its_chunker_and_packs() {
    let dir = tmp();
    // (version asked, chunker, the config's version and chunker kind, the packs' version)
    let cases = [
        (Some("1"), "fastcdc-normalised:16K/64K/256K", 1u8, 1u8, 1u8),
        (Some("2"), "fastcdc:16K/64K/256K", 2, 3, 1),
        (Some("3"), "fastcdc:16K/64K/256K", 3, 3, 1),
        (Some("4"), "fastcdc-flat:16K/64K/256K", 4, 3, 2),
        (None, "fastcdc:16K/64K/256K", 4, 4, 2),
    ];
    for (asked, chunker, version, kind, pack_version) in cases {
        let case = format!("{asked:?} {chunker}");
        let (repo, src) =
            (dir.path().join(format!("repo-{asked:?}-{kind}")), dir.path().join("src"));
        let _ = fs::remove_dir_all(&src);
        let mut args =
            vec!["init", "--insecure-no-encryption", "--pack-size", "1M", "--chunker", chunker];
        if let Some(asked) = asked {
            args.extend(["--format-version", asked]);
        }
        store_ok(&repo, &args);
        // Unencrypted, the config's plaintext follows the header (8) and the zero nonce (24):
        // version, repository id (32), created (8), chunker kind.
        let config = fs::read(repo.join("config")).unwrap();
        assert_eq!((config[32], config[32 + 1 + 32 + 8]), (version, kind), "{case}: config");
        tree(&src, 1);
        backup_json(&repo, &src);
        tree(&src, 2);
        backup_json(&repo, &src);
        store_ok(&repo, &["forget", "--keep-last", "1", "--prune", "--max-unused", "0"]);
        let versions: Vec<u8> = packs(&repo).iter().map(|&(v, _)| v).collect();
        assert!(versions.iter().all(|&v| v == pack_version), "{case}: packs {versions:?}");
        store_ok(&repo, &["check", "--read-data"]);
        let out = dir.path().join(format!("out-{asked:?}-{kind}"));
        assert_restores(&repo, "latest", &src, &out, &look(&src));
    }
}

#[test]
fn a_prune_of_a_version_4_repository_writes_padded_packs() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    init_repo(&repo);
    tree(&src, 1);
    backup_json(&repo, &src);
    let before: Vec<String> = repo_names(&repo, "data");
    tree(&src, 2);
    backup_json(&repo, &src);
    store_ok(&repo, &["forget", "--keep-last", "1", "--prune", "--max-unused", "0"]);
    let after = repo_names(&repo, "data");
    assert!(after.iter().any(|p| !before.contains(p)), "the prune wrote no pack");
    for (version, len) in packs(&repo) {
        assert_eq!((version, len), (2, bucket(len)), "a pack of another version or size");
    }
    store_ok(&repo, &["check", "--read-data"]);
    assert_restores(&repo, "latest", &src, &dir.path().join("out"), &look(&src));
}

#[test]
fn a_padded_pack_cut_in_its_padding_is_named_by_a_check_that_reads_no_data() {
    let dir = tmp();
    let (repo, src) = (dir.path().join("repo"), dir.path().join("src"));
    init_repo(&repo);
    write(&src, "small", b"a few bytes in a pack of 64 KiB\n");
    backup_json(&repo, &src);
    store_ok(&repo, &["check"]);
    // Every pack is 64 KiB, nearly all padding: the cut loses no blob, and the index, which
    // knows only where blobs end, cannot show it.
    let victim = repo_names(&repo, "data").remove(0);
    let path = repo.join(&victim);
    assert_eq!(fs::metadata(&path).unwrap().len(), 65_536);
    fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(65_536 - 1_000).unwrap();
    let out = store(&repo, &["check"]);
    assert_eq!(out.code, Some(1), "{}", out.dump());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&victim) && stderr.contains("not the size of a padded pack"),
        "{stderr}"
    );
    let out = store(&repo, &["check", "--read-data"]);
    assert_eq!(out.code, Some(1), "{}", out.dump());
    // The blobs are whole: everything restores.
    assert_restores(&repo, "latest", &src, &dir.path().join("out"), &look(&src));
}
