//! docs/store-format.md as a contract: `tools/store-reader/read_repo.py`, a reader written in
//! Python from the specification alone, must read what `dedup store` writes. It extracts a
//! snapshot of an awkward tree (non-UTF-8 names, hard links, a sparse file, symlinks, empty files,
//! xattrs, files around the chunk sizes, compressible and incompressible content) from encrypted
//! and unencrypted repositories of format versions 2 to 4 (packs of version 1 and 2), and again
//! after a prune that repacked, and the extraction must look as the source did. Skipped with a message when python3 or its modules
//! (blake3, pynacl, argon2-cffi, zstandard; .ci/run installs them) are missing.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::store::*;
use common::*;

/// The independent reader, in the repository's tools/.
fn reader_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/store-reader/read_repo.py")
}

/// True when python3 and every module the reader imports are present.
fn reader_available() -> bool {
    Command::new("python3")
        .args(["-c", "import blake3, nacl.bindings, argon2.low_level, zstandard"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs the reader on `repo` with the test password; its exit status and output.
fn read_repo(repo: &Path, args: &[&OsStr]) -> std::process::Output {
    Command::new("python3")
        .arg(reader_script())
        .arg(repo)
        .args(args)
        .env("DEDUP_PASSWORD", PASSWORD)
        .output()
        .expect("run python3")
}

#[track_caller]
fn read_repo_ok(repo: &Path, args: &[&OsStr]) -> String {
    let out = read_repo(repo, args);
    assert!(
        out.status.success(),
        "read_repo.py {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The awkward tree. Chunk sizes of [`init_repo`] are 16 / 64 / 256 KiB.
fn make_tree(src: &Path) {
    write(src, "empty", b"");
    mkdir(src, "empty_dir");
    write_b(src, b"caf\xe9/n\xff\xfe.txt", b"a name that is not UTF-8\n");
    write(src, "d/small", b"hello\n");
    for (i, len) in [16_383, 16_384, 16_385, 65_536, 262_144, 262_145].into_iter().enumerate() {
        write(src, &format!("sizes/{len}"), &pattern(len, i as u64 + 1));
    }
    write(src, "incompressible", &pattern(700_000, 99));
    write(src, "compressible", &b"the same line again and again\n".repeat(40_000));
    write(src, "linked", b"one inode, two names\n");
    hardlink(src, "linked", "d/also_linked");
    let sparse = fs::File::create(src.join("sparse")).unwrap();
    sparse.write_all_at(b"after the hole", 1 << 20).unwrap();
    sparse.set_len(3 << 20).unwrap();
    symlink(src, "d/small", "link");
    symlink(src, "/nowhere/\u{e9}", "dangling");
    // Not every file system under /tmp takes user xattrs; the comparison reads what is there.
    let _ = rustix::fs::setxattr(
        src.join("d/small"),
        "user.note",
        b"value",
        rustix::fs::XattrFlags::empty(),
    );
    chmod(&src.join("d/small"), 0o640);
    chmod(&src.join("incompressible"), 0o4755);
    let old = std::time::UNIX_EPOCH + std::time::Duration::new(1_500_000_000, 987_654_321);
    fs::File::open(src.join("compressible")).unwrap().set_modified(old).unwrap();
}

/// Extracts the newest snapshot with the reader and compares it with `src` as it is now.
#[track_caller]
fn assert_reader_extracts(repo: &Path, src: &Path, out: &Path, what: &str) -> String {
    let summary = read_repo_ok(repo, &["extract".as_ref(), "latest".as_ref(), out.as_os_str()]);
    assert!(summary.contains("blobs_checked="), "{what}: {summary}");
    // The snapshot mirrors the absolute path backed up (§10).
    let extracted = out.join(src.strip_prefix("/").unwrap());
    assert_looks_equal(&look(src), &look(&extracted), &format!("{what}: read_repo.py"));
    read_repo_ok(repo, &["check-packs".as_ref()]);
    summary
}

fn pack_names(repo: &Path) -> Vec<String> {
    repo_names(repo, "data")
}

/// The version byte of every pack's header (§2, §7).
fn pack_versions(repo: &Path) -> Vec<u8> {
    pack_names(repo).iter().map(|name| fs::read(repo.join(name)).unwrap()[4]).collect()
}

#[test]
fn an_independent_reader_extracts_what_dedup_wrote() {
    if !require(
        reader_available(),
        "an_independent_reader_extracts_what_dedup_wrote",
        "python3 with the modules blake3, pynacl, argon2-cffi and zstandard is needed",
    ) {
        return;
    }
    let dir = tmp();
    let src = dir.path().join("src");
    make_tree(&src);

    // Unencrypted: the key slot is still sealed (KDF 0), every other box is checksummed only.
    // Format version 2: trees of version 1, no status trees (§10, §13).
    let plain = dir.path().join("plain");
    store_ok(
        &plain,
        &[
            "init",
            "--insecure-no-encryption",
            "--format-version",
            "2",
            "--pack-size",
            "1M",
            "--chunker",
            "fastcdc:16K/64K/256K",
        ],
    );
    store_ok(&plain, &[OsStr::new("backup"), OsStr::new("-q"), src.as_os_str()]);
    let summary =
        assert_reader_extracts(&plain, &src, &dir.path().join("out-plain"), "unencrypted");
    assert!(summary.contains(" status_trees=0 "), "format version 2: {summary}");

    // Format version 3: trees of version 2, each with its status tree; packs of version 1.
    let v3 = dir.path().join("v3");
    let args = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1", "--pack-size", "1M"];
    let more = ["--chunker", "fastcdc:16K/64K/256K", "--format-version", "3"];
    store_ok(&v3, &[&args[..], &more[..]].concat());
    store_ok(&v3, &[OsStr::new("backup"), OsStr::new("-q"), src.as_os_str()]);
    let summary = assert_reader_extracts(&v3, &src, &dir.path().join("out-v3"), "version 3");
    assert!(!summary.contains(" status_trees=0 "), "format version 3: {summary}");
    assert!(
        pack_versions(&v3).iter().all(|&v| v == 1),
        "format version 3 writes packs of version 1"
    );

    // Format version 4 (the default), unencrypted: packs of version 2, not padded.
    let plain4 = dir.path().join("plain4");
    store_ok(&plain4, &["init", "--insecure-no-encryption", "--pack-size", "1M"]);
    store_ok(&plain4, &[OsStr::new("backup"), OsStr::new("-q"), src.as_os_str()]);
    assert_reader_extracts(&plain4, &src, &dir.path().join("out-plain4"), "unencrypted, 4");
    assert!(pack_versions(&plain4).iter().all(|&v| v == 2), "format version 4: packs of version 2");

    // Format version 4 (the default), encrypted: packs of version 2 padded to buckets, which
    // the reader's check-packs recomputes from §7.
    let repo = dir.path().join("repo");
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), OsStr::new("-q"), src.as_os_str()]);
    let summary = assert_reader_extracts(&repo, &src, &dir.path().join("out-1"), "encrypted");
    assert!(!summary.contains(" status_trees=0 "), "format version 4: {summary}");
    assert!(pack_versions(&repo).iter().all(|&v| v == 2), "format version 4: packs of version 2");

    // A prune that keeps nothing unused repacks the packs the second snapshot still uses.
    for gone in ["sizes/16383", "sizes/262144", "incompressible"] {
        fs::remove_file(src.join(gone)).unwrap();
    }
    write(&src, "new", b"written after the first backup\n");
    store_ok(&repo, &[OsStr::new("backup"), OsStr::new("-q"), src.as_os_str()]);
    let before = pack_names(&repo);
    store_ok(&repo, &["forget", "--keep-last", "1", "--prune", "--max-unused", "0"]);
    let after = pack_names(&repo);
    assert!(
        after.iter().any(|p| !before.contains(p)),
        "the prune wrote no new pack: {before:?} -> {after:?}"
    );
    assert_reader_extracts(&repo, &src, &dir.path().join("out-2"), "after a repacking prune");

    // The reader is not a rubber stamp: a wrong password and a damaged blob make it fail.
    let wrong = Command::new("python3")
        .arg(reader_script())
        .arg(&repo)
        .arg("list")
        .env("DEDUP_PASSWORD", "not the password")
        .output()
        .unwrap();
    assert!(!wrong.status.success(), "a wrong password opened the repository");
    let pack = repo.join(&after[0]);
    let bytes = fs::read(&pack).unwrap();
    fs::write(&pack, flip(&bytes, 8 + 30)).unwrap();
    let damaged = read_repo(&repo, &["check-packs".as_ref()]);
    assert!(!damaged.status.success(), "a damaged pack passed check-packs");
}

/// §10: a status tree that does not pair with its tree (another entry count, a status subtree
/// on an entry that is not a directory) leaves the status unknown (atime = mtime); the reader
/// extracts on, as dedup does, rather than refusing. Driven through the reader's extractor with
/// trees and status trees given in place of a repository's.
#[test]
fn the_reader_takes_an_unfit_status_tree_as_unknown_status() {
    if !require(
        reader_available(),
        "the_reader_takes_an_unfit_status_tree_as_unknown_status",
        "python3 with the modules blake3, pynacl, argon2-cffi and zstandard is needed",
    ) {
        return;
    }
    let dir = tmp();
    let script = r#"
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("read_repo", sys.argv[1])
rr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rr)
target = sys.argv[2]
def link(name):
    return {"name": name, "kind": 3, "target": b"elsewhere", "xattrs": [], "uid": 0, "gid": 0,
            "mode": 0o777, "mtime": 2_000_000_000, "atime": 2_000_000_000, "flags": 0,
            "nlink": 1, "dev": 0, "ino": 0}
class Repo:
    def tree(self, tree_id):
        return [link(b"one"), link(b"two")]
    def status_tree(self, status_id):
        # short: one entry for two; misplaced: a status subtree on a symlink
        if status_id == b"short":
            return [(1, 5, 1_000_000_000, None)]
        return [(1, 5, 1_000_000_000, None), (2, 5, 1_000_000_000, b"x" * 32)]
    def blob(self, *args):
        raise AssertionError("no data to read")
for case in (b"short", b"misplaced", b"fits"):
    out = os.path.join(target, case.decode())
    os.mkdir(out)
    ex = rr.Extractor(Repo())
    if case == b"fits":
        Repo.status_tree = lambda self, _: [(1, 5, 1_000_000_000, None), (2, 5, 1_000_000_000, None)]
    ex.extract_tree(b"t", out.encode(), case)
    atime = os.lstat(os.path.join(out, "one")).st_atime_ns
    print(case.decode(), ex.counts["status_trees"], ex.counts["status_trees_unfit"], atime)
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(reader_script())
        .arg(dir.path())
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["short 0 1 2000000000", "misplaced 0 1 2000000000", "fits 1 0 1000000000"],
        "unfit status trees are unknown status (atime = mtime); one that fits gives the atimes"
    );
}

/// §9: snapshots that `tag` and `rewrite` write record their original (versions 3 and 4, with
/// and without a status tree); the reader lists them with it and extracts the rewritten one,
/// in repositories of format versions 2 (trees of version 1) and 4.
#[test]
fn the_reader_reads_snapshots_that_record_an_original() {
    if !require(
        reader_available(),
        "the_reader_reads_snapshots_that_record_an_original",
        "python3 with the modules blake3, pynacl, argon2-cffi and zstandard is needed",
    ) {
        return;
    }
    let dir = tmp();
    let src = dir.path().join("src");
    write(&src, "keep/a", b"kept\n");
    write(&src, "drop/secret", b"left out by rewrite\n");
    for version in ["2", "4"] {
        let repo = dir.path().join(format!("v{version}"));
        let args = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"];
        store_ok(&repo, &[&args[..], &["--format-version", version]].concat());
        store_ok(&repo, &[OsStr::new("backup"), OsStr::new("-q"), src.as_os_str()]);
        store_ok(&repo, &["tag", "--add", "retagged"]);
        store_ok(&repo, &["rewrite", "--forget", "--exclude", "secret"]);
        let listed = read_repo_ok(&repo, &["list".as_ref()]);
        assert_eq!(listed.lines().count(), 1, "format {version}: {listed}");
        assert!(listed.contains(" original="), "format {version}: {listed}");
        let out = dir.path().join(format!("out{version}"));
        read_repo_ok(&repo, &["extract".as_ref(), "latest".as_ref(), out.as_os_str()]);
        let extracted = out.join(src.strip_prefix("/").unwrap());
        assert_eq!(fs::read(extracted.join("keep/a")).unwrap(), b"kept\n");
        assert!(!extracted.join("drop/secret").exists(), "format {version}: the rewrite");
    }
}
