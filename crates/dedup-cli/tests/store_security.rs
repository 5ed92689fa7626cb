//! `dedup store` against whoever controls the storage (docs/store-format.md, "Threat model"):
//! a repository substituted under the user's password, planted key slots, a repository whose id
//! or key changed since the client last used it, snapshots deleted or put back behind the
//! client's back, and the small doors: private modes whatever the umask, empty passwords, weak
//! key settings, S3 without credentials or over plain HTTP.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::store::*;
use common::*;
use dedup_store::backend::{Backend, LocalBackend};
use dedup_store::crypto::Sealer;
use dedup_store::format::{Header, Kdf, KdfParams, Magic};
use dedup_store::id::Id;
use dedup_store::keys::{self, MasterKey};
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

/// The issue's reproduction: the config and key file of an `--insecure-no-encryption`
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
    let backend = LocalBackend::new(&repo);
    let config = Repository::open(Arc::new(LocalBackend::new(&repo)), PASSWORD.as_bytes())
        .unwrap()
        .config()
        .clone();
    let attacker = MasterKey::generate();
    let slot = keys::wrap(&attacker, Kdf::None, KdfParams::default(), b"", "x@y".into(), 0)
        .unwrap()
        .encode();
    let planted = Id::of_file(&slot);
    backend.put(&format!("keys/{planted}"), &slot).unwrap();
    let header = Header { magic: Magic::Config, encrypted: true, sub_kind: 0 }.encode();
    let mut sealed = header.to_vec();
    Sealer::from_secret(&attacker.derive().data, true).seal_into(
        &header,
        &config.encode(),
        &mut sealed,
    );
    backend.delete("config").unwrap();
    backend.put("config", &sealed).unwrap();
    assert_all_refused(
        &repo,
        None,
        &src,
        &["config", "does not open with the master key", "replaced"],
    );

    // The planted slot alone: refused before and after accepting a change, since a key that
    // takes no password never opens a config whose header says encrypted.
    for slot in repo_names(&repo, "keys") {
        if slot != format!("keys/{planted}") {
            fs::remove_file(repo.join(slot)).unwrap();
        }
    }
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
    let slot =
        keys::wrap(&MasterKey::generate(), Kdf::None, KdfParams::default(), b"", "x@y".into(), 0)
            .unwrap()
            .encode();
    let planted = Id::of_file(&slot);
    LocalBackend::new(&repo).put(&format!("keys/{planted}"), &slot).unwrap();
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
    let old_id = Repository::open(Arc::new(LocalBackend::new(&repo)), PASSWORD.as_bytes())
        .unwrap()
        .config()
        .id;

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
    let backend = LocalBackend::new(&repo);
    let config = Repository::open(Arc::new(LocalBackend::new(&repo)), PASSWORD.as_bytes())
        .unwrap()
        .config()
        .clone();
    let master = MasterKey::generate();
    let cheap = KdfParams { memory_kib: 64, iterations: 1, lanes: 1 };
    let slot = keys::wrap(&master, Kdf::Argon2id, cheap, PASSWORD.as_bytes(), "x@y".into(), 0)
        .unwrap()
        .encode();
    for old in repo_names(&repo, "keys") {
        fs::remove_file(repo.join(old)).unwrap();
    }
    backend.put(&format!("keys/{}", Id::of_file(&slot)), &slot).unwrap();
    let header = Header { magic: Magic::Config, encrypted: true, sub_kind: 0 }.encode();
    let mut sealed = header.to_vec();
    Sealer::from_secret(&master.derive().data, true).seal_into(
        &header,
        &config.encode(),
        &mut sealed,
    );
    backend.delete("config").unwrap();
    backend.put("config", &sealed).unwrap();
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
        let mut c = assert_cmd::Command::new("sh");
        c.timeout(TIMEOUT)
            .args(["-c", "umask 000; exec \"$0\" \"$@\"", BIN, "store", "-r"])
            .arg(&repo)
            .args(args)
            .env("DEDUP_PASSWORD", PASSWORD)
            .env("XDG_STATE_HOME", &state);
        run(&mut c)
    };
    under_umask_0(&[
        "init".as_ref(),
        "--kdf-memory-kib".as_ref(),
        "64".as_ref(),
        "--kdf-iterations".as_ref(),
        "1".as_ref(),
    ])
    .assert_code(0);
    under_umask_0(&["backup".as_ref(), src.as_os_str()]).assert_code(0);
    let mut seen = 0;
    for root in [&repo, &state] {
        let mut pending = vec![root.clone()];
        while let Some(path) = pending.pop() {
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o777;
            if meta.is_dir() {
                assert_eq!(mode, 0o700, "{}", path.display());
                pending.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else {
                assert_eq!(mode, 0o600, "{}", path.display());
                seen += 1;
            }
        }
    }
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
