//! Helpers for the tests of `dedup sync`: running it, and describing a tree by everything a
//! mirror preserves (kind, content, mode, owner, modification time to the nanosecond, symlink
//! target, device number, extended attributes, which paths are hard links of one another,
//! sparseness), so that two trees can be compared field by field.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::{run, Out, BIN, TIMEOUT};

/// Runs `dedup sync <args>`.
pub fn sync<S: AsRef<OsStr>>(args: &[S]) -> Out {
    let mut c = assert_cmd::Command::new(BIN);
    c.timeout(TIMEOUT).arg("sync").args(args);
    run(&mut c)
}

/// Runs `dedup sync <args>` as user and group nobody.
pub fn sync_as_nobody<S: AsRef<OsStr>>(args: &[S]) -> Out {
    let mut c = assert_cmd::Command::new("setpriv");
    c.timeout(TIMEOUT)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(BIN)
        .arg("sync")
        .args(args);
    run(&mut c)
}

/// What a mirror preserves of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub kind: &'static str,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub mtime_ns: i64,
    pub content: Vec<u8>,
    pub rdev: u64,
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    /// The first path (in this tree) of the entry's inode, for files with several links.
    pub link_group: Option<Vec<u8>>,
    /// Allocated less than its size (a sparse file).
    pub sparse: bool,
}

/// Every entry below `root` (not `root` itself unless `with_root`), by path below it.
pub fn describe(root: &Path) -> BTreeMap<Vec<u8>, Node> {
    let mut out = BTreeMap::new();
    let mut inodes: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    walk(root, b"", &mut out, &mut inodes);
    out.insert(b".".to_vec(), node(root, b".", &mut BTreeMap::new()));
    out
}

fn walk(
    dir: &Path,
    rel: &[u8],
    out: &mut BTreeMap<Vec<u8>, Node>,
    inodes: &mut BTreeMap<u64, Vec<u8>>,
) {
    let mut names: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    for name in names {
        let mut r = rel.to_vec();
        if !r.is_empty() {
            r.push(b'/');
        }
        r.extend_from_slice(name.as_bytes());
        let p = dir.join(&name);
        let n = node(&p, &r, inodes);
        let is_dir = n.kind == "dir";
        out.insert(r.clone(), n);
        if is_dir {
            walk(&p, &r, out, inodes);
        }
    }
}

fn node(p: &Path, rel: &[u8], inodes: &mut BTreeMap<u64, Vec<u8>>) -> Node {
    let m = fs::symlink_metadata(p).unwrap();
    let t = m.file_type();
    let kind = if t.is_file() {
        "file"
    } else if t.is_dir() {
        "dir"
    } else if t.is_symlink() {
        "symlink"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "char"
    } else {
        "block"
    };
    let content = match kind {
        "file" => fs::read(p).unwrap(),
        "symlink" => fs::read_link(p).unwrap().as_os_str().as_bytes().to_vec(),
        _ => Vec::new(),
    };
    let link_group = (kind == "file" && m.nlink() > 1)
        .then(|| inodes.entry(m.ino()).or_insert_with(|| rel.to_vec()).clone());
    let mut xattrs = Vec::new();
    if kind != "symlink" {
        if let Ok(names) = xattr_names(p) {
            for n in names {
                if n.starts_with(b"user.") {
                    xattrs.push((n.clone(), xattr_get(p, &n)));
                }
            }
        }
    }
    xattrs.sort();
    Node {
        kind,
        mode: if kind == "symlink" { 0 } else { m.mode() & 0o7777 },
        uid: m.uid(),
        gid: m.gid(),
        mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        content,
        rdev: m.rdev(),
        xattrs,
        link_group,
        sparse: kind == "file" && m.blocks() * 512 + 4096 < m.size(),
    }
}

fn xattr_names(p: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut buf = vec![0u8; 64 << 10];
    let n = rustix::fs::llistxattr(p, &mut buf[..])?;
    Ok(buf[..n].split(|&b| b == 0).filter(|l| !l.is_empty()).map(|l| l.to_vec()).collect())
}

fn xattr_get(p: &Path, name: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 64 << 10];
    let name = std::ffi::CString::new(name).unwrap();
    let n = rustix::fs::lgetxattr(p, name.as_c_str(), &mut buf[..]).unwrap();
    buf.truncate(n);
    buf
}

/// Set a user extended attribute.
pub fn set_xattr(p: &Path, name: &str, value: &str) {
    rustix::fs::lsetxattr(p, name, value.as_bytes(), rustix::fs::XattrFlags::empty()).unwrap();
}

/// Assert that `dst` mirrors `src` in every preserved field, naming the first differences.
pub fn assert_mirror(src: &Path, dst: &Path) {
    let (a, b) = (describe(src), describe(dst));
    let mut diffs = Vec::new();
    for (k, v) in &a {
        match b.get(k) {
            None => diffs.push(format!("missing in DST: {}", String::from_utf8_lossy(k))),
            Some(w) if w != v => diffs.push(format!(
                "differs: {}\n  src {:?}\n  dst {:?}",
                String::from_utf8_lossy(k),
                short(v),
                short(w)
            )),
            _ => {}
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        diffs.push(format!("extra in DST: {}", String::from_utf8_lossy(k)));
    }
    assert!(
        diffs.is_empty(),
        "DST is not a mirror of SRC:\n{}",
        diffs[..diffs.len().min(20)].join("\n")
    );
}

fn short(n: &Node) -> Node {
    let mut n = n.clone();
    n.content.truncate(16);
    n
}

/// Paths of our temporary names anywhere below `root`.
pub fn temp_names(root: &Path) -> Vec<String> {
    describe(root)
        .keys()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .filter(|k| k.rsplit('/').next().is_some_and(|n| n.starts_with(".dedup-")))
        .collect()
}

/// Set a path's modification time (seconds and nanoseconds), not following a symlink.
pub fn set_mtime(p: &Path, secs: i64, nsec: i64) {
    let ok = std::process::Command::new("touch")
        .arg("-h")
        .arg("-d")
        .arg(format!("@{secs}.{nsec:09}"))
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// The printed changes of a run, sorted (threads finish in any order).
pub fn changes(out: &Out) -> Vec<String> {
    let mut v: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
    v.sort();
    v
}

/// Inode number.
pub fn ino(p: &Path) -> u64 {
    fs::symlink_metadata(p).unwrap().ino()
}

/// What a run's summary line counts (`copied 1, ..., deleted 3; 2 B`), the same words for a dry
/// run as for a real one, so that the two can be compared.
pub fn counts(out: &Out) -> String {
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| l.starts_with("dedup sync"))
        .unwrap_or_else(|| panic!("no summary line\n{}", out.dump()));
    let after = line.split_once("checked; ").map_or(line, |(_, rest)| rest);
    let counted = after.split(" copied in ").next().unwrap_or(after);
    counted.replace("would be ", "")
}

/// Asserts that a dry run printed the changes, and counted what, a real run then made.
#[track_caller]
pub fn assert_same_run(dry: &Out, real: &Out) {
    assert_eq!(changes(dry), changes(real), "dry run\n{}\nreal run\n{}", dry.dump(), real.dump());
    assert_eq!(counts(dry), counts(real), "dry run\n{}\nreal run\n{}", dry.dump(), real.dump());
}

/// Gives a tree to user and group nobody, as `chown -R` does.
pub fn give_to_nobody(p: &Path) {
    let ok = std::process::Command::new("chown")
        .arg("-R")
        .arg("65534:65534")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "chown -R nobody {p:?}");
}

/// A small deterministic generator (xorshift) for the random trees of the sync tests.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index below `n`.
    pub fn pick(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A mount made by a test (`mount ARGS... POINT`), unmounted when dropped; `None` when `mount`
/// failed.
pub struct Mounted(std::path::PathBuf);

impl Mounted {
    pub fn new<S: AsRef<OsStr>>(args: &[S], point: &Path) -> Option<Mounted> {
        let ok = std::process::Command::new("mount").args(args).arg(point).status();
        ok.is_ok_and(|s| s.success()).then(|| Mounted(point.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}
