//! `dedup find` on a device that answers slowly: an XFS loop device read through a blkio cgroup
//! throttled to 100 read requests per second, as on a spinning disk (the HDD proxy of
//! docs/BENCHMARKS.md). Measuring its first head reads, dedup reads same-size files of up to
//! a mebibyte whole instead of sampling them, and so makes fewer requests, with the same groups.

mod common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::act::*;
use common::*;

const COPIES: usize = 40;
const SIZE: usize = 512 << 10;

/// A blkio cgroup (v1) throttling reads from one device; removed when dropped.
struct Throttle {
    dir: PathBuf,
    dev: String,
}

impl Throttle {
    fn new(dev: u64, iops: u32, test: &str) -> Option<Throttle> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        let why = "no cgroup v1 blkio controller at /sys/fs/cgroup/blkio";
        if !require(root.join("cgroup.procs").exists(), test, why) {
            return None;
        }
        let dir = root.join(format!("dedup-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let dev = format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev));
        fs::write(dir.join("blkio.throttle.read_iops_device"), format!("{dev} {iops}")).unwrap();
        Some(Throttle { dir, dev })
    }

    /// Read requests served to the cgroup's processes from the device so far.
    fn requests(&self) -> u64 {
        let text = fs::read_to_string(self.dir.join("blkio.throttle.io_serviced")).unwrap();
        text.lines()
            .filter_map(|l| l.strip_prefix(&format!("{} Read ", self.dev)))
            .map(|n| n.trim().parse::<u64>().unwrap())
            .sum()
    }

    /// `dedup find -v --format json ARGS` run in `dir` inside the cgroup.
    fn find_json(&self, dir: &Path, args: &[&str]) -> Out {
        let mut c = assert_cmd::Command::new("sh");
        c.current_dir(dir)
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(BIN)
            .args(["find", "-v", "--format", "json"])
            .args(args);
        run(&mut c)
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // Its processes have exited; an empty cgroup can be removed.
        let _ = fs::remove_dir(&self.dir);
    }
}

/// Drop the page cache's copy of every file under `dir`, so the run reads from the device.
fn evict(dir: &Path) {
    assert!(Command::new("sync").status().unwrap().success());
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let status = Command::new("dd")
            .arg(format!("if={}", path.display()))
            .args(["iflag=nocache", "count=0", "status=none"])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

/// The `-v` line on the sample stage's choice for the device, if any.
fn samples_line(out: &Out) -> Option<String> {
    out.stderr_lines().into_iter().find(|l| l.starts_with("dedup: samples: "))
}

#[test]
fn a_slow_device_reads_same_size_files_whole_and_finds_the_same_groups() {
    let test = "a_slow_device_reads_same_size_files_whole_and_finds_the_same_groups";
    let Some(fs) = LoopFs::new("xfs", test) else { return };
    let dir = fs.mnt.join("t");
    fs::create_dir(&dir).unwrap();
    let data = pattern(SIZE, 7);
    for i in 0..COPIES {
        fs::write(dir.join(format!("copy{i:02}")), &data).unwrap();
    }
    let mut other = data.clone();
    other[SIZE / 2] ^= 1;
    fs::write(dir.join("differs-in-the-middle"), &other).unwrap();
    let dev = fs::metadata(&dir).unwrap().dev();
    let Some(throttle) = Throttle::new(dev, 100, test) else { return };
    evict(&dir);

    let before = throttle.requests();
    let out = throttle.find_json(&fs.mnt, &["t"]);
    let requests = throttle.requests() - before;
    out.assert_code(0);
    let line = samples_line(&out).unwrap_or_else(|| panic!("no samples line:\n{}", out.dump()));
    assert!(line.contains("files up to 1.00 MiB read whole"), "{line}");
    let copies: Vec<String> = (0..COPIES).map(|i| format!("t/copy{i:02}")).collect();
    let copies: Vec<&str> = copies.iter().map(String::as_str).collect();
    assert_groups(&out, &sets(&[&copies]));
    // Sampled, every copy costs a head, a tail and a full read: at least 3 requests (164 in
    // all when measured with `DEDUP_WHOLE_READ_MAX=64K`). Read whole, the 16 timed copies cost
    // a head and the rest, the others one read (82 in all, the kernel's readahead splitting
    // some reads in two).
    let most = 3 * COPIES as u64;
    assert!(requests < most, "{requests} read requests for {COPIES} copies, want < {most}");
}

#[test]
fn a_fast_device_keeps_sampling_files_above_64_kib() {
    let dir = tmp();
    let data = pattern(SIZE, 7);
    for i in 0..24 {
        fs::write(dir.path().join(format!("copy{i:02}")), &data).unwrap();
    }
    let out = find(dir.path(), &["-v", "."]);
    out.assert_code(0);
    // In the page cache a head read takes microseconds: no device is measured slow. (A line
    // may still appear for a loaded machine, but never with more than a few hundred KiB.)
    if let Some(line) = samples_line(&out) {
        assert!(!line.contains("MiB read whole"), "{line}");
    }
}
