//! Holes: a sparse file whose data islands sit inside large chunks restores allocating about what
//! its source did, not whole chunks of zeros; `dump -o FILE` writes it the same way, under a
//! temporary name renamed over FILE (a symlink there is replaced, never written through).

use crate::common;

use std::fs;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use common::store::*;
use common::*;

/// Bytes a file occupies on disk.
fn allocated(path: &Path) -> u64 {
    fs::symlink_metadata(path).unwrap().blocks() * 512
}

/// 256 MiB with 64 islands of 4 KiB of data, one every 4 MiB at page-aligned offsets that are
/// not chunk boundaries: each island lands inside a chunk of 512 KiB or more.
fn sparse_source(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let file = fs::File::create(path).unwrap();
    file.set_len(256 << 20).unwrap();
    let islands: Vec<(u64, Vec<u8>)> =
        (0..64u64).map(|i| ((i << 22) + (1 + i % 7) * 4096 * 13, pattern(4096, i + 1))).collect();
    for (at, data) in &islands {
        file.write_all_at(data, *at).unwrap();
    }
    islands
}

/// Asserts `path` holds exactly the islands and zeros elsewhere, and allocates little.
#[track_caller]
fn assert_sparse_copy(path: &Path, islands: &[(u64, Vec<u8>)], what: &str) {
    let meta = fs::symlink_metadata(path).unwrap();
    assert!(meta.is_file(), "{what}: not a regular file");
    assert_eq!(meta.len(), 256 << 20, "{what}");
    let found = allocated(path);
    assert!(found <= 2 << 20, "{what}: {found} bytes allocated for 256 KiB of data");
    let file = fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 1 << 22];
    let mut next = islands.iter().peekable();
    for block in 0..64u64 {
        file.read_exact_at(&mut buf, block << 22).unwrap();
        let mut expected = vec![0u8; 1 << 22];
        while let Some((at, data)) = next.next_if(|(at, _)| at >> 22 == block) {
            let from = (at - (block << 22)) as usize;
            expected[from..from + data.len()].copy_from_slice(data);
        }
        assert!(buf == expected, "{what}: block {block} differs");
    }
}

#[test]
fn a_sparse_file_restores_sparse_and_dump_to_a_file_does_too() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    let islands = sparse_source(&src.join("sparse"));
    assert!(allocated(&src.join("sparse")) <= 1 << 20, "the source itself is not sparse here");
    // The default chunker (chunks of 512 KiB to 8 MiB): a chunk holding an island is mostly
    // zeros.
    store_ok(&repo, &["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"]);
    backup_json(&repo, &src);

    let target = dir.path().join("target");
    let spec = format!("latest:{}", src.display());
    store_ok(&repo, &["restore", &spec, "--target", target.to_str().unwrap(), "--verify"]);
    assert_sparse_copy(&target.join("sparse"), &islands, "restore");

    let file = format!("{}/sparse", src.display());
    let out = dir.path().join("dumped");
    store_ok(&repo, &["dump", "latest", &file, "-o", out.to_str().unwrap()]);
    assert_sparse_copy(&out, &islands, "dump -o");

    // Over a symlink: the link is replaced, what it points to is left alone.
    let victim = dir.path().join("victim");
    fs::write(&victim, b"not to be overwritten").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    store_ok(&repo, &["dump", "latest", &file, "-o", link.to_str().unwrap()]);
    assert_sparse_copy(&link, &islands, "dump -o over a symlink");
    assert_eq!(fs::read(&victim).unwrap(), b"not to be overwritten");
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(
        names.iter().all(|n| !n.to_string_lossy().starts_with(".dedup-")),
        "a temporary file was left: {names:?}"
    );
}
