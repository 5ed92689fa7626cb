//! A real SFTP server for the tests: OpenSSH's `sshd` (installed by `.ci/run`) started on
//! 127.0.0.1 at a free port with a throwaway host key, accepting one throwaway client key, killed
//! with its connections when dropped. The dedup processes a test starts reach it through the real
//! `ssh` client, pointed at a generated configuration by a small `ssh` wrapper put first on PATH
//! (ssh reads no environment variable naming a configuration file, and dedup runs `ssh` from
//! PATH). Tests that need it skip with a message when sshd or ssh is missing or the test does not
//! run as root (sshd must), and fail under DEDUP_TEST_REQUIRE_ALL=1.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// The keys, client configuration and `ssh` wrapper every server of this test process shares
/// (one host key for all, so that a port reused by a later server is no changed host). It lives
/// as long as the process, in `dedup-ssh-PID` under the temporary directory; a later test
/// process removes those of processes that are gone (a static is never dropped).
struct Kit {
    dir: PathBuf,
}

impl Kit {
    fn host_key(&self) -> PathBuf {
        self.dir.join("host_key")
    }
    fn authorized_keys(&self) -> PathBuf {
        self.dir.join("authorized_keys")
    }
}

/// Removes the kits of test processes that are no longer running.
fn remove_dead_kits() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("dedup-ssh-")) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Makes the kit once and puts its `ssh` first on this process's PATH (inherited by the dedup
/// processes the tests start).
fn kit() -> &'static Kit {
    static KIT: OnceLock<Kit> = OnceLock::new();
    KIT.get_or_init(|| {
        remove_dead_kits();
        let dir = std::env::temp_dir().join(format!("dedup-ssh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let path = dir.as_path();
        for (file, kind) in [("host_key", "ed25519"), ("id_client", "ed25519")] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", kind, "-N", "", "-C", "dedup-test", "-f"])
                .arg(path.join(file))
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "ssh-keygen failed");
        }
        std::fs::copy(path.join("id_client.pub"), path.join("authorized_keys")).unwrap();
        let config = path.join("ssh_config");
        std::fs::write(
            &config,
            format!(
                "Host *\n  IdentityFile {dir}/id_client\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {dir}/known_hosts\n  StrictHostKeyChecking accept-new\n  \
                 BatchMode yes\n  LogLevel ERROR\n",
                dir = path.display()
            ),
        )
        .unwrap();
        let bin = path.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let ssh = bin.join("ssh");
        std::fs::write(
            &ssh,
            format!(
                "#!/bin/sh\nexec {} -F {} \"$@\"\n",
                real_ssh().unwrap().display(),
                config.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let old_path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin];
        paths.extend(std::env::split_paths(&old_path));
        // Every test of a process uses the same kit, so setting it process-wide (for the dedup
        // children to inherit) cannot race with another test's different values.
        std::env::set_var("PATH", std::env::join_paths(paths).unwrap());
        // The ssh control sockets (under XDG_STATE_HOME) and the repositories' caches go where
        // every store test of this process puts its client's state.
        super::isolate_client();
        Kit { dir }
    })
}

/// The client key the servers accept (a test writing an ssh configuration of its own names it).
pub fn client_identity() -> PathBuf {
    kit().dir.join("id_client")
}

/// The real ssh client on PATH (before the kit's wrapper was put there).
pub fn real_ssh() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("ssh"))
        .find(|p| p.is_file() && !p.starts_with(std::env::temp_dir()))
}

/// Why an SFTP server cannot run here, if it cannot.
fn missing() -> Option<String> {
    if !Path::new(SSHD).is_file() {
        return Some(format!("{SSHD} is not installed (apt-get install openssh-server)"));
    }
    if real_ssh().is_none() || Command::new("ssh-keygen").arg("-?").output().is_err() {
        return Some("ssh or ssh-keygen is not installed (apt-get install openssh-client)".into());
    }
    if !rustix::process::geteuid().is_root() {
        return Some("sshd must be started as root".into());
    }
    None
}

/// A running sshd.
pub struct SftpServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its configuration and the repositories' folder.
    dir: tempfile::TempDir,
}

impl SftpServer {
    /// Starts a server, or returns None (after the skip message) when it cannot run here; panics
    /// instead under DEDUP_TEST_REQUIRE_ALL=1.
    pub fn start(test: &str) -> Option<SftpServer> {
        SftpServer::start_with(test, "")
    }

    /// Starts a server as [`SftpServer::start`] whose sftp subsystem runs with `sftp_options`
    /// (internal-sftp's, e.g. `-u 000` for a umask that keeps every mode asked for).
    pub fn start_with(test: &str, sftp_options: &str) -> Option<SftpServer> {
        if let Some(why) = missing() {
            if std::env::var("DEDUP_TEST_REQUIRE_ALL").as_deref() == Ok("1") {
                panic!("{test}: cannot run: {why} (DEDUP_TEST_REQUIRE_ALL=1)");
            }
            eprintln!(
                "SKIPPED {test}: {why} (set DEDUP_TEST_REQUIRE_ALL=1 to make this a failure)"
            );
            return None;
        }
        let kit = kit();
        // sshd's privilege separation directory; Debian's service unit makes it at boot.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let dir = tempfile::Builder::new().prefix("dedup-sftp").tempdir().unwrap();
        let config = dir.path().join("sshd_config");
        // The port may be taken between choosing and binding; try a few.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            std::fs::write(
                &config,
                format!(
                    "ListenAddress 127.0.0.1:{port}\nHostKey {host_key}\n\
                     AuthorizedKeysFile {keys}\nPidFile none\nStrictModes no\nUsePAM no\n\
                     PubkeyAuthentication yes\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
                     MaxStartups 100\nMaxSessions 100\nSubsystem sftp internal-sftp {sftp_options}\n\
                     LogLevel ERROR\n",
                    host_key = kit.host_key().display(),
                    keys = kit.authorized_keys().display(),
                ),
            )
            .unwrap();
            let mut child = Command::new(SSHD)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&config)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(SftpServer { child, port, dir });
                }
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("{test}: sshd did not start (config {})", config.display());
    }

    /// The repository location `sftp://127.0.0.1:PORT//ABSOLUTE/PATH/NAME`.
    pub fn repo(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("sftp://127.0.0.1:{}/{}", self.port, self.dir(name).display()))
    }

    /// Where the server keeps the repository `name` (a local folder: the server is this host).
    pub fn dir(&self, name: &str) -> PathBuf {
        self.dir.path().join("repos").join(name)
    }
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let child: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
            let ppid: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == pid).then_some(child)
        })
        .collect()
}

impl SftpServer {
    /// Ends every connection the server is serving (as a server restart would), and waits until
    /// they are gone; the server goes on accepting new ones.
    pub fn drop_connections(&self) {
        let children = children_of(self.child.id());
        for &child in &children {
            if let Some(pid) = rustix::process::Pid::from_raw(child) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        let start = Instant::now();
        while children.iter().any(|c| Path::new(&format!("/proc/{c}/stat")).exists())
            && start.elapsed() < Duration::from_secs(10)
        {
            // A killed child stays a zombie until the listener reaps it.
            let zombies = children.iter().all(|c| {
                std::fs::read_to_string(format!("/proc/{c}/stat"))
                    .map(|stat| {
                        stat.rsplit_once(')')
                            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
                    })
                    .unwrap_or(true)
            });
            if zombies {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for SftpServer {
    fn drop(&mut self) {
        // Each connection is served by a child in a session of its own, which outlives the
        // listener: end those first.
        self.drop_connections();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
