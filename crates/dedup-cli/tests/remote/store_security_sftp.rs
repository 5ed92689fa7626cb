//! `dedup store` on SFTP against the two doors of issue 40 that are the client's: the user's
//! ssh_config decides whether a host whose key is unknown is accepted (accept-new only as an
//! explicit opt-in), and what the backend creates on the server and in the local cache is
//! private whatever the umask on either side. Skipped with a message without sshd.

use crate::common;
use crate::common::sftpserver;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::store::*;
use common::*;
use sftpserver::SftpServer;

/// A directory holding an `ssh` that runs the real one with `config` (and nothing else of the
/// kit's); the returned PATH puts it first.
fn ssh_with_config(dir: &Path, config: &str) -> std::ffi::OsString {
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let file = dir.join("ssh_config");
    fs::write(&file, config).unwrap();
    let ssh = bin.join("ssh");
    let real = sftpserver::real_ssh().unwrap();
    fs::write(&ssh, format!("#!/bin/sh\nexec {} -F {} \"$@\"\n", real.display(), file.display()))
        .unwrap();
    fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).unwrap();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).unwrap()
}

/// An ssh configuration with the kit's client key, its own (empty) known_hosts, and `policy`.
fn config(dir: &Path, policy: &str) -> String {
    format!(
        "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}/known_hosts\n  \
         {policy}\n  BatchMode yes\n  LogLevel ERROR\n",
        sftpserver::client_identity().display(),
        dir.display()
    )
}

fn init_args() -> [&'static str; 5] {
    ["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"]
}

#[test]
fn an_unknown_host_key_is_refused_unless_accepting_new_ones_is_asked_for() {
    let Some(server) = SftpServer::start("sftp host key policy") else { return };
    let dir = tmp();
    let repo = server.repo("repo");
    for (name, policy, says) in [
        ("yes", "StrictHostKeyChecking yes", "StrictHostKeyChecking yes in the ssh configuration"),
        ("ask", "", "StrictHostKeyChecking ask"),
    ] {
        let own = dir.path().join(name);
        let path = ssh_with_config(&own, &config(&own, policy));
        let out = run(store_cmd(&repo).env("PATH", &path).args(init_args()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.code, Some(2), "{name}: {}", out.dump());
        assert!(stderr.contains("host key is not in known_hosts"), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(stderr.contains("--accept-new-host-key"), "{name}: {stderr}");
        assert!(!server.dir("repo").exists(), "{name}: nothing was written");
    }
    // Asked for on the command line: the key is recorded, and is known from then on.
    let own = dir.path().join("yes");
    let path = ssh_with_config(&own, &config(&own, "StrictHostKeyChecking yes"));
    let mut accepting = store_cmd(&repo);
    accepting.env("PATH", &path).arg("--accept-new-host-key").args(init_args());
    run(&mut accepting).assert_code(0);
    assert!(fs::read_to_string(own.join("known_hosts")).unwrap().contains("127.0.0.1"));
    run(store_cmd(&repo).env("PATH", &path).arg("snapshots")).assert_code(0);
}

#[test]
fn files_on_the_server_and_in_the_cache_are_private_whatever_the_umask() {
    // The server's sftp process runs with umask 000, so a mode not asked for shows.
    let Some(server) = SftpServer::start_with("sftp private modes", "-u 000") else { return };
    let dir = tmp();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::write(src.join("f"), pattern(300_000, 3)).unwrap();
    let repo = server.repo("repo");
    let cache: PathBuf = dir.path().join("cache");
    let under_umask_0 = |args: &[&OsStr]| {
        run(store_cmd_under_umask_0(&repo).args(args).env("XDG_CACHE_HOME", &cache))
    };
    let init_args = init_args();
    let init: Vec<&OsStr> = init_args.iter().map(OsStr::new).collect();
    under_umask_0(&init).assert_code(0);
    under_umask_0(&["backup".as_ref(), src.as_os_str()]).assert_code(0);
    under_umask_0(&["ls".as_ref(), "latest".as_ref()]).assert_code(0);
    let on_server = assert_private(&server.dir("repo"));
    assert!(on_server >= 5, "config, key, pack, index, snapshot: {on_server} files");
    assert_eq!(
        fs::metadata(server.dir("repo").parent().unwrap()).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let cached = assert_private(&cache.join("dedup"));
    assert!(cached >= 2, "an index file and a snapshot at least: {cached} files");
}
