//! Corruption of every kind of repository object — packs, index files, snapshots, key files and
//! the config — each flipped, truncated and deleted in a repository with a few snapshots:
//! `check` names the damaged object and, for packs, exactly the snapshots and files that lost
//! data; everything else restores byte for byte; `repair` and a new backup bring the repository
//! back to one that `check --read-data` passes; where nothing can be recovered (the config, the
//! only key), the message names the object and why, and nothing panics.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use common::store::*;
use common::*;

/// How an object is damaged.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Damage {
    /// A byte in the middle changed.
    Flip,
    /// A byte near the end changed (in a pack, its trailer: every blob is still whole).
    FlipTail,
    Truncate,
    Delete,
}

const DAMAGES: [Damage; 3] = [Damage::Flip, Damage::Truncate, Damage::Delete];

fn damage(file: &Path, how: Damage) {
    match how {
        Damage::Flip => {
            let bytes = fs::read(file).unwrap();
            fs::write(file, flip(&bytes, middle(file, bytes.len() as u64) as usize)).unwrap();
        }
        Damage::FlipTail => {
            let bytes = fs::read(file).unwrap();
            fs::write(file, flip(&bytes, bytes.len() - 30)).unwrap();
        }
        Damage::Truncate => {
            let len = fs::metadata(file).unwrap().len();
            let cut = middle(file, len);
            fs::OpenOptions::new().write(true).open(file).unwrap().set_len(cut).unwrap();
        }
        Damage::Delete => fs::remove_file(file).unwrap(),
    }
}

/// Where damage lands in `file` of `len` bytes: its middle, but in a pack 64 bytes in, in the
/// first blob's box (after 8 bytes of header and 24 of nonce) or the next, since the middle of a
/// padded pack (format version 4) may be padding, which holds nothing to lose.
fn middle(file: &Path, len: u64) -> u64 {
    let pack = file.parent().and_then(Path::parent).is_some_and(|p| p.ends_with("data"));
    if pack {
        64
    } else {
        len / 2
    }
}

/// A repository with three snapshots of a changing tree, kept pristine for copies.
struct Fixture {
    dir: tempfile::TempDir,
    src: PathBuf,
    pristine: PathBuf,
    /// Each snapshot's id, time (`time_ns` of `snapshots --json`, which a repaired copy keeps)
    /// and the tree as it was.
    versions: Vec<(String, String, BTreeMap<Vec<u8>, Seen>)>,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tmp();
        let (src, pristine) = (dir.path().join("src"), dir.path().join("pristine"));
        for d in 0..3u64 {
            for f in 0..4u64 {
                write(&src, &format!("d{d}/f{f}"), &pattern(150_000, 10 * d + f));
            }
        }
        init_repo(&pristine);
        let mut versions = Vec::new();
        for round in 0..3u64 {
            if round > 0 {
                write(&src, &format!("d{round}/f0"), &pattern(170_000, 100 + round));
                write(&src, &format!("new/g{round}"), &pattern(90_000, 200 + round));
            }
            backup_json(&pristine, &src);
            let id = snapshot_of(&pristine, &src);
            versions.push((id, String::new(), look(&src)));
        }
        let list = snapshot_list(&pristine);
        for (id, time, _) in &mut versions {
            *time = list.iter().find(|s| s["id"] == id.as_str()).unwrap()["time_ns"].to_string();
        }
        Fixture { dir, src, pristine, versions }
    }

    /// A fresh copy of the pristine repository.
    fn copy(&self, name: &str) -> PathBuf {
        let repo = self.dir.path().join(name);
        let ok = std::process::Command::new("cp")
            .arg("-a")
            .arg(&self.pristine)
            .arg(&repo)
            .status()
            .unwrap()
            .success();
        assert!(ok, "cp -a failed");
        repo
    }

    /// Path of an entry of the source in a snapshot, as `check` prints it.
    fn shown(&self, rel: &[u8]) -> String {
        let rel = String::from_utf8_lossy(rel);
        if rel.is_empty() {
            self.src.display().to_string()
        } else {
            format!("{}/{rel}", self.src.display())
        }
    }
}

fn snapshot_list(repo: &Path) -> Vec<serde_json::Value> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    list.as_array().unwrap().clone()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A restored entry in a line: what differs is seen without its bytes.
fn brief(seen: Option<&Seen>) -> String {
    match seen {
        None => "nothing".into(),
        Some(s) => format!("{} bytes, mode {:o}, mtime {}", s.data.len(), s.mode, s.mtime_ns),
    }
}

/// Asserts the run did not panic and failed with a usage-free error code.
#[track_caller]
fn assert_clean_failure(out: &Out, what: &str) {
    assert_ne!(out.code(), 0, "{what}: succeeded\n{}", out.dump());
    assert_ne!(out.code(), 101, "{what}: panicked\n{}", out.dump());
    assert!(!text(&out.stderr).contains("panicked"), "{what}: panicked\n{}", out.dump());
}

/// The (snapshot prefix, path) pairs `check` names as damaged: "dedup: error: snapshot ID:
/// /PATH: …".
fn named_paths(out: &Out) -> BTreeSet<(String, String)> {
    out.stderr_lines()
        .iter()
        .filter_map(|l| l.strip_prefix("dedup: error: snapshot "))
        .filter_map(|l| {
            let mut parts = l.splitn(3, ": ");
            let id = parts.next()?.to_string();
            let path = parts.next()?;
            path.starts_with('/').then(|| (id, path.to_string()))
        })
        .collect()
}

/// Restores snapshot `id` into `target`; the run's output.
fn restore(fx: &Fixture, repo: &Path, id: &str, target: &Path) -> Out {
    let spec = format!("{id}:{}", fx.src.display());
    store(
        repo,
        &[OsStr::new("restore"), OsStr::new(&spec), "--target".as_ref(), target.as_os_str()],
    )
}

/// Whether `path` or a directory above it is in `named`.
fn covered(named: &BTreeSet<String>, path: &str) -> bool {
    let mut at = path;
    loop {
        if named.contains(at) {
            return true;
        }
        match at.rfind('/') {
            Some(cut) if cut > 0 => at = &at[..cut],
            _ => return named.contains("/"),
        }
    }
}

/// Restores every snapshot of the fixture and asserts that exactly the files `named` (by
/// snapshot) fail to come back, and every other file comes back byte for byte.
fn assert_damage_is_exactly_named(
    fx: &Fixture,
    repo: &Path,
    named: &BTreeSet<(String, String)>,
    case: &str,
) {
    for (n, (id, _, expected)) in fx.versions.iter().enumerate() {
        let mine: BTreeSet<String> = named
            .iter()
            .filter(|(s, _)| id.starts_with(s.as_str()))
            .map(|(_, p)| p.clone())
            .collect();
        let target =
            repo.with_file_name(format!("{}-r{n}", repo.file_name().unwrap().to_string_lossy()));
        let out = restore(fx, repo, &id[..8], &target);
        assert_ne!(out.code(), 101, "{case}: restore panicked\n{}", out.dump());
        if mine.is_empty() {
            assert_eq!(out.code(), 0, "{case}: snapshot {id} is not named, yet\n{}", out.dump());
        } else {
            // 1: some files lost; 2: the restored directory itself is (its tree is damaged).
            assert!(
                matches!(out.code(), 1 | 2),
                "{case}: snapshot {id} lost files\n{}",
                out.dump()
            );
            assert!(
                text(&out.stderr).contains("damaged") || text(&out.stderr).contains("missing"),
                "{case}: restore does not say what is lost\n{}",
                out.dump()
            );
        }
        let found = if target.exists() { look(&target) } else { BTreeMap::new() };
        for (rel, seen) in expected.iter().filter(|(_, s)| s.kind == 'f') {
            let path = fx.shown(rel);
            let got = found.get(rel);
            if covered(&mine, &path) {
                assert!(
                    got.map(|g| g.data != seen.data).unwrap_or(true),
                    "{case}: check named {path} in snapshot {id} as damaged, but it restores"
                );
            } else {
                assert!(
                    got == Some(seen),
                    "{case}: {path} of snapshot {id}, not named by check, restores as {}\n\
                     named: {named:?}\nrestore: {}",
                    brief(got),
                    out.dump()
                );
            }
        }
        let _ = fs::remove_dir_all(&target);
    }
}

/// After repair: `check --read-data` passes, the latest snapshot restores the source whole, and
/// every other snapshot restores its files exactly, less those `named` as lost (repaired copies).
fn assert_healed(fx: &Fixture, repo: &Path, named: &BTreeSet<(String, String)>, case: &str) {
    let out = store(repo, &["check", "--read-data"]);
    assert_eq!(out.code(), 0, "{case}: check --read-data after repair\n{}", out.dump());
    let current = look(&fx.src);
    let target =
        repo.with_file_name(format!("{}-latest", repo.file_name().unwrap().to_string_lossy()));
    assert_restores(repo, "latest", &fx.src, &target, &current);
    for (n, snapshot) in snapshot_list(repo).iter().enumerate() {
        let id = snapshot["id"].as_str().unwrap();
        let time = snapshot["time_ns"].to_string();
        let Some((original, _, expected)) = fx.versions.iter().find(|(_, t, _)| *t == time) else {
            continue; // the new backup
        };
        // A repaired copy keeps its original's time; it may lack what check named lost there.
        let lost: BTreeSet<String> = named
            .iter()
            .filter(|(s, _)| original.starts_with(s.as_str()))
            .map(|(_, p)| p.clone())
            .collect();
        let target =
            repo.with_file_name(format!("{}-h{n}", repo.file_name().unwrap().to_string_lossy()));
        let out = restore(fx, repo, &id[..8], &target);
        let found = if out.code() == 2 && text(&out.stderr).contains("no such path") {
            // A copy whose trees above the source were all lost.
            BTreeMap::new()
        } else {
            assert_eq!(out.code(), 0, "{case}: snapshot {id} after repair\n{}", out.dump());
            look(&target)
        };
        for (rel, seen) in expected.iter().filter(|(_, s)| s.kind == 'f') {
            let path = fx.shown(rel);
            match found.get(rel) {
                Some(got) => assert!(
                    got == seen,
                    "{case}: {path} of snapshot {id} after repair restores as {}",
                    brief(Some(got))
                ),
                None => assert!(
                    covered(&lost, &path),
                    "{case}: {path} is missing from snapshot {id} after repair, yet was not lost"
                ),
            }
        }
        let _ = fs::remove_dir_all(&target);
    }
    let _ = fs::remove_dir_all(&target);
}

/// The repair sequence a user runs after `check` reported damage, then a new backup.
fn repair_and_back_up(fx: &Fixture, repo: &Path, case: &str) {
    for args in [&["repair", "index", "--read-data"][..], &["repair", "snapshots", "--forget"][..]]
    {
        let out = store(repo, args);
        assert_ne!(out.code(), 101, "{case}: {args:?} panicked\n{}", out.dump());
        assert!(matches!(out.code(), 0 | 1), "{case}: {args:?}\n{}", out.dump());
    }
    backup_json(repo, &fx.src);
}

/// The packs of `kind` (0 data, 1 trees), by name.
fn packs_of_kind(repo: &Path, kind: u8) -> Vec<String> {
    repo_names(repo, "data")
        .into_iter()
        .filter(|name| fs::read(repo.join(name)).unwrap()[6] == kind)
        .collect()
}

#[test]
fn damaged_packs_are_named_with_the_files_they_hold_and_heal() {
    let fx = Fixture::new();
    for (kind, kind_name) in [(0u8, "data"), (1, "tree")] {
        for how in [Damage::Flip, Damage::FlipTail, Damage::Truncate, Damage::Delete] {
            let case = format!("{kind_name} pack {how:?}");
            let repo = fx.copy(&format!("{kind_name}-{how:?}"));
            // The pack of this kind with the most bytes: it holds files of several snapshots.
            let victim = packs_of_kind(&repo, kind)
                .into_iter()
                .max_by_key(|name| fs::metadata(repo.join(name)).unwrap().len())
                .expect("a pack of the kind");
            damage(&repo.join(&victim), how);

            let out = store(&repo, &["check", "--read-data"]);
            assert_clean_failure(&out, &case);
            let stderr = text(&out.stderr);
            assert!(stderr.contains(&victim), "{case}: check did not name {victim}\n{stderr}");
            if matches!(how, Damage::Truncate | Damage::Delete) {
                // Missing or short: the listing shows it without reading the data.
                let quick = store(&repo, &["check"]);
                assert_clean_failure(&quick, &case);
                assert!(text(&quick.stderr).contains(&victim), "{case}\n{}", quick.dump());
            }
            let named = named_paths(&out);
            // A damaged trailer loses no blob: nothing but the pack is named, all restores. Nor
            // does a flipped byte that lands in a status tree (format 3, §10): check names the
            // snapshots whose status trees it held instead (Truncate and Delete still lose trees).
            let status_only =
                how == Damage::Flip && kind == 1 && stderr.contains(": status trees: ");
            if status_only {
                // Only status trees: every snapshot line is about them, none names a tree (a
                // path, or the count past the ones named).
                let trees_named = out.stderr_lines().into_iter().any(|l| {
                    l.starts_with("dedup: error: snapshot ") && !l.contains(": status trees: ")
                });
                assert!(!trees_named, "{case}: a tree was reported damaged too\n{stderr}");
            }
            assert_eq!(
                named.is_empty(),
                how == Damage::FlipTail || status_only,
                "{case}: the files named are not those lost\n{stderr}"
            );
            assert_damage_is_exactly_named(&fx, &repo, &named, &case);

            repair_and_back_up(&fx, &repo, &case);
            assert_healed(&fx, &repo, &named, &case);
            fs::remove_dir_all(&repo).unwrap();
        }
    }
}

#[test]
fn damaged_index_files_are_named_and_rebuilt_without_loss() {
    let fx = Fixture::new();
    for how in DAMAGES {
        let case = format!("index file {how:?}");
        let repo = fx.copy(&format!("index-{how:?}"));
        // The first backup's index file: the other two snapshots depend on its packs too.
        let victim = repo_names(&repo, "index")
            .into_iter()
            .max_by_key(|name| fs::metadata(repo.join(name)).unwrap().len())
            .unwrap();
        damage(&repo.join(&victim), how);

        let out = store(&repo, &["check"]);
        assert_clean_failure(&out, &case);
        let stderr = text(&out.stderr);
        if how != Damage::Delete {
            assert!(stderr.contains(&victim), "{case}: check did not name {victim}\n{stderr}");
        }
        // Every pack the lost index file listed is named as unindexed, with its remedy.
        assert!(stderr.contains("repair index"), "{case}: no remedy given\n{stderr}");
        // Whatever restores before the repair restores exactly.
        for (n, (id, _, expected)) in fx.versions.iter().enumerate() {
            let target = fx.dir.path().join(format!("index-{how:?}-r{n}"));
            let out = restore(&fx, &repo, &id[..8], &target);
            assert_ne!(out.code(), 101, "{case}\n{}", out.dump());
            // A file restore reports as incomplete is not taken for the original (its times
            // are not set); every other file restores exactly.
            let found = if target.exists() { look(&target) } else { BTreeMap::new() };
            let complaints = text(&out.stderr);
            for (rel, seen) in found.iter().filter(|(_, s)| s.kind == 'f') {
                let want = &expected[rel];
                if complaints.contains(&format!("{}/{}", target.display(), text(rel))) {
                    assert_ne!(want.mtime_ns, seen.mtime_ns, "{case}: {rel:?} passes as whole");
                } else {
                    assert!(want == seen, "{case}: {rel:?} restored wrong, not reported");
                }
            }
        }

        // No data was lost: the index is rebuilt from the packs and every snapshot restores whole.
        store_ok(&repo, &["repair", "index"]);
        let out = store(&repo, &["check", "--read-data"]);
        assert_eq!(out.code(), 0, "{case}: after repair index\n{}", out.dump());
        for (n, (id, _, expected)) in fx.versions.iter().enumerate() {
            let target = fx.dir.path().join(format!("index-{how:?}-h{n}"));
            assert_restores(&repo, &id[..8], &fx.src, &target, expected);
        }
        backup_json(&repo, &fx.src);
        store_ok(&repo, &["check", "--read-data"]);
    }
}

#[test]
fn damaged_snapshot_files_are_named_and_the_others_restore() {
    let fx = Fixture::new();
    for how in DAMAGES {
        let case = format!("snapshot file {how:?}");
        let repo = fx.copy(&format!("snapshot-{how:?}"));
        let (middle, _, _) = &fx.versions[1];
        let victim = format!("snapshots/{middle}");
        damage(&repo.join(&victim), how);

        let out = store(&repo, &["check"]);
        if how == Damage::Delete {
            // A deleted snapshot is a forgotten one: its blobs are garbage for prune.
            assert_eq!(out.code(), 0, "{case}\n{}", out.dump());
        } else {
            assert_clean_failure(&out, &case);
            assert!(text(&out.stderr).contains(&victim), "{case}: not named\n{}", out.dump());
        }
        for (n, (id, _, expected)) in fx.versions.iter().enumerate().filter(|(n, _)| *n != 1) {
            let target = fx.dir.path().join(format!("snapshot-{how:?}-r{n}"));
            assert_restores(&repo, &id[..8], &fx.src, &target, expected);
        }
        let lost = restore(&fx, &repo, &middle[..8], &fx.dir.path().join(format!("s-{how:?}")));
        assert_clean_failure(&lost, &case);
        assert!(text(&lost.stderr).contains(&middle[..8]), "{case}\n{}", lost.dump());

        repair_and_back_up(&fx, &repo, &case);
        assert!(!repo.join(&victim).exists(), "{case}: repair snapshots --forget left {victim}");
        store_ok(&repo, &["prune"]);
        assert_healed(&fx, &repo, &BTreeSet::new(), &case);
    }
}

/// `dedup store` with the password `password`.
fn store_with(repo: &Path, password: &str, args: &[&str]) -> Out {
    run(store_cmd(repo).env("DEDUP_PASSWORD", password).args(args))
}

#[test]
fn damaged_key_files_are_named_and_another_key_still_opens() {
    let fx = Fixture::new();
    let second = "battery staple";
    let out = run(store_cmd(&fx.pristine).env("DEDUP_NEW_PASSWORD", second).args(["key", "add"]));
    out.assert_code(0);
    let keys = repo_names(&fx.pristine, "keys");
    assert_eq!(keys.len(), 2);
    // Which slot each password opens: the first password's is the one `key list` marks current.
    let listed = store_ok(&fx.pristine, &["key", "list"]);
    let first_slot = keys
        .iter()
        .find(|k| listed.lines().any(|l| l.contains('*') && l.contains(&k[5..13])))
        .unwrap_or_else(|| panic!("no current key in\n{listed}"))
        .clone();
    let second_slot = keys.iter().find(|k| **k != first_slot).unwrap().clone();

    for how in DAMAGES {
        for (victim, survivor_password) in [(&first_slot, second), (&second_slot, PASSWORD)] {
            let case = format!("key {victim} {how:?}");
            let repo = fx.copy(&format!("key-{how:?}-{}", &victim[5..13]));
            damage(&repo.join(victim), how);
            if victim == &first_slot {
                // Its password opens nothing now; the message says why.
                let out = store_with(&repo, PASSWORD, &["snapshots"]);
                assert_clean_failure(&out, &case);
                let stderr = text(&out.stderr);
                assert!(
                    stderr.contains("wrong password")
                        || stderr.contains("opens with this password"),
                    "{case}\n{stderr}"
                );
                if how != Damage::Delete {
                    assert!(stderr.contains(victim.as_str()), "{case}: not named\n{stderr}");
                }
            }
            let out = store_with(&repo, survivor_password, &["check"]);
            if how == Damage::Delete {
                assert_eq!(out.code(), 0, "{case}\n{}", out.dump());
                continue;
            }
            assert_clean_failure(&out, &case);
            assert!(text(&out.stderr).contains(victim.as_str()), "{case}\n{}", out.dump());
            for (n, (id, _, expected)) in fx.versions.iter().enumerate() {
                let target = fx.dir.path().join(format!("key-{how:?}-{}-{n}", &victim[5..13]));
                let spec = format!("{}:{}", &id[..8], fx.src.display());
                let out = store_with(
                    &repo,
                    survivor_password,
                    &["restore", &spec, "--target", target.to_str().unwrap()],
                );
                out.assert_code(0);
                assert_looks_equal(expected, &look(&target), &case);
            }
            // The damaged slot is removed with the key that still opens; then all is well.
            let listed = store_with(&repo, survivor_password, &["key", "list"]);
            assert_ne!(listed.code(), 101, "{case}\n{}", listed.dump());
            let out = store_with(&repo, survivor_password, &["key", "remove", &victim[5..17]]);
            assert_eq!(out.code(), 0, "{case}: key remove of the damaged slot\n{}", out.dump());
            let out = store_with(&repo, survivor_password, &["check", "--read-data"]);
            assert_eq!(out.code(), 0, "{case}\n{}", out.dump());
        }
    }

    // The only key damaged: nothing opens, and the message names the key file and why.
    for how in DAMAGES {
        let case = format!("only key {how:?}");
        let repo = fx.copy(&format!("only-key-{how:?}"));
        fs::remove_file(repo.join(&second_slot)).unwrap();
        damage(&repo.join(&first_slot), how);
        let out = store(&repo, &["snapshots"]);
        assert_clean_failure(&out, &case);
        let stderr = text(&out.stderr);
        if how == Damage::Delete {
            assert!(stderr.contains("no key file"), "{case}\n{stderr}");
        } else {
            assert!(
                stderr.contains(first_slot.as_str()) && stderr.contains("damaged"),
                "{case}: the key file and its damage are not named\n{stderr}"
            );
        }
    }
}

#[test]
fn a_damaged_config_is_a_precise_error() {
    let fx = Fixture::new();
    for how in DAMAGES {
        let case = format!("config {how:?}");
        let repo = fx.copy(&format!("config-{how:?}"));
        damage(&repo.join("config"), how);
        for args in [&["snapshots"][..], &["check"][..], &["backup", fx.src.to_str().unwrap()][..]]
        {
            let out = store(&repo, args);
            assert_clean_failure(&out, &format!("{case}: {args:?}"));
            let stderr = text(&out.stderr);
            assert!(stderr.contains("config"), "{case}: {args:?}: config not named\n{stderr}");
            let why = match how {
                Damage::Delete => "missing",
                _ => "damaged",
            };
            assert!(stderr.contains(why), "{case}: {args:?}: no reason ({why})\n{stderr}");
            assert!(!stderr.contains("wrong password"), "{case}: blames the password\n{stderr}");
        }
        // Nothing was written into the repository it could not open.
        let before = repo_files(&fx.pristine).into_keys().collect::<BTreeSet<_>>();
        let after = repo_files(&repo).into_keys().collect::<BTreeSet<_>>();
        let mut expected = before.clone();
        if how == Damage::Delete {
            expected.remove("config");
        }
        assert_eq!(after, expected, "{case}: files changed");
    }
}

#[test]
fn latest_is_refused_while_a_snapshot_cannot_be_read_and_an_id_still_restores() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "a", b"the first night");
    init_repo(&repo);
    store_ok(&repo, &["backup", src.to_str().unwrap()]);
    let older = snapshot_of(&repo, &src);
    write(&src, "a", b"the second night, newer");
    store_ok(&repo, &["backup", src.to_str().unwrap()]);
    let newest = repo_names(&repo, "snapshots").into_iter().find(|n| !n.contains(&older));
    let newest = newest.expect("two snapshots");
    damage(&repo.join(&newest), Damage::Flip);
    let newest = newest.strip_prefix("snapshots/").unwrap();

    let target = dir.path().join("target");
    let t = target.to_str().unwrap();
    let out = store(&repo, &["restore", "latest", "--target", t]);
    out.assert_code(2);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("latest") && said.contains(newest), "{}", out.dump());
    assert!(!target.exists(), "older data was restored as the latest");
    for args in [&["ls", "latest"][..], &["dump", "latest", "/x"][..]] {
        store(&repo, args).assert_code(2);
    }

    store_ok(&repo, &["restore", &older, "--target", t]);
    let restored = target.join(src.strip_prefix("/").unwrap()).join("a");
    assert_eq!(fs::read(restored).unwrap(), b"the first night");
}
