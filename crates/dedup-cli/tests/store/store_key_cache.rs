//! The client's key cache (docs/store-format.md, "The client's key cache"): a second open takes
//! the master key from the cache instead of running the password KDF, yet a wrong password is
//! still refused, a cache file edited, made readable to others or outlived by its key slot is
//! never used, and `--no-key-cache` leaves it alone. Each test keeps its cache in a directory of
//! its own, and `-v` says where the key came from.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::store::*;
use common::*;

const FROM_CACHE: &str = "from this client's key cache";
const DERIVED: &str = "derived from the password";

/// `dedup store -r REPO -v <args>` with the password `password` and the cache under `cache`.
fn open_with(repo: &Path, cache: &Path, password: &str, args: &[&str]) -> Out {
    run(store_cmd(repo)
        .env("XDG_CACHE_HOME", cache)
        .env("DEDUP_PASSWORD", password)
        .arg("-v")
        .args(args))
}

fn stderr(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Lists the snapshots with the test password; asserts success and where the key came from.
#[track_caller]
fn assert_key_from(repo: &Path, cache: &Path, expected: &str) -> String {
    let out = open_with(repo, cache, PASSWORD, &["snapshots"]);
    out.assert_code(0);
    let err = stderr(&out);
    assert!(err.contains(expected), "expected {expected:?}: {}", out.dump());
    err
}

/// A repository and an empty cache directory, the repository opened once (so the key is kept).
fn cached(dir: &Path) -> (PathBuf, PathBuf) {
    let (repo, cache) = (dir.join("repo"), dir.join("cache"));
    init_repo(&repo);
    assert_key_from(&repo, &cache, DERIVED);
    (repo, cache)
}

/// The one cache file of `cache`.
fn cache_file(cache: &Path) -> PathBuf {
    let keys = cache.join("dedup/keys");
    let files: Vec<PathBuf> = fs::read_dir(&keys)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "CACHEDIR.TAG")
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

#[test]
fn a_second_open_takes_the_key_from_the_cache_kept_privately() {
    let dir = tmp();
    let (repo, cache) = cached(dir.path());
    assert_key_from(&repo, &cache, FROM_CACHE);
    assert_eq!(assert_private(&cache.join("dedup")), 2, "the cached key and CACHEDIR.TAG");
    // --no-key-cache neither reads nor writes it.
    let before = fs::read(cache_file(&cache)).unwrap();
    let out = open_with(&repo, &cache, PASSWORD, &["--no-key-cache", "snapshots"]);
    out.assert_code(0);
    assert!(stderr(&out).contains(DERIVED), "{}", out.dump());
    assert_eq!(fs::read(cache_file(&cache)).unwrap(), before);
    let fresh = dir.path().join("fresh-cache");
    let out = open_with(&repo, &fresh, PASSWORD, &["--no-key-cache", "snapshots"]);
    out.assert_code(0);
    assert!(!fresh.exists(), "--no-key-cache wrote a cache");
}

#[test]
fn a_wrong_password_is_refused_with_a_cache() {
    let dir = tmp();
    let (repo, cache) = cached(dir.path());
    let out = open_with(&repo, &cache, "not the password", &["snapshots"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("wrong password"), "{}", out.dump());
    assert_key_from(&repo, &cache, FROM_CACHE);
}

#[test]
fn an_edited_cache_file_is_never_used() {
    let dir = tmp();
    let (repo, cache) = cached(dir.path());
    let path = cache_file(&cache);
    let bytes = fs::read(&path).unwrap();
    // A byte of the label (which names the slot and the location), and one of the wrapped key.
    for at in [60, bytes.len() - 5] {
        fs::write(&path, flip(&bytes, at)).unwrap();
        assert_key_from(&repo, &cache, DERIVED);
        // The open kept the key anew, and the next one takes it.
        assert_key_from(&repo, &cache, FROM_CACHE);
    }
    // Not a key file at all: named, not used.
    fs::write(&path, b"nonsense").unwrap();
    let err = assert_key_from(&repo, &cache, DERIVED);
    assert!(err.contains("key cache") && err.contains("ignored"), "{err}");
}

#[test]
fn the_cache_of_another_repository_does_not_open_this_one() {
    let dir = tmp();
    let (repo, cache) = cached(dir.path());
    let other = dir.path().join("other");
    init_repo(&other);
    // The other repository's cache file under this one's name: another location's label.
    let other_cache = dir.path().join("other-cache");
    assert_key_from(&other, &other_cache, DERIVED);
    fs::copy(cache_file(&other_cache), cache_file(&cache)).unwrap();
    let err = assert_key_from(&repo, &cache, DERIVED);
    assert!(err.contains("another location"), "{err}");
}

#[test]
fn a_cache_file_others_can_read_is_ignored_with_a_warning() {
    let dir = tmp();
    let (repo, cache) = cached(dir.path());
    let path = cache_file(&cache);
    chmod(&path, 0o644);
    let err = assert_key_from(&repo, &cache, DERIVED);
    assert!(err.contains("warning: key cache") && err.contains("mode 644"), "{err}");
    // Replaced by a private one.
    assert_private(&cache.join("dedup"));
    assert_key_from(&repo, &cache, FROM_CACHE);
    // A link in its place is not followed.
    let elsewhere = dir.path().join("elsewhere");
    fs::rename(&path, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let err = assert_key_from(&repo, &cache, DERIVED);
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn a_changed_password_or_a_removed_slot_retires_the_cached_key() {
    let dir = tmp();
    let (repo, cache) = cached(dir.path());
    // The password changed by this client: the old one opens nothing, from the cache or not.
    let out = run(store_cmd(&repo)
        .env("XDG_CACHE_HOME", &cache)
        .env("DEDUP_NEW_PASSWORD", "second password")
        .args(["key", "passwd"]));
    out.assert_code(0);
    let out = open_with(&repo, &cache, PASSWORD, &["snapshots"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("wrong password"), "{}", out.dump());
    let out = open_with(&repo, &cache, "second password", &["snapshots"]);
    out.assert_code(0);
    assert!(stderr(&out).contains(DERIVED), "{}", out.dump());

    // The slot of a cached key removed behind this client's back (by another client, or by
    // hand): the cached key is not used, though the password still opens it.
    let out = run(store_cmd(&repo)
        .env("XDG_CACHE_HOME", dir.path().join("other-client"))
        .env("DEDUP_PASSWORD", "second password")
        .env("DEDUP_NEW_PASSWORD", "third password")
        .args(["key", "add"]));
    out.assert_code(0);
    let out = open_with(&repo, &cache, "third password", &["snapshots"]);
    out.assert_code(0);
    assert!(stderr(&out).contains(DERIVED), "{}", out.dump());
    let third = String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|line| line.strip_prefix("dedup: key ")?.split(':').next().map(String::from))
        .unwrap();
    let removed: Vec<String> =
        repo_names(&repo, "keys").into_iter().filter(|name| name.contains(&third)).collect();
    assert_eq!(removed.len(), 1, "{removed:?}");
    fs::remove_file(repo.join(&removed[0])).unwrap();
    let out = open_with(&repo, &cache, "third password", &["snapshots"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("wrong password"), "{}", out.dump());
    assert!(!cache_file_exists(&cache), "the retired key is removed");
}

fn cache_file_exists(cache: &Path) -> bool {
    fs::read_dir(cache.join("dedup/keys"))
        .unwrap()
        .any(|e| e.unwrap().file_name() != "CACHEDIR.TAG")
}
