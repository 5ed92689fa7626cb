//! `dedup store -P NAME`: a backup with no PATH takes the profile's sources and excludes,
//! `forget` with no rule the profile's policy, the command line wins over the profile, the
//! user's profile wins over the system's, and a bad, missing or writable-by-others profile is
//! refused with a message naming the file (and the line).

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::store::*;
use common::*;

/// A test's directories: the user's profiles (XDG_CONFIG_HOME/dedup), the stand-in for
/// /etc/dedup, and room for repositories and trees.
struct Places {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Places {
    fn new() -> Places {
        let dir = tmp();
        let root = dir.path().to_path_buf();
        fs::create_dir_all(root.join("config/dedup")).unwrap();
        fs::create_dir_all(root.join("etc")).unwrap();
        Places { _dir: dir, root }
    }

    fn user_profile(&self, name: &str, text: &str) -> PathBuf {
        write_private(&self.root.join("config/dedup").join(format!("{name}.toml")), text)
    }

    fn system_profile(&self, name: &str, text: &str) -> PathBuf {
        write_private(&self.root.join("etc").join(format!("{name}.toml")), text)
    }

    /// A password file holding the test password.
    fn password_file(&self) -> PathBuf {
        write_private(&self.root.join("password"), PASSWORD)
    }

    /// `dedup store -P NAME <args>` with only the profile as a source of repository and
    /// password.
    fn run(&self, name: &str, args: &[&str]) -> Out {
        isolate_client();
        let mut c = assert_cmd::Command::new(BIN);
        c.timeout(TIMEOUT)
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("DEDUP_SYSTEM_CONFIG_DIR", self.root.join("etc"))
            .env_remove("DEDUP_REPO")
            .env_remove("DEDUP_PASSWORD")
            .env_remove("DEDUP_PASSWORD_FILE")
            .args(["store", "-P", name])
            .args(args);
        run(&mut c)
    }
}

fn write_private(path: &Path, text: &str) -> PathBuf {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
    path.to_path_buf()
}

fn snapshot_count(repo: &Path) -> usize {
    let out = store_ok(repo, &["snapshots", "--json"]);
    serde_json::from_str::<serde_json::Value>(&out).unwrap().as_array().unwrap().len()
}

fn stderr(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn backup_with_no_path_backs_up_the_profiles_sources_with_its_excludes_and_tags() {
    let places = Places::new();
    let (tree, repo) = (places.root.join("tree"), places.root.join("repo"));
    write(&tree, "docs/a.txt", b"kept");
    write(&tree, "docs/scratch.tmp", b"excluded");
    write(&tree, "music/b.txt", b"kept too");
    write(&tree, "other/c.txt", b"not a source");
    init_repo(&repo);
    let profile = format!(
        "[repository]\nrepository = {repo:?}\npassword-file = {pw:?}\n\n[backup]\n\
         sources = [{docs:?}, {music:?}]\nexclude = [\"*.tmp\"]\ntags = [\"nightly\"]\n\
         host = \"profile-host\"\n",
        pw = places.password_file(),
        docs = tree.join("docs"),
        music = tree.join("music"),
    );
    places.user_profile("home", &profile);

    places.run("home", &["backup"]).assert_code(0);
    let ls = store_ok(&repo, &["ls", "latest"]);
    assert!(ls.contains("/docs/a.txt") && ls.contains("/music/b.txt"), "{ls}");
    assert!(!ls.contains("scratch.tmp") && !ls.contains("other"), "{ls}");
    let snapshots = store_ok(&repo, &["snapshots", "--json"]);
    assert!(snapshots.contains("nightly") && snapshots.contains("profile-host"), "{snapshots}");
}

#[test]
fn forget_with_no_rule_applies_the_profiles_policy_and_a_cli_rule_replaces_it() {
    let places = Places::new();
    let (tree, repo) = (places.root.join("tree"), places.root.join("repo"));
    write(&tree, "f", b"data");
    init_repo(&repo);
    for _ in 0..4 {
        store_ok(&repo, &["backup", "--quiet", tree.to_str().unwrap()]);
    }
    let profile = format!(
        "[repository]\nrepository = {repo:?}\npassword-command = \"cat {pw}\"\n\n\
         [forget]\nkeep-last = 1\n",
        pw = places.password_file().display()
    );
    places.user_profile("home", &profile);

    places.run("home", &["forget", "--keep-last", "3"]).assert_code(0);
    assert_eq!(snapshot_count(&repo), 3, "the command line's rule, not the profile's");
    places.run("home", &["forget"]).assert_code(0);
    assert_eq!(snapshot_count(&repo), 1, "the profile's rule");
}

#[test]
fn check_reads_the_data_the_profile_asks_for() {
    let places = Places::new();
    let (tree, repo) = (places.root.join("tree"), places.root.join("repo"));
    write(&tree, "f", b"data");
    init_repo(&repo);
    store_ok(&repo, &["backup", "--quiet", tree.to_str().unwrap()]);
    let pw = places.password_file();
    let with = |check: &str| {
        format!("[repository]\nrepository = {repo:?}\npassword-file = {pw:?}\n{check}")
    };
    places.user_profile("plain", &with(""));
    places.user_profile("full", &with("[check]\nread-data = true\n"));

    let out = places.run("plain", &["check"]);
    out.assert_code(0);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("read and verified"));
    let out = places.run("full", &["check"]);
    out.assert_code(0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("read and verified"), "{}", out.dump());
}

#[test]
fn the_command_line_overrides_the_profile() {
    let places = Places::new();
    let (tree, repo) = (places.root.join("tree"), places.root.join("repo"));
    let profile_repo = places.root.join("profile-repo");
    write(&tree, "source/a", b"profile's source");
    write(&tree, "given/b", b"named on the command line");
    init_repo(&repo);
    let profile = format!(
        "[repository]\nrepository = {profile_repo:?}\npassword-file = \"/nonexistent/pw\"\n\n\
         [backup]\nsources = [{src:?}]\nhost = \"profile-host\"\n",
        src = tree.join("source"),
    );
    places.user_profile("home", &profile);

    let given = tree.join("given");
    let out = places.run(
        "home",
        &[
            "-r",
            repo.to_str().unwrap(),
            "--password-file",
            places.password_file().to_str().unwrap(),
            "backup",
            "--host",
            "cli-host",
            given.to_str().unwrap(),
        ],
    );
    out.assert_code(0);
    assert!(!profile_repo.exists(), "the profile's repository was touched");
    let ls = store_ok(&repo, &["ls", "latest"]);
    assert!(ls.contains("/given/b") && !ls.contains("/source"), "{ls}");
    let snapshots = store_ok(&repo, &["snapshots", "--json"]);
    assert!(snapshots.contains("cli-host") && !snapshots.contains("profile-host"), "{snapshots}");
}

#[test]
fn a_bad_key_is_named_with_its_file_and_line_and_nothing_runs() {
    let places = Places::new();
    let marker = places.root.join("password-command-ran");
    let path = places.user_profile(
        "home",
        &format!(
            "[repository]\nrepository = \"/srv/none\"\npassword-command = \"touch {}\"\n\n\
             [backup]\nexclud = [\"*.tmp\"]\n",
            marker.display()
        ),
    );
    let out = places.run("home", &["snapshots"]);
    out.assert_code(2);
    let err = stderr(&out);
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert!(err.contains("line 6") && err.contains("exclud"), "{err}");
    assert!(!marker.exists());

    // A secret typed into the profile is not echoed back in the message.
    places.user_profile("secret", "[repository]\npassword = \"hunter2\"\n");
    let out = places.run("secret", &["snapshots"]);
    out.assert_code(2);
    let err = stderr(&out);
    assert!(err.contains("line 2") && err.contains("password"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn a_missing_profile_names_every_place_looked() {
    let places = Places::new();
    let out = places.run("nowhere", &["snapshots"]);
    out.assert_code(2);
    let err = stderr(&out);
    for place in
        [places.root.join("config/dedup/nowhere.toml"), places.root.join("etc/nowhere.toml")]
    {
        assert!(err.contains(place.to_str().unwrap()), "{err}");
    }
}

#[test]
fn a_fifo_named_like_a_profile_is_refused_without_hanging() {
    let places = Places::new();
    let fifo = places.root.join("config/dedup/pipe.toml");
    mkfifo(&fifo);
    let out = places.run("pipe", &["snapshots"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));
}

#[test]
fn a_profile_in_xdg_config_home_comes_before_the_system_one() {
    let places = Places::new();
    let (tree, user_repo, system_repo) =
        (places.root.join("tree"), places.root.join("user-repo"), places.root.join("system-repo"));
    write(&tree, "f", b"data");
    init_repo(&user_repo);
    init_repo(&system_repo);
    store_ok(&user_repo, &["backup", "--quiet", tree.to_str().unwrap()]);
    let pw = places.password_file();
    let profile =
        |repo: &Path| format!("[repository]\nrepository = {repo:?}\npassword-file = {pw:?}\n");
    let user = places.user_profile("both", &profile(&user_repo));
    places.system_profile("both", &profile(&system_repo));

    let listed = |places: &Places| {
        let out = places.run("both", &["snapshots", "--json"]);
        out.assert_code(0);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().len()
    };
    assert_eq!(listed(&places), 1, "the user's profile (its repository has the snapshot)");
    fs::remove_file(user).unwrap();
    assert_eq!(listed(&places), 0, "the system's profile once the user's is gone");
}

#[test]
fn a_profile_others_could_change_is_refused_before_anything_runs() {
    let places = Places::new();
    let marker = places.root.join("password-command-ran");
    let path = places.user_profile(
        "home",
        &format!(
            "[repository]\nrepository = \"/srv/none\"\npassword-command = \"touch {}\"\n",
            marker.display()
        ),
    );
    for mode in [0o620, 0o602] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let out = places.run("home", &["snapshots"]);
        out.assert_code(2);
        let err = stderr(&out);
        assert!(err.contains("writable by group or others") && err.contains("home.toml"), "{err}");
        assert!(!marker.exists());
    }
    // The directory too: whoever may write there may replace the file.
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let dir = path.parent().unwrap();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
    let out = places.run("home", &["snapshots"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("the directory of"), "{}", stderr(&out));
    assert!(!marker.exists());

    // A sticky directory (as /tmp) is fine: others may add names there, not replace this file.
    fs::set_permissions(dir, fs::Permissions::from_mode(0o1777)).unwrap();
    let out = places.run("home", &["snapshots"]);
    assert!(!stderr(&out).contains("profile refused"), "{}", stderr(&out));
    assert!(stderr(&out).contains("/srv/none"), "the profile's repository: {}", stderr(&out));
}

#[test]
fn backup_with_no_path_and_no_profile_says_what_is_missing() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);
    let out = store(&repo, &["backup"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("nothing to back up"), "{}", stderr(&out));
    assert_eq!(snapshot_count(&repo), 0);
}
