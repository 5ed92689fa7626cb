//! Helpers for the black-box tests of `dedup store`: running store commands with a password,
//! small repositories, and what a tree looks like (content and the metadata a restore must
//! bring back) so that a restore can be compared with its source as it was.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use super::{run, Out, BIN, TIMEOUT};

/// The password of every test repository.
pub const PASSWORD: &str = "correct horse";

/// `dedup store` on `repo` with the password in the environment, no other source of settings.
pub fn store_cmd(repo: &Path) -> assert_cmd::Command {
    super::isolate_client();
    let mut c = assert_cmd::Command::new(BIN);
    c.timeout(TIMEOUT)
        .arg("store")
        .arg("-r")
        .arg(repo)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE");
    c
}

/// Starts `dedup store -r REPO <args>` in the background (stderr kept for [`wait_ok`]), as
/// [`store_cmd`] sets it up: for commands that must run at the same time as others.
pub fn spawn_store<S: AsRef<OsStr>>(repo: &Path, args: &[S]) -> std::process::Child {
    super::isolate_client();
    std::process::Command::new(BIN)
        .arg("store")
        .arg("-r")
        .arg(repo)
        .args(args)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts a quiet backup of `src` as host `host{h}`: one of several machines at once.
pub fn spawn_backup(repo: &Path, h: usize, src: &Path) -> std::process::Child {
    let host = format!("host{h}");
    let args: [&OsStr; 5] =
        ["backup".as_ref(), "--quiet".as_ref(), "--host".as_ref(), host.as_ref(), src.as_os_str()];
    spawn_store(repo, &args)
}

/// Waits for a command started by [`spawn_store`] and asserts it succeeded (`what` names it).
pub fn wait_ok(child: std::process::Child, what: &str) {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Runs `dedup store -r REPO <args>`.
pub fn store<S: AsRef<OsStr>>(repo: &Path, args: &[S]) -> Out {
    run(store_cmd(repo).args(args))
}

/// Runs `dedup store -r REPO <args>`, asserts success and returns stdout.
#[track_caller]
pub fn store_ok<S: AsRef<OsStr>>(repo: &Path, args: &[S]) -> String {
    let out = store(repo, args);
    out.assert_code(0);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `dedup store -r REPO <args>` as user and group nobody (65534) via setpriv.
pub fn store_as_nobody<S: AsRef<OsStr>>(repo: &Path, args: &[S]) -> Out {
    super::isolate_client();
    let own = super::nobody_client_dir();
    let mut c = assert_cmd::Command::new("setpriv");
    c.timeout(TIMEOUT)
        .env("XDG_STATE_HOME", own.join("state"))
        .env("XDG_CACHE_HOME", own.join("cache"))
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(BIN)
        .arg("store")
        .arg("-r")
        .arg(repo)
        .args(args)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE");
    run(&mut c)
}

/// `dedup store -r REPO` as [`store_cmd`] sets it up, run by `sh` after `umask 000`, so that any
/// mode the program does not ask for itself shows.
pub fn store_cmd_under_umask_0(repo: &Path) -> assert_cmd::Command {
    super::isolate_client();
    let mut c = assert_cmd::Command::new("sh");
    c.timeout(TIMEOUT)
        .args(["-c", "umask 000; exec \"$0\" \"$@\"", BIN, "store", "-r"])
        .arg(repo)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .env_remove("DEDUP_PASSWORD_FILE");
    c
}

/// Walks `root` (not following links), asserting that every directory is 0700 and every file
/// 0600; returns the number of files.
#[track_caller]
pub fn assert_private(root: &Path) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let mut files = 0;
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "{}", path.display());
            pending.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            assert_eq!(mode, 0o600, "{}", path.display());
            files += 1;
        }
    }
    files
}

/// Creates a repository with a cheap key, 1 MiB packs and small chunks (16 / 64 / 256 KiB), so
/// that small trees span several chunks and packs.
#[track_caller]
pub fn init_repo(repo: &Path) {
    store_ok(
        repo,
        &[
            "init",
            "--kdf-memory-kib",
            "64",
            "--kdf-iterations",
            "1",
            "--pack-size",
            "1M",
            "--chunker",
            "fastcdc:16K/64K/256K",
        ],
    );
}

/// The times of the directories above a backed-up path. A snapshot records the directories on
/// the way to what it backs up, with their times: `/tmp` and the like, which tests running beside
/// this one change whenever they make or remove a directory, so a backup of an unchanged tree
/// rightly stores new trees for them. Taken before a first backup, it lets a test ask for the
/// next backup made while nothing above the path changed since the one before.
pub struct Ancestors<'p> {
    path: &'p Path,
    seen: Vec<(i64, i64, i64, i64, i64, i64)>,
}

impl<'p> Ancestors<'p> {
    /// The directories above `path` as they are now: take it before the first backup.
    pub fn of(path: &'p Path) -> Ancestors<'p> {
        Ancestors { path, seen: Self::stamps(path) }
    }

    fn stamps(path: &Path) -> Vec<(i64, i64, i64, i64, i64, i64)> {
        path.ancestors()
            .skip(1)
            .map(|a| {
                let m = fs::symlink_metadata(a).unwrap();
                (m.atime(), m.atime_nsec(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
            })
            .collect()
    }

    /// The result of `backup` (a closure running one) from a run during which, and since the
    /// previous backup, nothing above the path changed; made again (up to ten times) when
    /// something did, instead of taking its new trees for the path's.
    pub fn still_backup(
        &mut self,
        mut backup: impl FnMut() -> serde_json::Value,
    ) -> serde_json::Value {
        let mut tries = 0;
        loop {
            let done = backup();
            let now = Self::stamps(self.path);
            tries += 1;
            if now == self.seen || tries == 10 {
                return done;
            }
            self.seen = now;
        }
    }
}

/// `backup --json PATH`, asserting success; the summary.
#[track_caller]
pub fn backup_json(repo: &Path, path: &Path) -> serde_json::Value {
    let out = store(repo, &[OsStr::new("backup"), OsStr::new("--json"), path.as_os_str()]);
    out.assert_code(0);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("backup --json: {e}\n{}", out.dump()))
}

/// The id of the newest snapshot whose paths are exactly `[path]`.
#[track_caller]
pub fn snapshot_of(repo: &Path, path: &Path) -> String {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    let wanted = serde_json::Value::from(vec![path.to_str().unwrap()]);
    list.as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|s| s["paths"] == wanted)
        .unwrap_or_else(|| panic!("no snapshot of {}", path.display()))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every file of the repository with its bytes, by path relative to it.
pub fn repo_files(repo: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![repo.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(repo).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Bytes of the repository's packs (not of the temporary file a kill leaves mid-write).
pub fn pack_bytes(repo: &Path) -> u64 {
    repo_files(repo)
        .iter()
        .filter(|(n, _)| n.starts_with("data/") && !n.contains("/."))
        .map(|(_, b)| b.len() as u64)
        .sum()
}

/// Names of the repository's files under `folder`, sorted.
pub fn repo_names(repo: &Path, folder: &str) -> Vec<String> {
    repo_files(repo).into_keys().filter(|k| k.starts_with(&format!("{folder}/"))).collect()
}

/// What one entry of a tree looks like: the fields a restore brings back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// `f` file, `d` directory, `l` symlink, `p` FIFO, `o` other.
    pub kind: char,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub mtime_ns: i64,
    /// A file's content or a symlink's target.
    pub data: Vec<u8>,
    /// For a file with hard links in the tree: the first of its paths.
    pub link: Option<Vec<u8>>,
    /// Extended attributes (`user.` ones), sorted.
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
}

fn xattrs(path: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut names = vec![0u8; 4096];
    let Ok(len) = rustix::fs::llistxattr(path, &mut names) else { return Vec::new() };
    let mut out: Vec<_> = names[..len]
        .split(|&b| b == 0)
        .filter(|n| n.starts_with(b"user."))
        .map(|name| {
            let mut value = vec![0u8; 65536];
            let n = rustix::fs::lgetxattr(path, OsStr::from_bytes(name), &mut value).unwrap_or(0);
            value.truncate(n);
            (name.to_vec(), value)
        })
        .collect();
    out.sort();
    out
}

/// Every entry under `root` (the root itself as the empty path), not following symlinks.
pub fn look(root: &Path) -> BTreeMap<Vec<u8>, Seen> {
    let mut out = BTreeMap::new();
    let mut inode_of: BTreeMap<Vec<u8>, (u64, u64)> = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let rel = path.strip_prefix(root).unwrap().as_os_str().as_bytes().to_vec();
        let kind = meta.file_type();
        let (letter, data) = if kind.is_file() {
            ('f', fs::read(&path).unwrap())
        } else if kind.is_dir() {
            for entry in fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
            ('d', Vec::new())
        } else if kind.is_symlink() {
            ('l', fs::read_link(&path).unwrap().as_os_str().as_bytes().to_vec())
        } else {
            use std::os::unix::fs::FileTypeExt;
            (if kind.is_fifo() { 'p' } else { 'o' }, Vec::new())
        };
        if kind.is_file() && meta.nlink() > 1 {
            inode_of.insert(rel.clone(), (meta.dev(), meta.ino()));
        }
        let seen = Seen {
            kind: letter,
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            data,
            link: None,
            xattrs: xattrs(&path),
        };
        out.insert(rel, seen);
    }
    // Paths come sorted, so the first path met of each inode is its smallest.
    let mut first: BTreeMap<(u64, u64), Vec<u8>> = BTreeMap::new();
    for (rel, inode) in &inode_of {
        let name = first.entry(*inode).or_insert_with(|| rel.clone()).clone();
        out.get_mut(rel).unwrap().link = Some(name);
    }
    out
}

/// Asserts that two looks are equal, naming the first paths that differ.
#[track_caller]
pub fn assert_looks_equal(
    expected: &BTreeMap<Vec<u8>, Seen>,
    found: &BTreeMap<Vec<u8>, Seen>,
    what: &str,
) {
    if expected == found {
        return;
    }
    let mut lines = Vec::new();
    for (path, seen) in expected {
        match found.get(path) {
            None => lines.push(format!("missing: {:?}", String::from_utf8_lossy(path))),
            Some(other) if other != seen => lines.push(format!(
                "differs: {:?}\n  expected {}\n  found    {}",
                String::from_utf8_lossy(path),
                brief(seen),
                brief(other)
            )),
            Some(_) => {}
        }
    }
    for path in found.keys().filter(|p| !expected.contains_key(*p)) {
        lines.push(format!("extra: {:?}", String::from_utf8_lossy(path)));
    }
    lines.truncate(12);
    panic!("{what}: the restore differs from the tree backed up\n{}", lines.join("\n"));
}

fn brief(seen: &Seen) -> String {
    format!(
        "{} {:o} {}:{} mtime {} {} bytes link {:?} xattrs {}",
        seen.kind,
        seen.mode,
        seen.uid,
        seen.gid,
        seen.mtime_ns,
        seen.data.len(),
        seen.link.as_ref().map(|l| String::from_utf8_lossy(l).into_owned()),
        seen.xattrs.len()
    )
}

/// Restores `snapshot` (an id prefix or `latest`) at `source` (the absolute path backed up) into
/// the fresh directory `target`, and asserts it looks as `expected`.
#[track_caller]
pub fn assert_restores(
    repo: &Path,
    snapshot: &str,
    source: &Path,
    target: &Path,
    expected: &BTreeMap<Vec<u8>, Seen>,
) {
    let spec = format!("{snapshot}:{}", source.display());
    let out = store(
        repo,
        &[OsStr::new("restore"), OsStr::new(&spec), "--target".as_ref(), target.as_os_str()],
    );
    out.assert_code(0);
    assert_looks_equal(expected, &look(target), &format!("snapshot {snapshot}"));
}

/// Backs `src` up into a new repository at `repo`, whose files lie in `on_disk` (the server's
/// folder of a remote one), loses its config, and asserts that `init` there is refused and
/// writes no new config.
#[track_caller]
pub fn assert_init_refuses_remains(repo: &Path, on_disk: &Path, src: &Path) {
    init_repo(repo);
    store_ok(repo, &[std::ffi::OsStr::new("backup"), src.as_os_str()]);
    fs::remove_file(on_disk.join("config")).unwrap();
    let out = store(repo, &["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1"]);
    out.assert_code(2);
    out.assert_message("error", "holds part of a repository (keys/ (1 file(s))");
    assert!(!on_disk.join("config").exists(), "a new config was written");
}

/// Sets the modification time of `file` over and over until `stop`, from before this returns.
pub fn keep_touching(file: &Path, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let handle = fs::OpenOptions::new().write(true).open(file).unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let started_here = Arc::clone(&started);
    let thread = std::thread::spawn(move || {
        let base = UNIX_EPOCH + Duration::from_secs(1_600_000_000);
        let limit = Instant::now() + Duration::from_secs(300);
        let mut i = 0u64;
        while !stop.load(Ordering::SeqCst) && Instant::now() < limit {
            i += 1;
            handle.set_modified(base + Duration::from_millis(i)).unwrap();
            started_here.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    while !started.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    thread
}
