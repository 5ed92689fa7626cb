//! What the volume tests share: a running `dedup store mount --writable` that the test can
//! unmount, kill with SIGKILL or leave to be cleaned up, and the checks every test ends with.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::store::PASSWORD;
use common::{require, BIN};

/// How long a mount may take to appear or to end.
const WAIT: Duration = Duration::from_secs(60);

/// Whether FUSE can be used here (else the test is skipped, or fails under
/// DEDUP_TEST_REQUIRE_ALL=1).
pub fn fuse_available(test: &str) -> bool {
    let helper = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join("fusermount3").is_file()));
    require(Path::new("/dev/fuse").exists(), test, "/dev/fuse is missing")
        && require(helper, test, "fusermount3 is not installed (Debian: fuse3)")
}

/// A fresh place for a volume: a temporary directory holding an initialised repository
/// (`repo`) and an empty mount point (`mnt`).
pub fn volume_place() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, point) = (tmp.path().join("repo"), tmp.path().join("mnt"));
    fs::create_dir(&point).unwrap();
    common::store::init_repo(&repo);
    (tmp, repo, point)
}

/// Whether `point` is a mount point now.
pub fn is_mounted(point: &Path) -> bool {
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap();
    let Ok(point) = point.canonicalize() else { return false };
    mounts.lines().any(|line| line.split(' ').nth(1) == Some(point.to_str().unwrap()))
}

/// A running writable mount of a volume.
pub struct Volume {
    child: Option<Child>,
    pub point: PathBuf,
}

/// Starts `dedup store -r REPO mount --writable NAME POINT EXTRA…` without waiting.
fn spawn<S: AsRef<OsStr>>(repo: &Path, name: &str, point: &Path, extra: &[S]) -> Child {
    Command::new(BIN)
        .args(["store", "-r"])
        .arg(repo)
        .args(["mount", "--writable", name])
        .args(extra)
        .arg(point)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

impl Volume {
    /// Mounts volume `name` of `repo` on `point` with the options `extra`, and waits until the
    /// mount is there.
    pub fn start<S: AsRef<OsStr>>(repo: &Path, name: &str, point: &Path, extra: &[S]) -> Volume {
        match Volume::try_start(repo, name, point, extra) {
            Ok(volume) => volume,
            Err((status, stderr)) => panic!("the mount ended before mounting: {status}\n{stderr}"),
        }
    }

    /// [`Volume::start`], or how the program ended when it did not mount.
    pub fn try_start<S: AsRef<OsStr>>(
        repo: &Path,
        name: &str,
        point: &Path,
        extra: &[S],
    ) -> Result<Volume, (ExitStatus, String)> {
        let child = spawn(repo, name, point, extra);
        let mut volume = Volume { child: Some(child), point: point.to_path_buf() };
        let start = Instant::now();
        while !is_mounted(point) {
            if let Some(status) = volume.child().try_wait().unwrap() {
                let stderr = volume.stderr();
                volume.child = None;
                return Err((status, stderr));
            }
            assert!(start.elapsed() < WAIT, "the mount did not appear within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(volume)
    }

    fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("running")
    }

    fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut err) = self.child().stderr.take() {
            let _ = err.read_to_string(&mut text);
        }
        text
    }

    /// A path inside the mount.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.point.join(rel)
    }

    /// Unmounts with `fusermount3 -u` and waits for the program: its status and stderr.
    pub fn unmount(self) -> (ExitStatus, String) {
        let start = Instant::now();
        while !Command::new("fusermount3").arg("-u").arg(&self.point).status().unwrap().success() {
            assert!(start.elapsed() < WAIT, "fusermount3 -u kept failing");
            std::thread::sleep(Duration::from_millis(100));
        }
        self.wait()
    }

    /// Unmounts and asserts a clean end.
    pub fn unmount_ok(self) -> String {
        let (status, stderr) = self.unmount();
        assert!(status.success(), "the mount ended with {status}\n{stderr}");
        stderr
    }

    fn wait(mut self) -> (ExitStatus, String) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child().try_wait().unwrap() {
                let stderr = self.stderr();
                self.child = None;
                return (status, stderr);
            }
            assert!(start.elapsed() < WAIT, "the mount did not end within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the program with SIGKILL (no last commit, nothing cleaned up) and detaches the
    /// mount it leaves behind.
    pub fn kill9(self) {
        self.kill9_then(|| {});
    }

    /// Kills the program with SIGKILL, detaches its mount, and hands back the child not waited
    /// for: a zombie until the caller reaps it, as under a parent that has not got round to it.
    pub fn kill9_unreaped(mut self) -> Child {
        let mut child = self.child.take().expect("running");
        child.kill().unwrap();
        let stat = format!("/proc/{}/stat", child.id());
        let start = Instant::now();
        while !fs::read_to_string(&stat).unwrap().rsplit_once(')').unwrap().1.starts_with(" Z") {
            assert!(start.elapsed() < WAIT, "the killed mount did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = Command::new("fusermount3").arg("-uz").arg(&self.point).status();
        child
    }

    /// [`Volume::kill9`], running `before_detach` between the kill and the detach (while the
    /// dead mount still answers every request with an error, so nothing lands beneath it).
    pub fn kill9_then(mut self, before_detach: impl FnOnce()) {
        let mut child = self.child.take().expect("running");
        child.kill().unwrap();
        child.wait().unwrap();
        before_detach();
        let _ = Command::new("fusermount3").arg("-uz").arg(&self.point).status();
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("fusermount3").arg("-uz").arg(&self.point).status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The ids of the snapshots of `repo` carrying tag `volume:NAME`, oldest first.
pub fn commits(repo: &Path, name: &str) -> Vec<String> {
    let list: serde_json::Value =
        serde_json::from_str(&common::store::store_ok(repo, &["snapshots", "--json"])).unwrap();
    let tag = format!("volume:{name}");
    list.as_array()
        .unwrap()
        .iter()
        .filter(|s| s["tags"].as_array().is_some_and(|t| t.iter().any(|t| t == tag.as_str())))
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts that `check --read-data` finds the repository whole.
pub fn assert_checks_clean(repo: &Path) {
    let out = common::store::store(repo, &["check", "--read-data"]);
    assert_eq!(out.code(), 0, "check --read-data failed\n{}", out.dump());
}

/// Data of `len` bytes that is the same for the same `seed`, not compressible.
pub fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut bytes = common::pattern(len, seed);
    bytes.truncate(len);
    bytes
}

/// A volume over a repository on a small tmpfs (the full-disk tests), holding `kept`: 1 MiB
/// written and synced before the disk fills.
pub struct SmallDiskVolume {
    /// The tmpfs the repository lives on (unmounted when dropped).
    pub small: common::act::Tmpfs,
    /// Holds the mount point.
    pub _tmp: tempfile::TempDir,
    pub point: PathBuf,
    pub repo: PathBuf,
    pub volume: Volume,
    pub kept: Vec<u8>,
}

/// Mounts volume `name` with no timed commits over a fresh repository on a small tmpfs and
/// writes and syncs `kept` (data of `seed`); `None` when FUSE or tmpfs is missing (skipped).
pub fn on_a_small_disk(test: &str, name: &str, seed: u64) -> Option<SmallDiskVolume> {
    if !fuse_available(test) {
        return None;
    }
    let small = common::act::Tmpfs::new(test)?;
    let tmp = tempfile::tempdir().unwrap();
    let point = tmp.path().join("mnt");
    fs::create_dir(&point).unwrap();
    let repo = small.mnt.join("repo");
    common::store::init_repo(&repo);
    let volume = Volume::start(&repo, name, &point, &["--commit-interval", "3600"]);
    let kept = data(1 << 20, seed);
    let mut file = fs::File::create(volume.path("kept")).unwrap();
    file.write_all(&kept).unwrap();
    file.sync_all().unwrap();
    Some(SmallDiskVolume { small, _tmp: tmp, point, repo, volume, kept })
}

/// Fills the file system of `path` with a file there until it is full.
pub fn fill_outside(path: &Path) {
    let mut file =
        fs::OpenOptions::new().create(true).write(true).truncate(true).open(path).unwrap();
    let block = vec![0x5a; 1 << 20];
    while file.write_all(&block).is_ok() {}
}
