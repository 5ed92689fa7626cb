//! Shared helpers for the black-box tests of every job: running the real binary, parsing its
//! JSON report, building awkward trees; the store's, the actions' and the mirror's helpers and
//! the test servers (S3, SFTP) in submodules.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_dedup");

/// Default time limit for one run of the binary: generous for a debug build,
/// but a hang (e.g. a FIFO opened for reading) still ends the test.
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// Result of one run of the binary.
#[derive(Debug)]
pub struct Out {
    /// Exit code, `None` if killed by a signal (or the timeout).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Out {
    /// Human-readable dump for assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "exit code: {:?}\n--- stdout ({} bytes) ---\n{}\n--- stderr ---\n{}",
            self.code,
            self.stdout.len(),
            truncate(&String::from_utf8_lossy(&self.stdout), 6000),
            truncate(&String::from_utf8_lossy(&self.stderr), 6000),
        )
    }

    /// The exit code; panics if the process was killed (timeout or signal).
    pub fn code(&self) -> i32 {
        match self.code {
            Some(c) => c,
            None => {
                panic!("dedup was killed by a signal or ran into the test timeout\n{}", self.dump())
            }
        }
    }

    /// Asserts the exit code.
    #[track_caller]
    pub fn assert_code(&self, expected: i32) -> &Self {
        assert_eq!(self.code(), expected, "unexpected exit status\n{}", self.dump());
        self
    }

    /// Parses stdout as a JSON report.
    #[track_caller]
    pub fn json(&self) -> Report {
        Report::parse(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not a valid JSON report: {e}\n{}", self.dump()))
    }

    /// stderr, lossily decoded, split into lines.
    pub fn stderr_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.stderr).lines().map(str::to_owned).collect()
    }

    /// Files the `-v` cache line says needed no read at all.
    #[track_caller]
    pub fn cache_unread(&self) -> u64 {
        let lines = self.stderr_lines();
        let line = lines
            .iter()
            .find(|l| l.starts_with("dedup: cache: "))
            .unwrap_or_else(|| panic!("no cache line\n{}", self.dump()));
        let before = line.split(" needed no read").next().unwrap();
        before.rsplit(' ').next().unwrap().replace(',', "").parse().unwrap()
    }

    /// Asserts there is a stderr line `dedup: <kind>: ...` that mentions `fragment`.
    #[track_caller]
    pub fn assert_message(&self, kind: &str, fragment: &str) {
        let prefix = format!("dedup: {kind}: ");
        let found =
            self.stderr_lines().iter().any(|l| l.starts_with(&prefix) && l.contains(fragment));
        assert!(
            found,
            "expected a stderr line starting with {prefix:?} naming {fragment:?}\n{}",
            self.dump()
        );
    }

    /// Asserts no stderr line mentions `fragment`.
    #[track_caller]
    pub fn assert_no_message_about(&self, fragment: &str) {
        let bad: Vec<String> =
            self.stderr_lines().into_iter().filter(|l| l.contains(fragment)).collect();
        assert!(
            bad.is_empty(),
            "unexpected stderr lines about {fragment:?}: {bad:?}\n{}",
            self.dump()
        );
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        s.to_owned()
    } else {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... [{} bytes more]", &s[..end], s.len() - end)
    }
}

/// A command running the binary in `dir`, with the default timeout.
pub fn cmd(dir: &Path) -> assert_cmd::Command {
    isolate_client();
    let mut c = assert_cmd::Command::new(BIN);
    c.current_dir(dir).timeout(TIMEOUT);
    c
}

/// Runs a prepared command and collects its result.
pub fn run(c: &mut assert_cmd::Command) -> Out {
    let o = c.output().expect("failed to spawn the dedup binary");
    Out { code: o.status.code(), stdout: o.stdout, stderr: o.stderr }
}

/// Runs `dedup find <args>` in `dir`.
pub fn find<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    run(cmd(dir).arg("find").args(args))
}

/// Runs `dedup find --format json <args>` in `dir`.
pub fn find_json<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    run(cmd(dir).args(["find", "--format", "json"]).args(args))
}

/// Runs `dedup find <args>` in `dir` as user/group nobody (65534) via setpriv.
pub fn find_as_nobody<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    let mut c = assert_cmd::Command::new("setpriv");
    c.current_dir(dir)
        .timeout(TIMEOUT)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(BIN)
        .arg("find")
        .args(args);
    run(&mut c)
}

/// True when the tests run as root.
pub fn is_root() -> bool {
    fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// A command (its program and arguments still to add) run in a private mount namespace whose
/// `/etc/fstab` is `fstab`, bind-mounted over the real one so that nothing outside the test
/// sees it; when `disk` is given, a tmpfs holding `photo.jpg` ("p\n") is mounted there first.
/// Root only (`unshare --mount`).
pub fn with_fstab(fstab: &Path, disk: Option<&Path>) -> assert_cmd::Command {
    let script = r#"mount --bind "$FSTAB" /etc/fstab || exit 90
        if [ -n "$DISK" ]; then
            mount -t tmpfs disk "$DISK" && echo p > "$DISK/photo.jpg" || exit 91
        fi
        exec "$@""#;
    let mut c = assert_cmd::Command::new("unshare");
    c.timeout(TIMEOUT)
        .args(["--mount", "--propagation", "private", "sh", "-c", script, "sh"])
        .env("FSTAB", fstab)
        .env("DISK", disk.map_or(OsString::new(), |m| m.as_os_str().to_owned()));
    c
}

/// Returns true if the test may go on; otherwise prints why it is skipped, or
/// fails when DEDUP_TEST_REQUIRE_ALL=1.
pub fn require(cond: bool, test: &str, why: &str) -> bool {
    if cond {
        return true;
    }
    if std::env::var("DEDUP_TEST_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{test}: cannot run: {why} (DEDUP_TEST_REQUIRE_ALL=1)");
    }
    eprintln!("SKIPPED {test}: {why} (set DEDUP_TEST_REQUIRE_ALL=1 to make this a failure)");
    false
}

// ---------------------------------------------------------------------------
// The JSON report
// ---------------------------------------------------------------------------

/// One file entry of a group.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: Vec<u8>,
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i64,
}

/// One group of the report.
#[derive(Debug, Clone)]
pub struct Group {
    pub size: u64,
    pub files: Vec<Entry>,
}

/// The summary of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub files_scanned: u64,
    pub groups: u64,
    pub redundant_files: u64,
    pub redundant_bytes: u64,
    pub errors: u64,
}

/// A parsed `--format json` report.
#[derive(Debug, Clone)]
pub struct Report {
    pub raw: Value,
    pub roots: Vec<Vec<u8>>,
    pub groups: Vec<Group>,
    pub summary: Summary,
}

/// Decodes a `{"text": ...}` / `{"bytes": <base64>}` path.
pub fn decode_path(v: &Value) -> Result<Vec<u8>, String> {
    let obj = v.as_object().ok_or_else(|| format!("path is not an object: {v}"))?;
    if obj.len() != 1 {
        return Err(format!("path object must have exactly one key: {v}"));
    }
    if let Some(t) = obj.get("text") {
        let s = t.as_str().ok_or_else(|| format!("text is not a string: {v}"))?;
        return Ok(s.as_bytes().to_vec());
    }
    if let Some(b) = obj.get("bytes") {
        let s = b.as_str().ok_or_else(|| format!("bytes is not a string: {v}"))?;
        return base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|e| format!("bad standard base64 in {v}: {e}"));
    }
    Err(format!("path object has neither text nor bytes: {v}"))
}

fn u64_field(v: &Value, k: &str) -> Result<u64, String> {
    v.get(k)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("missing or non-integer field {k:?} in {v}"))
}

impl Report {
    /// Parses the report, checking the shape of the contract.
    pub fn parse(bytes: &[u8]) -> Result<Report, String> {
        let raw: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if raw.get("version").and_then(Value::as_u64) != Some(1) {
            return Err("\"version\" is not 1".into());
        }
        let roots = raw
            .get("roots")
            .and_then(Value::as_array)
            .ok_or("missing \"roots\" array")?
            .iter()
            .map(decode_path)
            .collect::<Result<Vec<_>, _>>()?;
        let mut groups = Vec::new();
        for g in raw.get("groups").and_then(Value::as_array).ok_or("missing \"groups\" array")? {
            let size = u64_field(g, "size")?;
            let mut files = Vec::new();
            for f in g
                .get("files")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("group without \"files\" array: {g}"))?
            {
                files.push(Entry {
                    path: decode_path(f.get("path").ok_or_else(|| format!("no path: {f}"))?)?,
                    dev: u64_field(f, "dev")?,
                    ino: u64_field(f, "ino")?,
                    mtime_ns: f
                        .get("mtime_ns")
                        .and_then(Value::as_i64)
                        .ok_or_else(|| format!("missing mtime_ns: {f}"))?,
                });
            }
            groups.push(Group { size, files });
        }
        let s = raw.get("summary").ok_or("missing \"summary\"")?;
        let summary = Summary {
            files_scanned: u64_field(s, "files_scanned")?,
            groups: u64_field(s, "groups")?,
            redundant_files: u64_field(s, "redundant_files")?,
            redundant_bytes: u64_field(s, "redundant_bytes")?,
            errors: u64_field(s, "errors")?,
        };
        Ok(Report { raw, roots, groups, summary })
    }

    /// The groups, each as a sorted list of paths (duplicates kept), sorted.
    pub fn sets(&self) -> Sets {
        normalize(
            self.groups.iter().map(|g| g.files.iter().map(|f| f.path.clone()).collect()).collect(),
        )
    }

    /// Every path of every group.
    pub fn all_paths(&self) -> Vec<Vec<u8>> {
        self.groups.iter().flat_map(|g| g.files.iter().map(|f| f.path.clone())).collect()
    }

    /// True if some group lists `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.all_paths().iter().any(|p| p == path.as_bytes())
    }
}

/// A normalized set of groups: each group a sorted list of paths, the list sorted.
pub type Sets = Vec<Vec<Vec<u8>>>;

/// Normalizes groups (sorting, keeping duplicates so they are visible).
pub fn normalize(mut groups: Sets) -> Sets {
    for g in &mut groups {
        g.sort();
    }
    groups.sort();
    groups
}

/// Expected groups from string paths.
pub fn sets(groups: &[&[&str]]) -> Sets {
    normalize(groups.iter().map(|g| g.iter().map(|p| p.as_bytes().to_vec()).collect()).collect())
}

/// Expected groups from byte paths.
pub fn sets_b(groups: &[Vec<Vec<u8>>]) -> Sets {
    normalize(groups.to_vec())
}

/// Pretty form of groups for assertion messages.
pub fn show(s: &Sets) -> String {
    let mut out = String::new();
    for g in s {
        out.push_str("  [");
        for (i, p) in g.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&format!("{:?}", String::from_utf8_lossy(p)));
        }
        out.push_str("]\n");
    }
    if s.is_empty() {
        out.push_str("  (no groups)\n");
    }
    out
}

/// Asserts the report's groups equal `expected` exactly.
#[track_caller]
pub fn assert_groups(out: &Out, expected: &Sets) -> Report {
    let r = out.json();
    let got = r.sets();
    assert!(
        &got == expected,
        "groups differ\nexpected:\n{}got:\n{}\n{}",
        show(expected),
        show(&got),
        out.dump()
    );
    r
}

// ---------------------------------------------------------------------------
// Building trees
// ---------------------------------------------------------------------------

/// Files whose ctime is within 100 ms of a run's start are not cached (racily clean): wait
/// before a run that must cache what was just written.
pub fn settle() {
    std::thread::sleep(Duration::from_millis(250));
}

/// `len` bytes that neither compress nor deduplicate (xorshift from `seed`): the same seed gives
/// the same bytes, so tests can make identical files on purpose.
pub fn noise_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A fresh temporary directory.
pub fn tmp() -> tempfile::TempDir {
    isolate_client();
    tempfile::Builder::new().prefix("dedup-test-").tempdir().expect("create temp dir")
}

/// A temporary directory for a test that backs up a tree twice and expects the second backup to
/// add nothing: a snapshot records the directories above its path, and `/tmp`, where every
/// other test makes and removes its directories, changes all the time on a busy machine. Made
/// under `/var/tmp` (where tests make only these), so the directories above stay still.
pub fn quiet_tmp() -> tempfile::TempDir {
    isolate_client();
    let builder = tempfile::Builder::new().prefix("dedup-test-quiet-").clone();
    let quiet = Path::new("/var/tmp");
    if quiet.is_dir() { builder.tempdir_in(quiet) } else { builder.tempdir() }
        .expect("create temp dir")
}

/// What this test process's dedup children share, under `dedup-client-PID` in the temporary
/// directory: their state (XDG_STATE_HOME: the store's memory of repositories, ssh's control
/// sockets), their caches (XDG_CACHE_HOME), and for user nobody a place of its own.
pub fn client_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        // A later test process removes the directories of processes that are gone (a static
        // is never dropped).
        if let Ok(entries) = fs::read_dir(std::env::temp_dir()) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("dedup-client-")) else {
                    continue;
                };
                if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("dedup-client-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        // Traversable, so that nobody reaches its own part.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        dir
    })
}

/// Points every dedup process this test process starts (they inherit its environment) at the
/// state and cache directories of [`client_dir`], never the user's own, and lets their `init`
/// make the cheap keys the tests use (`--kdf-memory-kib 64`, below the floor users get). Called
/// by [`tmp`], [`cmd`] and the store helpers before any command runs; set once for the whole
/// process, so that tests running at once agree.
pub fn isolate_client() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let dir = client_dir();
        std::env::set_var("XDG_STATE_HOME", dir.join("state"));
        std::env::set_var("XDG_CACHE_HOME", dir.join("cache"));
        std::env::set_var("DEDUP_TEST_ALLOW_WEAK_KDF", "1");
        // No `--json` status lines, so that a test may read a backup's stdout as one summary
        // however long the run takes; store_json_progress turns them on where it tests them.
        std::env::set_var("DEDUP_JSON_STATUS_MS", "0");
    });
}

/// The state and cache directories of user nobody's dedup processes (root's are not theirs to
/// read), made once and given to nobody.
pub fn nobody_client_dir() -> PathBuf {
    let dir = client_dir().join("nobody");
    if !dir.exists() {
        let _ = fs::create_dir(&dir);
        let _ = std::os::unix::fs::chown(&dir, Some(65534), Some(65534));
    }
    dir
}

/// Path from raw bytes.
pub fn bpath(base: &Path, rel: &[u8]) -> PathBuf {
    base.join(OsStr::from_bytes(rel))
}

/// Writes `data` to `base/rel`, creating parent directories.
pub fn write(base: &Path, rel: &str, data: &[u8]) -> PathBuf {
    write_b(base, rel.as_bytes(), data)
}

/// Writes `data` to `base/rel` (raw bytes), creating parent directories.
pub fn write_b(base: &Path, rel: &[u8], data: &[u8]) -> PathBuf {
    let p = bpath(base, rel);
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("mkdir -p {parent:?}: {e}"));
    }
    let mut f = fs::File::create(&p).unwrap_or_else(|e| panic!("create {p:?}: {e}"));
    f.write_all(data).unwrap();
    p
}

/// Creates directory `base/rel` and its parents.
pub fn mkdir(base: &Path, rel: &str) -> PathBuf {
    let p = base.join(rel);
    fs::create_dir_all(&p).unwrap();
    p
}

/// Creates a hard link `base/link` to `base/target`.
pub fn hardlink(base: &Path, target: &str, link: &str) {
    let l = base.join(link);
    if let Some(parent) = l.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::hard_link(base.join(target), &l).unwrap();
}

/// Creates a symlink `base/link` whose content is `target` (verbatim).
pub fn symlink(base: &Path, target: &str, link: &str) {
    let l = base.join(link);
    if let Some(parent) = l.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    std::os::unix::fs::symlink(target, &l).unwrap();
}

/// The awkward entries a loop-device tree of the disk-order tests ends with: a large file `big`
/// of `big` bytes, an empty file, a name with a newline, a non-UTF-8 name, a sparse file of
/// `sparse` bytes with data in its middle, a hard link and a symlink (into `d0`, `d1`, `d2`,
/// which the caller made).
pub fn awkward_entries(src: &Path, big: usize, sparse: u64) {
    use std::os::unix::fs::FileExt;
    write(src, "big", &pattern(big, 7));
    write(src, "empty", b"");
    write(src, "odd/new\nline and space ", &pattern(5000, 11));
    write_b(src, b"odd/not-utf8-\xff\xfe", &pattern(9000, 12));
    let file = fs::File::create(src.join("sparse")).unwrap();
    file.set_len(sparse).unwrap();
    file.write_at(&pattern(8192, 9), sparse / 2).unwrap();
    hardlink(src, "d1/sub/f03", "d2/link-to-f03");
    std::os::unix::fs::symlink("../big", src.join("d0/to-big")).unwrap();
}

/// Creates a FIFO with mkfifo(1).
pub fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(st.success(), "mkfifo {path:?} failed");
}

/// Deterministic pseudo-random bytes (xorshift64*), different per seed.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    v.truncate(len);
    v
}

/// `data` with the byte at `at` changed.
pub fn flip(data: &[u8], at: usize) -> Vec<u8> {
    let mut v = data.to_vec();
    v[at] ^= 0x5a;
    v
}

/// (dev, ino, mtime in ns) of a path, not following symlinks.
pub fn ident(p: &Path) -> (u64, u64, i64) {
    let m = fs::symlink_metadata(p).unwrap_or_else(|e| panic!("lstat {p:?}: {e}"));
    (m.dev(), m.ino(), m.mtime() * 1_000_000_000 + m.mtime_nsec())
}

/// chmod.
pub fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("chmod {mode:o} {p:?}: {e}"));
}

/// An OsString argument from raw bytes.
pub fn os(b: &[u8]) -> OsString {
    OsString::from_vec(b.to_vec())
}

/// Groups every regular file under `root` (not following symlinks) by full
/// content: the naive reference. Paths are given as `prefix/relative`.
/// Returns (groups, summary-like numbers) for the given modes.
pub struct Reference {
    pub groups: Sets,
    pub redundant_files: u64,
    pub redundant_bytes: u64,
    pub regular_paths: u64,
    pub nonempty_paths: u64,
}

/// A regular file seen by the reference: (printed path, dev, ino, content).
type Seen = (Vec<u8>, u64, u64, Vec<u8>);

/// Walks `dir` (not following symlinks) collecting every regular file.
fn collect(dir: &Path, printed: &[u8], out: &mut Vec<Seen>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let m = fs::symlink_metadata(e.path()).unwrap();
        let mut p = printed.to_vec();
        p.push(b'/');
        p.extend_from_slice(e.file_name().as_bytes());
        if m.is_dir() {
            collect(&e.path(), &p, out);
        } else if m.is_file() {
            out.push((p, m.dev(), m.ino(), fs::read(e.path()).unwrap()));
        }
    }
}

/// The naive reference for `dedup find [-H] [--include-empty] <printed>` where
/// `<printed>` names the directory `dir`.
pub fn reference(dir: &Path, printed: &str, hardlinks: bool, include_empty: bool) -> Reference {
    let mut files = Vec::new();
    collect(dir, printed.as_bytes(), &mut files);
    let regular_paths = files.len() as u64;
    let nonempty_paths = files.iter().filter(|f| !f.3.is_empty()).count() as u64;
    // unit = one inode (or one path with -H): (paths, content)
    type Unit = (Vec<Vec<u8>>, Vec<u8>);
    let mut units: BTreeMap<(u64, u64, usize), Unit> = BTreeMap::new();
    for (i, (p, dev, ino, content)) in files.into_iter().enumerate() {
        let key = if hardlinks { (0, 0, i) } else { (dev, ino, 0) };
        let u = units.entry(key).or_insert_with(|| (Vec::new(), content));
        u.0.push(p);
    }
    let mut by_content: BTreeMap<Vec<u8>, Vec<Vec<Vec<u8>>>> = BTreeMap::new();
    for (_, (paths, content)) in units {
        by_content.entry(content).or_default().push(paths);
    }
    let mut groups = Vec::new();
    let (mut rf, mut rb) = (0, 0);
    for (content, members) in by_content {
        if members.len() < 2 || (content.is_empty() && !include_empty) {
            continue;
        }
        rf += members.len() as u64 - 1;
        rb += (members.len() as u64 - 1) * content.len() as u64;
        groups.push(members.into_iter().flatten().collect());
    }
    Reference {
        groups: normalize(groups),
        redundant_files: rf,
        redundant_bytes: rb,
        regular_paths,
        nonempty_paths,
    }
}

/// Helpers for the tests of the actions (link, reflink, symlink, remove, move).
pub mod act;
pub mod append_only_proxy;
pub mod close_fails;
pub mod mirror;
pub mod page_cache;
pub mod s3server;
pub mod sftpserver;
pub mod store;
