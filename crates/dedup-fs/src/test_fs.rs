//! For tests only: a btrfs file system of its own on a loop device, where reflinks work. Tests
//! that need one skip with a message when it cannot be made (not root, no mkfs.btrfs), and fail
//! instead under `DEDUP_TEST_REQUIRE_ALL=1`, as the command-line tests do.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// A mounted btrfs image, unmounted (and its image deleted) when dropped.
pub(crate) struct Reflinks {
    /// A directory on it.
    pub dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Reflinks {
    /// Mount one for `test`, or say why not.
    pub fn mount(test: &str) -> Option<Reflinks> {
        let have = Command::new("mkfs.btrfs").arg("--version").output().is_ok();
        if !require(have, test, "mkfs.btrfs not installed (apt-get install btrfs-progs)") {
            return None;
        }
        if !require(rustix::process::geteuid().is_root(), test, "mounting needs root") {
            return None;
        }
        let tmp = tempfile::Builder::new().prefix("dedup-fs-btrfs-").tempdir().unwrap();
        let (img, dir) = (tmp.path().join("fs.img"), tmp.path().join("mnt"));
        fs::create_dir(&dir).unwrap();
        fs::File::create(&img).unwrap().set_len(256 << 20).unwrap();
        let made = Command::new("mkfs.btrfs").arg("-q").arg(&img).output().map(|o| o.status);
        if !require(made.is_ok_and(|s| s.success()), test, "mkfs.btrfs failed") {
            return None;
        }
        let mounted = Command::new("mount").args(["-o", "loop"]).arg(&img).arg(&dir).status();
        if !require(mounted.is_ok_and(|s| s.success()), test, "mount -o loop failed") {
            return None;
        }
        Some(Reflinks { dir, _tmp: tmp })
    }

    /// Free bytes, after the file system has written out what it holds.
    pub fn free_bytes(&self) -> u64 {
        let _ = Command::new("sync").arg("-f").arg(&self.dir).status();
        let st = rustix::fs::statvfs(&self.dir).unwrap();
        st.f_bavail * st.f_frsize
    }
}

impl Drop for Reflinks {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn require(cond: bool, test: &str, why: &str) -> bool {
    if cond {
        return true;
    }
    if std::env::var("DEDUP_TEST_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{test}: cannot run: {why} (DEDUP_TEST_REQUIRE_ALL=1)");
    }
    eprintln!("SKIPPED {test}: {why} (set DEDUP_TEST_REQUIRE_ALL=1 to make this a failure)");
    false
}
