//! Helpers for the black-box tests of the actions: running them, snapshotting what every path
//! reads as, and real btrfs/XFS file systems on loop devices.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{cmd, require, run, Out};

/// Runs `dedup <args>` in `dir`.
pub fn dedup<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    run(cmd(dir).args(args))
}

/// Runs `dedup <args>` in `dir` with `stdin` as standard input.
pub fn dedup_stdin<S: AsRef<OsStr>>(dir: &Path, args: &[S], stdin: &[u8]) -> Out {
    run(cmd(dir).args(args).write_stdin(stdin.to_vec()))
}

/// What every non-directory path under `root` reads as (symlinks followed), by relative path.
/// Temporary names dedup makes are listed too, so a leftover shows up as a difference.
pub fn contents(root: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut |rel, p| {
        let data = fs::read(p).unwrap_or_else(|e| format!("<unreadable: {e}>").into_bytes());
        out.insert(rel.to_vec(), data);
    });
    out
}

/// (dev, ino) of every non-directory path under `root`, not following symlinks.
pub fn inodes(root: &Path) -> BTreeMap<Vec<u8>, (u64, u64)> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut |rel, p| {
        let m = fs::symlink_metadata(p).unwrap();
        out.insert(rel.to_vec(), (m.dev(), m.ino()));
    });
    out
}

fn walk(root: &Path, dir: &Path, f: &mut dyn FnMut(&[u8], &Path)) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let m = fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            walk(root, &p, f);
        } else {
            f(p.strip_prefix(root).unwrap().as_os_str().as_bytes(), &p);
        }
    }
}

/// Asserts that every path of `before` still reads the same (and no path was added).
#[track_caller]
pub fn assert_same_contents(before: &BTreeMap<Vec<u8>, Vec<u8>>, root: &Path, out: &Out) {
    let after = contents(root);
    let show = |m: &BTreeMap<Vec<u8>, Vec<u8>>| {
        m.iter()
            .map(|(k, v)| format!("{} ({} bytes)", String::from_utf8_lossy(k), v.len()))
            .collect::<Vec<_>>()
    };
    assert!(
        before == &after,
        "content changed\nbefore: {:?}\nafter:  {:?}\n{}",
        show(before),
        show(&after),
        out.dump()
    );
}

/// True when nothing below `root` has a name dedup uses for temporary files.
pub fn no_temp_names(root: &Path) -> bool {
    let mut clean = true;
    walk(root, root, &mut |rel, _| {
        if rel.split(|&b| b == b'/').any(|n| n.starts_with(b".dedup-tmp.")) {
            clean = false;
        }
    });
    clean
}

/// Bytes allocated to a path (st_blocks), not following symlinks.
pub fn allocated(p: &Path) -> u64 {
    fs::symlink_metadata(p).unwrap().blocks() * 512
}

/// stdout as text.
pub fn stdout(out: &Out) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Saves a JSON report of `dedup find --format json <args>` run in `dir` to `dir/../name`.
pub fn save_report<S: AsRef<OsStr>>(dir: &Path, args: &[S], report: &Path) {
    let out = run(cmd(dir).args(["find", "--format", "json"]).args(args));
    out.assert_code(0);
    fs::write(report, &out.stdout).unwrap();
}

/// Free bytes of the file system holding `p` (after a sync of it).
pub fn free_bytes(p: &Path) -> u64 {
    let _ = Command::new("sync").arg("-f").arg(p).status();
    let st = rustix::fs::statvfs(p).unwrap();
    st.f_bavail * st.f_frsize
}

/// The regular files below `root` with data whose blocks ext4 has not allocated yet (`filefrag
/// -v` flags their extents `delalloc`), or None when filefrag cannot tell.
pub fn delayed_allocation(root: &Path) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() && entry.metadata().unwrap().len() > 0 {
                let said = Command::new("filefrag").arg("-v").arg(entry.path()).output().ok()?;
                if !said.status.success() {
                    return None;
                }
                if String::from_utf8_lossy(&said.stdout).contains("delalloc") {
                    out.push(entry.path());
                }
            }
        }
    }
    Some(out)
}

/// A file system of its own on a loop device, mounted under a temporary directory and
/// unmounted (and its image deleted) when dropped.
pub struct LoopFs {
    pub mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopFs {
    /// `kind` is "btrfs" or "xfs". Skips (None) when the tools or privileges are missing,
    /// fails under DEDUP_TEST_REQUIRE_ALL=1.
    pub fn new(kind: &str, test: &str) -> Option<LoopFs> {
        // XFS needs at least 300 MB; the image is sparse, so this costs little real space.
        LoopFs::with_size(kind, test, 300 << 20)
    }

    /// A file system of `kind` ("btrfs", "xfs", "ext4") of `size` bytes.
    pub fn with_size(kind: &str, test: &str, size: u64) -> Option<LoopFs> {
        let mkfs = format!("mkfs.{kind}");
        let have = Command::new(&mkfs).arg("-V").output().is_ok();
        if !require(
            have,
            test,
            &format!("{mkfs} not installed (apt-get install btrfs-progs xfsprogs e2fsprogs)"),
        ) {
            return None;
        }
        if !require(super::is_root(), test, "mounting a loop device needs root") {
            return None;
        }
        let dir = tempfile::Builder::new().prefix("dedup-loop-").tempdir().unwrap();
        let img = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        fs::create_dir(&mnt).unwrap();
        let f = fs::File::create(&img).unwrap();
        f.set_len(size).unwrap();
        drop(f);
        let made = match kind {
            "xfs" => Command::new(&mkfs).args(["-q", "-f", "-m", "reflink=1"]).arg(&img).status(),
            "ext4" => Command::new(&mkfs).args(["-q", "-F"]).arg(&img).status(),
            _ => Command::new(&mkfs).arg("-q").arg(&img).status(),
        };
        if !require(made.is_ok_and(|s| s.success()), test, &format!("{mkfs} failed")) {
            return None;
        }
        let mounted = Command::new("mount").args(["-o", "loop"]).arg(&img).arg(&mnt).status();
        if !require(mounted.is_ok_and(|s| s.success()), test, "mount -o loop failed") {
            return None;
        }
        Some(LoopFs { mnt, _dir: dir })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

/// A tmpfs mounted under a temporary directory (another file system than the test's temp dir),
/// unmounted when dropped; None (after `require`) when it cannot be mounted.
pub struct Tmpfs {
    pub mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mount a small tmpfs; `options` such as "size=16m".
    pub fn new(test: &str) -> Option<Tmpfs> {
        if !require(super::is_root(), test, "mounting a tmpfs needs root") {
            return None;
        }
        let dir = tempfile::Builder::new().prefix("dedup-tmpfs-").tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        fs::create_dir(&mnt).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"])
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
        if !require(ok, test, "mount -t tmpfs failed") {
            return None;
        }
        Some(Tmpfs { mnt, _dir: dir })
    }

    /// Make it read-only.
    pub fn remount_ro(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.mnt)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "remount ro failed");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

/// Runs `dedup <args>` in `dir` as user/group nobody (65534) via setpriv.
pub fn dedup_as_nobody<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    let mut c = assert_cmd::Command::new("setpriv");
    c.current_dir(dir)
        .timeout(super::TIMEOUT)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(super::BIN)
        .args(args);
    run(&mut c)
}
