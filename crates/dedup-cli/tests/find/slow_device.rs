//! `dedup find` on a device that answers slowly: an XFS loop device read through a blkio cgroup
//! throttled to 20 read requests per second, slower than a spinning disk (the HDD proxy of
//! docs/benchmarks/find.md). Measuring its first head reads, dedup reads same-size files of up to
//! a mebibyte whole instead of sampling them, and reads large files around the page cache in
//! requests of the device's size, and so makes fewer requests, with the same groups.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::act::*;
use common::*;

const COPIES: usize = 40;
const SIZE: usize = 512 << 10;

/// Read requests per second the throttled device serves. The throttle lets through at once what
/// the time since its slice began allows, so a slow start (the walk on a loaded machine) can pass
/// all 16 of the probe's timed reads unthrottled, and the device then measures fast. At 100 a
/// second that happened in two CI runs, once in each of two tests; at 20 the walk would have to
/// take 0.8 s.
const SLOW_IOPS: u32 = 20;

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
        // Tests run at once in one process: each needs a cgroup of its own.
        let dir = root.join(format!("dedup-test-{}-{test}", std::process::id()));
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

    /// `dedup find -v --format json` of [`TREE`] in `mnt` inside the cgroup, with `env` added
    /// to the environment and `args` to the options, after its files have left the page cache:
    /// its output, which must report success, and the read requests it made.
    fn find_cold(&self, mnt: &Path, env: &[(&str, &str)], args: &[&str]) -> (Out, u64) {
        evict(&mnt.join(TREE));
        let before = self.requests();
        let mut c = assert_cmd::Command::new("sh");
        c.envs(env.iter().copied());
        c.current_dir(mnt)
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(BIN)
            .args(["find", "-v", "--format", "json"])
            .args(args)
            .arg(TREE);
        let out = run(&mut c);
        out.assert_code(0);
        (out, self.requests() - before)
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

/// The `-v` line on the sample stage's choice, which a run on a slow device must print.
fn slow_samples_line(out: &Out) -> String {
    samples_line(out).unwrap_or_else(|| panic!("no samples line:\n{}", out.dump()))
}

/// The directory under the mount that the tests fill and `find_cold` scans.
const TREE: &str = "t";

/// A fresh XFS loop device with an empty [`TREE`] directory, or `None` where the test skips.
fn xfs_tree(test: &str) -> Option<(LoopFs, PathBuf)> {
    let fs = LoopFs::new("xfs", test)?;
    let dir = fs.mnt.join(TREE);
    fs::create_dir(&dir).unwrap();
    Some((fs, dir))
}

#[test]
fn a_slow_device_reads_same_size_files_whole_and_finds_the_same_groups() {
    let test = "a_slow_device_reads_same_size_files_whole_and_finds_the_same_groups";
    let Some((fs, dir)) = xfs_tree(test) else { return };
    let data = pattern(SIZE, 7);
    for i in 0..COPIES {
        fs::write(dir.join(format!("copy{i:02}")), &data).unwrap();
    }
    let mut other = data.clone();
    other[SIZE / 2] ^= 1;
    fs::write(dir.join("differs-in-the-middle"), &other).unwrap();
    let dev = fs::metadata(&dir).unwrap().dev();
    let Some(throttle) = Throttle::new(dev, SLOW_IOPS, test) else { return };

    let (out, requests) = throttle.find_cold(&fs.mnt, &[], &[]);
    let line = slow_samples_line(&out);
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
fn a_slow_device_reads_large_files_in_whole_requests_around_the_page_cache() {
    let test = "a_slow_device_reads_large_files_in_whole_requests_around_the_page_cache";
    let huge_pages = fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|s| s.contains("[always]") || s.contains("[madvise]"));
    if !require(huge_pages, test, "transparent huge pages are off") {
        return;
    }
    let Some((fs, dir)) = xfs_tree(test) else { return };
    // Not a whole number of blocks, so the last direct read ends inside one.
    let size = (8 << 20) + 123;
    let data = pattern(size, 11);
    let copies = ["copy0", "copy1", "copy2", "copy3", "copy4", "copy5"];
    for name in copies {
        fs::write(dir.join(name), &data).unwrap();
    }
    // Eight files of one size: enough timed heads to measure the device.
    for (name, at) in [("last-byte-differs", size - 1), ("differs-at-3-mib", 3 << 20)] {
        let mut other = data.clone();
        other[at] ^= 1;
        fs::write(dir.join(name), &other).unwrap();
    }
    let dev = fs::metadata(&dir).unwrap().dev();
    let Some(throttle) = Throttle::new(dev, SLOW_IOPS, test) else { return };
    let requests_of = |env: &[(&str, &str)]| {
        let (out, requests) = throttle.find_cold(&fs.mnt, env, &[]);
        let copies: Vec<String> = copies.iter().map(|c| format!("t/{c}")).collect();
        let copies: Vec<&str> = copies.iter().map(String::as_str).collect();
        assert_groups(&out, &sets(&[&copies]));
        (requests, out)
    };
    let (through_cache, _) = requests_of(&[("DEDUP_DIRECT_READS", "0")]);
    let (direct, out) = requests_of(&[]);
    let line = slow_samples_line(&out);
    assert!(line.contains("full reads around the page cache, 1.25 MiB a request"), "{line}");
    // Around the cache a whole file's chunks of 1.25, 2.5 and 4.25 MiB cost 7 requests, one
    // per 1.25 MiB (61 requests in all, with the samples and the walk, when measured); through
    // it the readahead's windows split unevenly (76-79 when measured).
    assert!(
        direct < through_cache && direct <= 68,
        "{direct} read requests around the page cache, {through_cache} through it"
    );
}

#[test]
fn a_slow_device_reads_whole_only_the_timed_files_alike_in_their_heads() {
    let test = "a_slow_device_reads_whole_only_the_timed_files_alike_in_their_heads";
    let Some((fs, dir)) = xfs_tree(test) else { return };
    // Eight pairs of one size each, sixteen files in all: every one is timed to measure the
    // device (no file is over a mebibyte). Only the first pair are copies.
    for pair in 0..8u64 {
        let size = (256 << 10) + pair as usize * 4096;
        let first = pattern(size, 100 + pair);
        let second = if pair == 0 { first.clone() } else { pattern(size, 200 + pair) };
        fs::write(dir.join(format!("pair{pair}-a")), &first).unwrap();
        fs::write(dir.join(format!("pair{pair}-b")), &second).unwrap();
    }
    let dev = fs::metadata(&dir).unwrap().dev();
    let Some(throttle) = Throttle::new(dev, SLOW_IOPS, test) else { return };

    let (out, requests) = throttle.find_cold(&fs.mnt, &[], &[]);
    let line = slow_samples_line(&out);
    assert!(line.contains("files up to 1.00 MiB read whole"), "{line}");
    assert_groups(&out, &sets(&[&["t/pair0-a", "t/pair0-b"]]));
    // The timed heads already tell the other seven pairs apart: sixteen heads and the two
    // copies read whole (19 requests with the walk when measured). Reading every timed class
    // whole again made 33.
    assert!(requests <= 24, "{requests} read requests for 16 heads and 2 copies");
}

/// Files a slow device reads whole are not sampled, but the cache keeps their head fingerprints
/// as it does of sampled files (taken from the first chunk, or from the timed head of one that
/// is read no further): a rescan with new files of their size reads only what could equal a new
/// file.
#[test]
fn a_slow_device_leaves_fingerprints_in_the_cache_for_files_it_read_whole() {
    let test = "a_slow_device_leaves_fingerprints_in_the_cache_for_files_it_read_whole";
    let Some((fs, dir)) = xfs_tree(test) else { return };
    // Twelve files of one size, fewer than the probe times: every head is timed, and only the
    // two copies are read whole.
    for k in 0..10u64 {
        fs::write(dir.join(format!("k{k}")), pattern(SIZE, 300 + k)).unwrap();
    }
    let copy = pattern(SIZE, 399);
    fs::write(dir.join("g1"), &copy).unwrap();
    fs::write(dir.join("g2"), &copy).unwrap();
    let dev = fs::metadata(&dir).unwrap().dev();
    let Some(throttle) = Throttle::new(dev, SLOW_IOPS, test) else { return };
    let cache = tmp();
    let cache_dir = cache.path().to_str().unwrap();
    settle();

    let (first, _) = throttle.find_cold(&fs.mnt, &[], &["--cache-dir", cache_dir]);
    let line = slow_samples_line(&first);
    assert!(line.contains("files up to 1.00 MiB read whole"), "{line}");
    assert_groups(&first, &sets(&[&["t/g1", "t/g2"]]));

    fs::copy(dir.join("k1"), dir.join("n1")).unwrap();
    fs::write(dir.join("n2"), pattern(SIZE, 398)).unwrap();
    settle();
    let (second, _) = throttle.find_cold(&fs.mnt, &[], &["--cache-dir", cache_dir]);
    assert_groups(&second, &sets(&[&["t/g1", "t/g2"], &["t/k1", "t/n1"]]));
    // The new files' heads tell them apart from every cached file but k1: the nine other k
    // files and the copies (known by digest) are settled without a read.
    assert_eq!(second.cache_unread(), 11, "{}", second.dump());
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
