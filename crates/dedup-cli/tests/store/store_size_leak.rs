//! What the storage learns of a file's size from the packs a backup writes (docs/store-format.md
//! §7). A backup that adds one file to a fresh repository of format version 3 writes a data pack
//! of exactly that file's stored size + 146 bytes; in format version 4 the pack is padded to a
//! bucket: 64 KiB for anything up to that, above it one of 32 sizes per doubling. Each case backs
//! up one incompressible file into a fresh repository and computes, from the specification's
//! rule alone, the length its new data pack must have; files whose sizes fall in one bucket must
//! give packs of one length, so the pack tells the file's size no more precisely than the bucket.

use crate::common;

use std::collections::BTreeSet;
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

/// §7: the padded length of a pack whose content (all but the padding) is `len` bytes.
fn padded(len: u64) -> u64 {
    let padded = bucket(len);
    if padded > len && padded - len < 40 {
        bucket(padded + 1)
    } else {
        padded
    }
}

/// A pack of version 2 holding one blob stored as is (§2, §7): header 8, the blob's box (40 bytes
/// of overhead), the trailer box (5 + one 45-byte entry + 40), the lengths box 48, the magic 4.
fn content_of_one_blob_pack(stored: u64) -> u64 {
    8 + stored + 40 + (5 + 45 + 40) + 48 + 4
}

/// A fresh repository of `version` (`None`: the default) with `--compression off`, a base
/// snapshot of one small file, then a snapshot adding one file of `size` incompressible bytes;
/// the lengths of the data packs and of the tree packs that second backup wrote.
fn new_packs_for_one_file(
    dir: &Path,
    name: &str,
    version: Option<&str>,
    size: usize,
) -> (Vec<u64>, Vec<u64>) {
    let repo = dir.join(format!("repo-{name}"));
    let src = dir.join(format!("src-{name}"));
    write(&src, "base", b"the file every snapshot has\n");
    let mut args =
        vec!["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1", "--compression", "off"];
    if let Some(version) = version {
        args.extend(["--format-version", version]);
    }
    store_ok(&repo, &args);
    backup_json(&repo, &src);
    let before: BTreeSet<String> = repo_names(&repo, "data").into_iter().collect();
    write(&src, "new", &pattern(size, size as u64));
    backup_json(&repo, &src);
    let (mut data, mut trees) = (Vec::new(), Vec::new());
    for pack in repo_names(&repo, "data").into_iter().filter(|p| !before.contains(p)) {
        let bytes = fs::read(repo.join(&pack)).unwrap();
        // The header's sub-kind (§2): 0 data, 1 trees.
        if bytes[6] == 0 {
            data.push(bytes.len() as u64)
        } else {
            trees.push(bytes.len() as u64)
        }
    }
    (data, trees)
}

#[test]
fn one_small_file_shows_only_its_bucket_in_format_4_and_its_size_in_format_3() {
    let dir = tmp();
    // Groups of sizes that §7 puts in one bucket: up to 64 KiB of pack, then two buckets above
    // it (2 KiB and 8 KiB wide there). All below the chunker's minimum, so one chunk each.
    let groups: [(&[usize], u64); 3] = [
        (&[1, 1_000, 30_000, 65_000], 65_536),
        (&[98_400, 100_100], 100_352),
        (&[296_000, 302_800], 303_104),
    ];
    for (sizes, want) in groups {
        let mut seen = BTreeSet::new();
        for &size in sizes {
            let (data, trees) =
                new_packs_for_one_file(dir.path(), &format!("4-{size}"), None, size);
            assert_eq!(data.len(), 1, "{size} bytes: one data pack, not {data:?}");
            let expected = padded(content_of_one_blob_pack(size as u64));
            assert_eq!(expected, want, "the test's own sizes: {size}");
            assert_eq!(data[0], expected, "{size} bytes: the data pack is not of its bucket");
            assert!(trees.iter().all(|&t| t == bucket(t)), "{size} bytes: tree packs {trees:?}");
            seen.insert(data[0]);
        }
        assert_eq!(seen.len(), 1, "files of {sizes:?} are told apart by their packs: {seen:?}");
    }
    // Format version 3 for contrast: the pack is the file's stored size plus 146 bytes, so every
    // size shows, the leak version 4 closes.
    for size in [1_000usize, 30_000] {
        let (data, _) = new_packs_for_one_file(dir.path(), &format!("3-{size}"), Some("3"), size);
        assert_eq!(data, [size as u64 + 146], "format version 3, {size} bytes");
    }
}

#[test]
fn a_file_of_several_chunks_is_spread_over_padded_packs() {
    let dir = tmp();
    // About six chunks of 1 MiB: spread over the open packs, each padded to a bucket; the packs
    // add up to the file to within the buckets' 3.2 %, and none is a chunk's exact size.
    let size = 6 << 20;
    let (data, trees) = new_packs_for_one_file(dir.path(), "several", None, size);
    assert!(
        !data.is_empty() && data.iter().chain(&trees).all(|&p| p == bucket(p)),
        "{data:?} {trees:?}"
    );
    let total: u64 = data.iter().sum();
    assert!(total >= size as u64 && total < size as u64 + size as u64 / 16, "{total} for {size}");
}
