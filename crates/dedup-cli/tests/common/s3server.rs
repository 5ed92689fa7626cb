//! A real S3-compatible server for the tests: `s3s-fs` (installed by `.ci/run`) started on
//! 127.0.0.1 at a free port over a temporary directory, killed when dropped. Tests that need it
//! skip with a message when it is missing, and fail under DEDUP_TEST_REQUIRE_ALL=1.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The access key every test server accepts.
pub const ACCESS_KEY: &str = "dedup-test";
/// Its secret.
pub const SECRET_KEY: &str = "dedup-test-secret";
/// The bucket every test server has.
pub const BUCKET: &str = "bkt";

/// A running s3s-fs.
pub struct S3Server {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    root: tempfile::TempDir,
}

/// The s3s-fs binary: on PATH or in ~/.cargo/bin.
fn binary() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join("s3s-fs")).find(|p| p.is_file())
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something accepts connections on `port`.
pub fn wait_for_port(port: u16) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl S3Server {
    /// Starts a server, or returns None (after the skip message) when s3s-fs is missing; panics
    /// instead under DEDUP_TEST_REQUIRE_ALL=1.
    pub fn start(test: &str) -> Option<S3Server> {
        let Some(bin) = binary() else {
            let why = "s3s-fs is not installed (cargo install --locked s3s-fs --version 0.14.1 \
                       --features binary)";
            if std::env::var("DEDUP_TEST_REQUIRE_ALL").as_deref() == Ok("1") {
                panic!("{test}: cannot run: {why} (DEDUP_TEST_REQUIRE_ALL=1)");
            }
            eprintln!(
                "SKIPPED {test}: {why} (set DEDUP_TEST_REQUIRE_ALL=1 to make this a failure)"
            );
            return None;
        };
        // Every test of a process uses the same credentials, so setting them process-wide (for
        // the dedup children to inherit) cannot race with another test's different values.
        std::env::set_var("AWS_ACCESS_KEY_ID", ACCESS_KEY);
        std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
        std::env::set_var("AWS_DEFAULT_REGION", "us-east-1");
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        // The port may be taken between choosing and binding; try a few.
        for _ in 0..5 {
            let port = free_port();
            let mut child = Command::new(&bin)
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY])
                .arg(root.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(S3Server { child, port, root });
                }
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("{test}: s3s-fs did not start");
    }

    /// The repository location `s3:http://127.0.0.1:PORT/bkt/NAME`.
    pub fn repo(&self, name: &str) -> PathBuf {
        self.repo_at(self.port, name)
    }

    /// The same repository reached through another port (a proxy's).
    pub fn repo_at(&self, port: u16, name: &str) -> PathBuf {
        PathBuf::from(format!("s3:http://127.0.0.1:{port}/{BUCKET}/{name}"))
    }

    /// Where the server keeps the objects of the repository `name`.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.path().join(BUCKET).join(name)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
