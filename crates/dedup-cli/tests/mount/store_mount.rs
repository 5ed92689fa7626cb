//! `dedup store mount` through the real binary and the kernel: a tree of awkward entries
//! (non-UTF-8 names, symlinks, empty, sparse and multi-chunk files, hard links, a FIFO, a
//! directory larger than one readdir buffer) backed up twice from two hosts, mounted in the
//! background and read back whole through the mount: content, sizes, modes, owners, times,
//! symlink targets, xattrs and hard links compared with the source; `latest`, `hosts/` and
//! short ids; reads at odd offsets and lengths (through the page cache and with O_DIRECT, which
//! hands the offsets to the program as they are). Unmounting with `fusermount3 -u` and SIGTERM
//! both end the program with status 0 and leave no mount. Skipped with a message without
//! /dev/fuse or fusermount3, failed then under DEDUP_TEST_REQUIRE_ALL=1.

use crate::common;
use crate::common::s3server;

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::store::{init_repo, look, store_ok, PASSWORD};
use common::{require, BIN};

/// How long a mount may take to appear or to end.
const WAIT: Duration = Duration::from_secs(30);

fn fuse_available(test: &str) -> bool {
    let helper = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join("fusermount3").is_file()));
    require(Path::new("/dev/fuse").exists(), test, "/dev/fuse is missing")
        && require(helper, test, "fusermount3 is not installed (Debian: fuse3)")
}

/// A temporary directory holding a repository path, an empty source directory and an empty
/// mount point (the directory goes when the first value is dropped).
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, src, point) =
        (tmp.path().join("repo"), tmp.path().join("src"), tmp.path().join("mnt"));
    fs::create_dir(&src).unwrap();
    fs::create_dir(&point).unwrap();
    (tmp, repo, src, point)
}

/// The awkward tree; returns the path of the multi-chunk file.
fn make_tree(src: &Path) -> PathBuf {
    fs::create_dir_all(src.join("sub/deeper")).unwrap();
    fs::write(src.join("plain.txt"), b"hello through FUSE\n").unwrap();
    fs::write(src.join("empty"), b"").unwrap();
    fs::write(src.join(OsStr::from_bytes(b"caf\xe9 \xff name")), b"latin-1 name").unwrap();
    std::os::unix::fs::symlink("plain.txt", src.join("link")).unwrap();
    std::os::unix::fs::symlink("/nowhere/at/all", src.join("dangling")).unwrap();
    std::os::unix::fs::symlink(OsStr::from_bytes(b"caf\xe9"), src.join("odd-target")).unwrap();
    let sparse = File::create(src.join("sparse")).unwrap();
    sparse.set_len(5 << 20).unwrap();
    sparse.write_all_at(b"an island of data", 3 << 20).unwrap();
    let big = src.join("sub/big.bin");
    fs::write(&big, common::pattern((6 << 20) + 12_345, 7)).unwrap();
    fs::write(src.join("sub/hard-a"), common::pattern(200_000, 3)).unwrap();
    fs::hard_link(src.join("sub/hard-a"), src.join("sub/deeper/hard-b")).unwrap();
    fs::write(src.join("sub/deeper/secret"), b"mode 0640").unwrap();
    fs::set_permissions(src.join("sub/deeper/secret"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::set_permissions(src.join("sub/deeper"), fs::Permissions::from_mode(0o700)).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        src.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let _ = rustix::fs::setxattr(
        src.join("plain.txt").as_path(),
        "user.colour",
        b"teal",
        rustix::fs::XattrFlags::empty(),
    );
    // More entries than one readdir buffer holds: the listing is read in several calls.
    let many = src.join("many");
    fs::create_dir(&many).unwrap();
    for n in 0..300 {
        fs::write(
            many.join(format!("entry-{n:04}-with-a-rather-long-name-to-fill-buffers")),
            [n as u8],
        )
        .unwrap();
    }
    big
}

/// A running `dedup store mount`; unmounts and reaps it if the test ends early.
struct Mount {
    child: Option<Child>,
    point: PathBuf,
}

impl Mount {
    fn start(repo: &Path, point: &Path) -> Mount {
        let child = Command::new(BIN)
            .args(["store", "-r"])
            .arg(repo)
            .arg("mount")
            .arg(point)
            .env("DEDUP_PASSWORD", PASSWORD)
            .env_remove("DEDUP_REPO")
            .env_remove("DEDUP_PASSWORD_FILE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut mount = Mount { child: Some(child), point: point.to_path_buf() };
        let start = Instant::now();
        while !point.join("snapshots").is_dir() {
            if let Some(status) = mount.child().try_wait().unwrap() {
                panic!("dedup store mount ended before mounting: {status}\n{}", mount.stderr());
            }
            assert!(start.elapsed() < WAIT, "the mount did not appear within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        mount
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

    /// Waits for the program to end; its status and what it wrote to stderr.
    fn wait(mut self) -> (ExitStatus, String) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child().try_wait().unwrap() {
                let stderr = self.stderr();
                self.child = None;
                return (status, stderr);
            }
            assert!(start.elapsed() < WAIT, "dedup store mount did not end within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("fusermount3").arg("-uz").arg(&self.point).status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn is_mounted(point: &Path) -> bool {
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap();
    let point = point.canonicalize().unwrap();
    mounts.lines().any(|line| line.split(' ').nth(1) == Some(point.to_str().unwrap()))
}

fn snapshot_ids(repo: &Path) -> Vec<(String, String)> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s["host"].as_str().unwrap().to_string()))
        .collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `path` inside a snapshot's directory: the tree mirrors the absolute paths backed up.
fn inside(snapshot_dir: &Path, path: &Path) -> PathBuf {
    snapshot_dir.join(path.strip_prefix("/").unwrap())
}

/// Reads `len` bytes at `offset` in every way the kernel passes reads on.
fn assert_reads_at(mounted: &Path, expected: &[u8], offset: u64, len: usize) {
    let want = &expected[(offset as usize).min(expected.len())..]
        [..len.min(expected.len().saturating_sub(offset as usize))];
    let cached = File::open(mounted).unwrap();
    let direct = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(mounted)
        .unwrap();
    for (how, file) in [("cached", &cached), ("O_DIRECT", &direct)] {
        let mut got = vec![0u8; len];
        let mut filled = 0;
        while filled < len {
            let n = file.read_at(&mut got[filled..], offset + filled as u64).unwrap();
            if n == 0 {
                break;
            }
            filled += n;
        }
        got.truncate(filled);
        assert!(got == want, "{how} read of {len} bytes at {offset} differs from the source");
    }
}

#[test]
fn a_mounted_snapshot_reads_as_its_source() {
    if !fuse_available("a_mounted_snapshot_reads_as_its_source") {
        return;
    }
    let (_tmp, repo, src, point) = scratch();
    init_repo(&repo);
    let big = make_tree(&src);
    let before = look(&src);
    let big_bytes = fs::read(&big).unwrap();
    store_ok(&repo, &[OsStr::new("backup"), "--host".as_ref(), "alpha".as_ref(), src.as_os_str()]);
    fs::write(src.join("plain.txt"), b"second version\n").unwrap();
    store_ok(&repo, &[OsStr::new("backup"), "--host".as_ref(), "beta".as_ref(), src.as_os_str()]);
    let after = look(&src);
    let ids = snapshot_ids(&repo);
    assert_eq!(ids.len(), 2);

    let mount = Mount::start(&repo, &point);
    assert_eq!(names(&point), ["hosts", "latest", "snapshots"]);
    let shown = names(&point.join("snapshots"));
    assert_eq!(shown.len(), 2, "{shown:?}");
    for name in &shown {
        let stamp = name.get(..20).unwrap_or(name);
        assert!(
            stamp.len() == 20 && stamp.as_bytes()[10] == b'T' && stamp.ends_with('Z'),
            "snapshot directory {name:?} is not named by its time"
        );
    }
    // Each host's `latest` names its one snapshot (both may share a second: then their order
    // among the names is their ids').
    let name_of = |host: &str| {
        let target = fs::read_link(point.join("hosts").join(host).join("latest")).unwrap();
        target.to_str().unwrap().to_string()
    };
    let (first_name, second_name) = (name_of("alpha"), name_of("beta"));
    assert_ne!(first_name, second_name);
    assert!(shown.contains(&first_name) && shown.contains(&second_name), "{shown:?}");
    let first = point.join("snapshots").join(&first_name);
    let second = point.join("snapshots").join(&second_name);
    let latest = fs::read_link(point.join("latest")).unwrap();
    assert_eq!(latest, Path::new("snapshots").join(&second_name));

    // Every entry, as the source was at each backup.
    common::store::assert_looks_equal(&before, &look(&inside(&first, &src)), "first snapshot");
    common::store::assert_looks_equal(
        &after,
        &look(&inside(&point.join("latest"), &src)),
        "latest",
    );
    let linked = inside(&first, &src);
    let (a, b) = (
        fs::metadata(linked.join("sub/hard-a")).unwrap(),
        fs::metadata(linked.join("sub/deeper/hard-b")).unwrap(),
    );
    assert_eq!((a.ino(), a.nlink()), (b.ino(), 2), "hard links share an inode");
    assert_eq!(fs::metadata(linked.join("sparse")).unwrap().len(), 5 << 20);
    assert!(fs::symlink_metadata(linked.join("fifo")).unwrap().file_type().is_fifo());

    // By host, with their own `latest`; by short id.
    assert_eq!(names(&point.join("hosts")), ["alpha", "beta"]);
    assert_eq!(names(&point.join("hosts/alpha")), [first_name.as_str(), "latest"]);
    let by_host = inside(&point.join("hosts/alpha").join(&first_name), &src);
    common::store::assert_looks_equal(&before, &look(&by_host), "hosts/alpha");
    assert_eq!(
        fs::read(inside(&point.join("hosts/beta/latest"), &src).join("plain.txt")).unwrap(),
        b"second version\n"
    );
    let (first_id, _) = ids.iter().find(|(_, host)| host == "alpha").unwrap();
    let by_id = point.join("snapshots").join(&first_id[..8]);
    assert_eq!(fs::read_link(&by_id).unwrap(), Path::new(&first_name));
    assert_eq!(fs::read(inside(&by_id, &src).join("plain.txt")).unwrap(), b"hello through FUSE\n");
    let flipped =
        format!("{}{}", if first_id.starts_with('0') { '1' } else { '0' }, &first_id[1..8]);
    if !ids.iter().any(|(id, _)| id.starts_with(&flipped)) {
        assert!(!point.join("snapshots").join(&flipped).exists(), "{flipped} names no snapshot");
    }

    // Odd offsets and lengths, across chunk boundaries, up to and past the end.
    let mounted_big = inside(&second, &src).join("sub/big.bin");
    let len = big_bytes.len() as u64;
    for (offset, size) in [
        (0, 1),
        (1, 3),
        (4095, 2),
        (65_537, 70_001),
        (1_000_003, (1 << 20) + 7),
        (len / 2 + 5, 300_000),
        (len - 7, 7),
        (len - 3, 100),
        (len, 10),
        (len + 4096, 10),
    ] {
        assert_reads_at(&mounted_big, &big_bytes, offset, size);
    }

    // Read-only.
    let written = fs::write(inside(&second, &src).join("plain.txt"), b"x");
    assert!(written.is_err(), "a write through the mount succeeded");

    // Snapshots made and forgotten while mounted come and go (the top is looked at again at
    // most once a second).
    fs::write(src.join("plain.txt"), b"third version\n").unwrap();
    store_ok(&repo, &[OsStr::new("backup"), "--host".as_ref(), "gamma".as_ref(), src.as_os_str()]);
    store_ok(&repo, &["forget", first_id.as_str()]);
    let start = Instant::now();
    while names(&point.join("hosts")) != ["beta", "gamma"] {
        assert!(start.elapsed() < WAIT, "hosts/ is still {:?}", names(&point.join("hosts")));
        std::thread::sleep(Duration::from_millis(100));
    }
    let now_shown = names(&point.join("snapshots"));
    assert_eq!(now_shown.len(), 2, "{now_shown:?}");
    assert!(now_shown.contains(&second_name) && !now_shown.contains(&first_name), "{now_shown:?}");
    let third = fs::read_link(point.join("hosts/gamma/latest")).unwrap();
    // The kernel may still hold the old `latest` for up to a second.
    while fs::read_link(point.join("latest")).unwrap() != Path::new("snapshots").join(&third) {
        assert!(start.elapsed() < WAIT, "latest does not name the new snapshot");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        fs::read(inside(&point.join("latest"), &src).join("plain.txt")).unwrap(),
        b"third version\n"
    );
    assert_eq!(fs::read(inside(&second, &src).join("plain.txt")).unwrap(), b"second version\n");

    let unmounted = Command::new("fusermount3").arg("-u").arg(&point).status().unwrap();
    assert!(unmounted.success());
    let (status, stderr) = mount.wait();
    assert!(status.success(), "mount ended with {status}\n{stderr}");
    assert!(!is_mounted(&point));
    assert!(names(&point).is_empty());
}

#[test]
fn sigterm_unmounts_and_exits_cleanly() {
    if !fuse_available("sigterm_unmounts_and_exits_cleanly") {
        return;
    }
    let (_tmp, repo, src, point) = scratch();
    fs::write(src.join("file"), b"content").unwrap();
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);

    let mut mount = Mount::start(&repo, &point);
    assert!(is_mounted(&point));
    assert_eq!(fs::read(inside(&point.join("latest"), &src).join("file")).unwrap(), b"content");
    let pid = rustix::process::Pid::from_child(mount.child());
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let (status, stderr) = mount.wait();
    assert!(status.success(), "mount ended with {status} after SIGTERM\n{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    assert!(!is_mounted(&point), "still mounted after SIGTERM");
    assert!(names(&point).is_empty());

    // In use when the signal comes: detached at once, served until the open file is closed.
    let mut mount = Mount::start(&repo, &point);
    let open = File::open(inside(&point.join("latest"), &src).join("file")).unwrap();
    let pid = rustix::process::Pid::from_child(mount.child());
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let start = Instant::now();
    while is_mounted(&point) {
        assert!(start.elapsed() < WAIT, "the busy mount was not detached");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(mount.child().try_wait().unwrap(), None, "ended while a file was still open");
    let mut content = String::new();
    (&open).read_to_string(&mut content).unwrap();
    assert_eq!(content, "content", "the open file reads on after the detach");
    drop(open);
    let (status, stderr) = mount.wait();
    assert!(status.success(), "busy mount ended with {status}\n{stderr}");
    assert!(stderr.contains("detached"), "{stderr}");
}

#[test]
fn a_repository_on_s3_mounts_the_same() {
    let test = "a_repository_on_s3_mounts_the_same";
    if !fuse_available(test) {
        return;
    }
    let Some(server) = s3server::S3Server::start(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (src, point) = (tmp.path().join("src"), tmp.path().join("mnt"));
    let repo = server.repo("mounted");
    fs::create_dir(&point).unwrap();
    fs::create_dir_all(src.join("dir")).unwrap();
    fs::write(src.join("dir/several-chunks.bin"), common::pattern(700_000, 11)).unwrap();
    fs::write(src.join("small"), b"on object storage").unwrap();
    std::os::unix::fs::symlink("small", src.join("link")).unwrap();
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    let mount = Mount::start(&repo, &point);
    common::store::assert_looks_equal(
        &look(&src),
        &look(&inside(&point.join("latest"), &src)),
        "s3",
    );
    assert!(Command::new("fusermount3").arg("-u").arg(&point).status().unwrap().success());
    let (status, stderr) = mount.wait();
    assert!(status.success(), "mount ended with {status}\n{stderr}");
}

#[test]
fn damaged_data_reads_as_an_error_and_the_mount_goes_on() {
    let test = "damaged_data_reads_as_an_error_and_the_mount_goes_on";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, src, point) = scratch();
    fs::write(src.join("damaged.bin"), common::pattern(600_000, 5)).unwrap();
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    // The largest pack holds the file's data (the tree's pack is a few hundred bytes).
    let largest = common::store::repo_names(&repo, "data")
        .into_iter()
        .max_by_key(|name| fs::metadata(repo.join(name)).unwrap().len())
        .unwrap();
    let pack = repo.join(largest);
    let mut bytes = fs::read(&pack).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    fs::write(&pack, bytes).unwrap();

    let mount = Mount::start(&repo, &point);
    let file = inside(&point.join("latest"), &src).join("damaged.bin");
    assert_eq!(fs::metadata(&file).unwrap().len(), 600_000, "metadata comes from the tree");
    let read = fs::read(&file);
    let err = read.expect_err("a damaged chunk read back as data");
    assert_eq!(err.raw_os_error(), Some(rustix::io::Errno::IO.raw_os_error()), "{err}");
    // The mount still answers.
    assert_eq!(names(&inside(&point.join("latest"), &src)), ["damaged.bin"]);
    assert!(Command::new("fusermount3").arg("-u").arg(&point).status().unwrap().success());
    let (status, stderr) = mount.wait();
    assert!(status.success(), "mount ended with {status}\n{stderr}");
    // The message names the file by its path in the snapshot, not by an inode number alone.
    let place = format!("error: reading {}/damaged.bin in snapshot ", src.display());
    assert!(stderr.contains(&place) && stderr.contains("data blob"), "{stderr}");
}

/// The whole file, read with O_DIRECT: past the page cache, from the mount program each time.
fn read_direct(path: &Path) -> Vec<u8> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(path)
        .unwrap();
    let mut out = Vec::new();
    (&file).read_to_end(&mut out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

#[test]
fn files_read_on_after_a_prune_moves_their_chunks() {
    let test = "files_read_on_after_a_prune_moves_their_chunks";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, src, point) = scratch();
    // Files to keep and to drop side by side in name order, so that their chunks share packs
    // and the prune has to copy the kept ones into new packs.
    for n in 0..12u64 {
        fs::write(src.join(format!("{n:02}-keep")), common::pattern(150_000, 100 + n)).unwrap();
        fs::write(src.join(format!("{n:02}-drop")), common::pattern(150_000, 200 + n)).unwrap();
    }
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    let first = snapshot_ids(&repo)[0].0.clone();
    for n in 0..12 {
        fs::remove_file(src.join(format!("{n:02}-drop"))).unwrap();
    }
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    let expected = look(&src);

    let mount = Mount::start(&repo, &point);
    let mounted = inside(&point.join("latest"), &src);
    // Half of them read before the prune (their chunks are then in the mount's cache); the
    // others are first read after it, through an index that must be read again.
    for n in (0..12).step_by(2) {
        let name = format!("{n:02}-keep");
        assert_eq!(read_direct(&mounted.join(&name)), fs::read(src.join(&name)).unwrap());
    }
    let packs_before = common::store::repo_names(&repo, "data");
    store_ok(&repo, &["forget", first.as_str()]);
    store_ok(&repo, &["prune"]);
    let packs_after = common::store::repo_names(&repo, "data");
    assert!(
        packs_before.iter().any(|p| !packs_after.contains(p))
            && packs_after.iter().any(|p| !packs_before.contains(p)),
        "the prune repacked nothing: the test shows nothing"
    );
    // The index files changed; reads notice within a second.
    std::thread::sleep(Duration::from_millis(1100));
    for n in 0..12 {
        let name = format!("{n:02}-keep");
        assert_eq!(read_direct(&mounted.join(&name)), fs::read(src.join(&name)).unwrap(), "{name}");
    }
    common::store::assert_looks_equal(&expected, &look(&mounted), "after the prune");
    assert!(Command::new("fusermount3").arg("-u").arg(&point).status().unwrap().success());
    let (status, stderr) = mount.wait();
    assert!(status.success(), "mount ended with {status}\n{stderr}");
}

#[test]
fn a_mount_point_must_be_an_empty_directory() {
    if !fuse_available("a_mount_point_must_be_an_empty_directory") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    init_repo(&repo);
    let full = tmp.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("x"), b"").unwrap();
    for (point, says) in [
        (full.as_path(), "not empty"),
        (&tmp.path().join("absent"), "no such directory"),
        (&full.join("x"), "not a directory"),
    ] {
        let out = common::store::store(&repo, &[OsStr::new("mount"), point.as_os_str()]);
        assert_ne!(out.code(), 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{point:?}: {err}");
    }
    // A user who is not root mounts through fusermount3: without it, a clear error (tried as
    // user nobody, which only root can become).
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let Some(setpriv) =
        ["/usr/bin/setpriv", "/bin/setpriv"].into_iter().find(|p| Path::new(p).exists())
    else {
        return;
    };
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let out = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN, "store", "-r"])
        .arg(&repo)
        .arg("mount")
        .arg(&empty)
        .env("PATH", tmp.path().join("no-programs-here"))
        .env("DEDUP_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fusermount3 is not installed"), "{err}");
}
