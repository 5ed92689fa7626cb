//! `dedup store` against whoever controls the storage (docs/store-format.md, "Threat model"):
//! a repository substituted under the user's password, planted key slots, a repository whose id
//! or key changed since the client last used it, snapshots deleted or put back behind the
//! client's back, and the small doors: private modes whatever the umask, empty passwords, weak
//! key settings, S3 without credentials or over plain HTTP.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::store::*;
use common::*;
use dedup_store::backend::{Backend, LocalBackend};
use dedup_store::crypto::keys::{self, MasterKey};
use dedup_store::crypto::Sealer;
use dedup_store::format::{Config, Header, Kdf, KdfParams, Magic};
use dedup_store::id::Id;
use dedup_store::repo::Repository;

/// `dedup store -r REPO` for a client whose state is in `state`.
fn client(repo: &Path, state: &Path) -> assert_cmd::Command {
    let mut c = store_cmd(repo);
    c.env("XDG_STATE_HOME", state);
    c
}

fn run_client<S: AsRef<OsStr>>(repo: &Path, state: &Path, args: &[S]) -> Out {
    run(client(repo, state).args(args))
}

/// Asserts that `out` is a refusal (exit 2) whose message holds every fragment.
#[track_caller]
fn assert_refused(out: &Out, fragments: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.code, Some(2), "{}", out.dump());
    for fragment in fragments {
        assert!(stderr.contains(fragment), "no {fragment:?} in: {stderr}");
    }
}

/// A tree of a few files, and an encrypted repository holding one snapshot of it.
fn backed_up(dir: &Path) -> (PathBuf, PathBuf) {
    let (src, repo) = (dir.join("src"), dir.join("repo"));
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("secret.txt"), b"the user's own words, never in clear").unwrap();
    fs::write(src.join("big"), pattern(200_000, 4)).unwrap();
    init_repo(&repo);
    backup_json(&repo, &src);
    (src, repo)
}

/// Copies every file of the folder `from` (relative to `source`) into `target`'s, replacing.
fn copy_folder(source: &Path, target: &Path, from: &str) {
    for entry in fs::read_dir(source.join(from)).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), target.join(from).join(entry.file_name())).unwrap();
    }
}

/// The repository's config as its own key opens it.
fn config_of(repo: &Path) -> Config {
    let backend = Arc::new(LocalBackend::new(repo));
    Repository::open(backend, PASSWORD.as_bytes()).unwrap().config().clone()
}

/// Writes a key slot of `kdf` wrapping `master` (opened by `password`); returns its id.
fn plant_slot(repo: &Path, master: &MasterKey, kdf: Kdf, password: &[u8]) -> Id {
    let cheap = KdfParams { memory_kib: 64, iterations: 1, lanes: 1 };
    let slot = keys::wrap(master, kdf, cheap, password, "x@y".into(), 0).unwrap().encode();
    let id = Id::of_file(&slot);
    LocalBackend::new(repo).put(&format!("keys/{id}"), &slot).unwrap();
    id
}

/// Replaces the repository's config by `config` sealed (encrypted) under `master`.
fn replace_config(repo: &Path, master: &MasterKey, config: &Config) {
    let header = Header { magic: Magic::Config, encrypted: true, sub_kind: 0 }.encode();
    let mut sealed = header.to_vec();
    Sealer::from_secret(&master.derive().data, true).seal_into(
        &header,
        &config.encode(),
        &mut sealed,
    );
    fs::write(repo.join("config"), sealed).unwrap();
}

/// Removes every key slot of the repository but `keep`.
fn remove_slots_but(repo: &Path, keep: &[Id]) {
    for slot in repo_names(repo, "keys") {
        if !keep.iter().any(|id| slot == format!("keys/{id}")) {
            fs::remove_file(repo.join(slot)).unwrap();
        }
    }
}

/// The three commands the issue names, each refused with `fragments` in its message, and the
/// repository left as it was.
#[track_caller]
fn assert_all_refused(repo: &Path, state: Option<&Path>, src: &Path, fragments: &[&str]) {
    let before = repo_files(repo);
    let target = repo.with_extension("restored");
    let commands: [Vec<&OsStr>; 3] = [
        vec!["backup".as_ref(), src.as_os_str()],
        vec!["snapshots".as_ref()],
        vec!["restore".as_ref(), "latest".as_ref(), "--target".as_ref(), target.as_os_str()],
    ];
    for args in commands {
        let out = match state {
            Some(state) => run_client(repo, state, &args),
            None => store(repo, &args),
        };
        assert_refused(&out, fragments);
    }
    assert!(repo_files(repo) == before, "a refused command changed the repository");
    assert!(!target.exists(), "a refused restore wrote into its target");
}

/// The reproduction: the config and key file of an `--insecure-no-encryption`
/// repository copied into an encrypted one. Before the fix the next backup with the user's
/// password exited 0 and wrote the new files' contents in clear into `data/`.
#[test]
fn a_repository_substituted_by_an_unencrypted_one_is_refused() {
    let dir = tmp();
    let (src, repo) = backed_up(dir.path());
    let plain = dir.path().join("plain");
    store_ok(&plain, &["init", "--insecure-no-encryption"]);
    fs::copy(plain.join("config"), repo.join("config")).unwrap();
    copy_folder(&plain, &repo, "keys");
    fs::write(src.join("new.txt"), b"written after the substitution").unwrap();
    assert_all_refused(&repo, None, &src, &["config", "replaced"]);

    // With the user's key file gone too, no key takes the password: refused since this client
    // knows the repository encrypted, and by a client that never used it since a password is
    // given.
    for slot in repo_names(&repo, "keys") {
        if !plain.join(&slot).exists() {
            fs::remove_file(repo.join(slot)).unwrap();
        }
    }
    assert_all_refused(&repo, None, &src, &["was encrypted when this client last used it"]);
    let stranger = dir.path().join("stranger-state");
    assert_all_refused(&repo, Some(&stranger), &src, &["a password was given"]);
    let data: Vec<u8> = repo_files(&repo)
        .into_iter()
        .filter(|(n, _)| n.starts_with("data/"))
        .flat_map(|f| f.1)
        .collect();
    assert!(
        !data.windows(14).any(|w| w == b"written after "),
        "the new file's contents reached the storage in clear"
    );
}

/// A key slot that takes no password (KDF 0) planted beside the user's, wrapping a key the
/// attacker chose, and the config replaced by one sealed (encrypted) under that key.
#[test]
fn a_planted_passwordless_slot_with_a_substituted_config_is_refused() {
    let dir = tmp();
    let (src, repo) = backed_up(dir.path());
    let attacker = MasterKey::generate();
    let planted = plant_slot(&repo, &attacker, Kdf::None, b"");
    replace_config(&repo, &attacker, &config_of(&repo));
    assert_all_refused(
        &repo,
        None,
        &src,
        &["config", "does not open with the master key", "replaced"],
    );

    // The planted slot alone: refused before and after accepting a change, since a key that
    // takes no password never opens a config whose header says encrypted.
    remove_slots_but(&repo, &[planted]);
    assert_all_refused(&repo, None, &src, &["was encrypted when this client last used it"]);
    let out = store(&repo, &["--accept-repository-change", "snapshots"]);
    assert_refused(&out, &["header says the repository is encrypted", "takes no"]);
}

/// A planted password-less slot beside an intact config is never used, and is named by
/// `check` and `key list`.
#[test]
fn a_planted_passwordless_slot_is_ignored_and_named() {
    let dir = tmp();
    let (_, repo) = backed_up(dir.path());
    let planted = plant_slot(&repo, &MasterKey::generate(), Kdf::None, b"");
    let out = store(&repo, &["snapshots"]);
    out.assert_code(0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("keys/{planted}: a key without a password")), "{stderr}");
    let listed = store_ok(&repo, &["key", "list"]);
    assert!(listed.contains("no password: never used here"), "{listed}");
    let checked = store(&repo, &["check"]);
    checked.assert_code(1);
    assert!(String::from_utf8_lossy(&checked.stderr).contains("takes no password"));
    store_ok(&repo, &["key", "remove", &planted.short(8)]);
    let out = store(&repo, &["check"]);
    out.assert_code(0);
}

/// The location now holds another repository (a new id), or the same id under another key:
/// refused, naming the change and the option that accepts it; accepted once, remembered.
#[test]
fn a_repository_whose_id_or_key_changed_since_last_use_is_refused() {
    let dir = tmp();
    let (src, repo) = backed_up(dir.path());
    let state = dir.path().join("state");
    run_client(&repo, &state, &["snapshots"]).assert_code(0);
    let old_id = config_of(&repo).id;

    // Another repository at the same place, made by some other client, same password.
    fs::rename(&repo, dir.path().join("repo.old")).unwrap();
    run_client(
        &repo,
        &dir.path().join("elsewhere"),
        &["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"],
    )
    .assert_code(0);
    let out = run_client(&repo, &state, &["snapshots"]);
    assert_refused(
        &out,
        &["its repository id changed from", &old_id.short(16), "--accept-repository-change"],
    );
    let out = run_client(&repo, &state, &["--accept-repository-change", "snapshots"]);
    out.assert_code(0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("accepted as asked"));
    run_client(&repo, &state, &["snapshots"]).assert_code(0);

    // The same repository id under a new master key (the config sealed again under it, and a
    // key slot with the same password): refused as a changed key.
    let config = config_of(&repo);
    let master = MasterKey::generate();
    remove_slots_but(&repo, &[]);
    plant_slot(&repo, &master, Kdf::Argon2id, PASSWORD.as_bytes());
    replace_config(&repo, &master, &config);
    let out = run_client(&repo, &state, &[OsStr::new("backup"), src.as_os_str()]);
    assert_refused(&out, &["its master key changed", "--accept-repository-change"]);
    // A client that knows the repository only at another location compares by id too.
    let moved = dir.path().join("moved");
    fs::rename(&repo, &moved).unwrap();
    let out = run_client(&moved, &state, &["snapshots"]);
    assert_refused(&out, &["its master key changed"]);
}

/// Snapshots deleted behind the client's back, or put back after being deleted, are warned
/// about once; the client's own `forget` is no news.
#[test]
fn snapshots_deleted_or_put_back_behind_the_clients_back_are_warned_about() {
    let dir = tmp();
    let (src, repo) = backed_up(dir.path());
    for n in 0..2 {
        fs::write(src.join(format!("more-{n}")), pattern(1000, n)).unwrap();
        backup_json(&repo, &src);
    }
    let ids: Vec<String> = repo_names(&repo, "snapshots");
    assert_eq!(ids.len(), 3);
    let warnings = |out: &Out| -> String {
        out.assert_code(0);
        String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.contains("warning")).collect()
    };
    assert_eq!(warnings(&store(&repo, &["snapshots"])), "", "nothing happened");

    let kept = fs::read(repo.join(&ids[0])).unwrap();
    fs::remove_file(repo.join(&ids[0])).unwrap();
    let said = warnings(&store(&repo, &["snapshots"]));
    assert!(said.contains("1 snapshot(s) present when this client last looked are gone"), "{said}");
    assert!(said.contains(&ids[0]["snapshots/".len()..][..8]), "{said}");
    assert_eq!(warnings(&store(&repo, &["snapshots"])), "", "said once");

    store_ok(&repo, &["forget", &ids[1]["snapshots/".len()..][..8]]);
    assert_eq!(warnings(&store(&repo, &["snapshots"])), "", "the client's own forget");

    fs::write(repo.join(&ids[0]), kept).unwrap();
    let said = warnings(&store(&repo, &["snapshots"]));
    assert!(said.contains("1 snapshot(s) deleted earlier are back"), "{said}");
    assert_eq!(warnings(&store(&repo, &["snapshots"])), "", "said once");
}

/// Every file and directory of a local repository, and the client's state, are private
/// (0600 / 0700) even under a umask that takes nothing away.
#[test]
fn repository_and_state_files_are_private_whatever_the_umask() {
    let dir = tmp();
    let (src, repo, state) =
        (dir.path().join("src"), dir.path().join("repo"), dir.path().join("state"));
    fs::create_dir(&src).unwrap();
    fs::write(src.join("f"), pattern(100_000, 1)).unwrap();
    let under_umask_0 = |args: &[&OsStr]| {
        run(store_cmd_under_umask_0(&repo).args(args).env("XDG_STATE_HOME", &state))
    };
    let init = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"].map(OsStr::new);
    under_umask_0(&init).assert_code(0);
    under_umask_0(&["backup".as_ref(), src.as_os_str()]).assert_code(0);
    let seen = assert_private(&repo) + assert_private(&state);
    assert!(seen >= 6, "config, key, pack, index, snapshot, the state's record: {seen} files");
}

/// issue 35, item 14: an empty new password is refused by init, key add and key passwd.
#[test]
fn an_empty_password_is_refused() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    let out =
        run(store_cmd(&repo).env("DEDUP_PASSWORD", "").args(["init", "--kdf-memory-kib", "64"]));
    assert_refused(&out, &["password is empty"]);
    assert!(!repo.join("config").exists());
    init_repo(&repo);
    for action in ["add", "passwd"] {
        let out = run(store_cmd(&repo).env("DEDUP_NEW_PASSWORD", "").args(["key", action]));
        assert_refused(&out, &["password is empty"]);
    }
    assert_eq!(repo_names(&repo, "keys").len(), 1);
}

/// The hidden argon2 options keep to the caps, and outside tests to a floor.
#[test]
fn weak_or_absurd_key_settings_are_refused() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    let weak = ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"];
    let out = run(store_cmd(&repo).env_remove("DEDUP_TEST_ALLOW_WEAK_KDF").args(weak));
    assert_refused(&out, &["too weak"]);
    let absurd = ["init", "--kdf-memory-kib", "4194304", "--kdf-iterations", "1"];
    assert_refused(&store(&repo, &absurd), &["memory above 2 GiB"]);
    assert!(!repo.exists());
    // OWASP's minimum is taken.
    let floor = ["init", "--kdf-memory-kib", "19456", "--kdf-iterations", "2", "--kdf-lanes", "1"];
    run(store_cmd(&repo).env_remove("DEDUP_TEST_ALLOW_WEAK_KDF").args(floor)).assert_code(0);
}

/// issue 35, item 16, and plain HTTP: S3 without credentials names the variables to set; an
/// `s3:http://` location off this machine is warned about unless --insecure-http. (No request
/// leaves the machine: signing fails before one is sent.)
#[test]
fn s3_without_credentials_names_the_variables_and_plain_http_is_warned_about() {
    let dir = tmp();
    let s3 = |location: &str, extra: &[&str]| {
        let mut c = store_cmd(Path::new(location));
        for name in
            ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"]
        {
            c.env_remove(name);
        }
        c.env("HOME", dir.path()).env("AWS_CONFIG_FILE", dir.path().join("none"));
        c.env("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"));
        run(c.args(extra).arg("snapshots"))
    };
    let out = s3("s3:http://127.0.0.1:9/bucket", &[]);
    assert_refused(&out, &["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("plain HTTP"), "loopback is quiet");
    let out = s3("s3:http://0.0.0.0:9/bucket", &[]);
    assert_refused(&out, &["plain HTTP", "AWS_ACCESS_KEY_ID"]);
    let out = s3("s3:http://0.0.0.0:9/bucket", &["--insecure-http"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("plain HTTP"), "{}", out.dump());
}
