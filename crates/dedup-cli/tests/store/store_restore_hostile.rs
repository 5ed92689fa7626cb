//! A hostile repository, through the real binary: trees written by hand (a test-only writer, as
//! an attacker holding the key could) with entries named `..`, `a/b`, `/etc/x`, empty or with a
//! NUL. `restore` refuses the directory holding one with a message naming it, restores the rest
//! and writes nothing outside its target; `ls` refuses it; the FUSE mount answers EIO for it and
//! says why, and refuses to open a file the backup could not read whole.

use crate::common;
use crate::hand_made;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::store::*;
use common::*;
use dedup_store::backend::LocalBackend;
use dedup_store::format::Node;
use dedup_store::repo::Repository;
use hand_made::HandMade;

/// The hostile entries, each with what the refusal must name.
fn hostile(w: &HandMade<'_>) -> Vec<(Node, &'static str)> {
    vec![
        (w.file(b"..", b"up"), "\"..\""),
        (w.file(b"../escaped", b"out"), "\"../escaped\""),
        (w.file(b"/etc/x", b"absolute"), "\"/etc/x\""),
        (w.file(b"", b"nameless"), "\"\""),
        (w.file(b"a\0b", b"nul"), "\"a\\x00b\""),
        (w.symlink(b".", b"/"), "\".\""),
    ]
}

/// Writes one snapshot of `/hostile` per hostile entry: `d/` holding it, beside a good file.
fn hostile_repo(repo: &Path) -> Vec<&'static str> {
    init_repo(repo);
    let opened = Repository::open(Arc::new(LocalBackend::new(repo)), PASSWORD.as_bytes()).unwrap();
    let mut named = Vec::new();
    let cases = {
        let w = HandMade::new(&opened);
        let cases = hostile(&w);
        w.snapshot(b"/prepared", vec![]);
        cases
    };
    for (n, (entry, name)) in cases.into_iter().enumerate() {
        let w = HandMade::new(&opened);
        let root = vec![w.dir(b"d", vec![entry]), w.file(b"good", format!("good {n}").as_bytes())];
        let top = w.dir(b"hostile", root);
        w.snapshot(b"/hostile", vec![top]);
        named.push(name);
    }
    named
}

fn snapshot_ids(repo: &Path) -> Vec<String> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    let all = list.as_array().unwrap();
    all.iter()
        .filter(|s| s["host"] == "hand-made" && s["paths"][0] == "/hostile")
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

fn stderr(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn restore_and_ls_refuse_a_hostile_tree_by_name_and_write_nothing_outside() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    let named = hostile_repo(&repo);
    let ids = snapshot_ids(&repo);
    assert_eq!(ids.len(), named.len());
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("kept"), b"kept").unwrap();
    // Each snapshot's time is the same: they are told apart by id, in the order written.
    let mut seen = Vec::new();
    for id in &ids {
        let spec = format!("{}:/hostile", &id[..8]);
        let parent = dir.path().join(format!("scratch-{}", &id[..8]));
        fs::create_dir(&parent).unwrap();
        let target = parent.join("target");
        let before = look(dir.path().join("outside").as_path());
        let t = target.to_str().unwrap();
        let out =
            store(&repo, &["restore", &spec, "--target", t, "--overwrite", "always", "--delete"]);
        out.assert_code(1);
        let said = stderr(&out);
        let which: Vec<&&str> = named.iter().filter(|n| said.contains(**n)).collect();
        assert!(!which.is_empty(), "the refusal names no entry\n{}", out.dump());
        assert!(said.contains(&target.join("d").display().to_string()), "{}", out.dump());
        seen.extend(which.into_iter().copied());
        assert!(fs::read(target.join("good")).unwrap().starts_with(b"good"));
        assert_eq!(fs::read_dir(target.join("d")).unwrap().count(), 0, "{}", out.dump());
        assert_eq!(
            fs::read_dir(&parent).unwrap().count(),
            1,
            "something was written beside the target"
        );
        assert_looks_equal(&before, &look(&outside), "outside");
        let listed = store(&repo, &["ls", &id[..8]]);
        listed.assert_code(2);
        assert!(named.iter().any(|n| stderr(&listed).contains(n)), "{}", listed.dump());
    }
    for name in &named {
        assert!(seen.contains(name), "{name} was never named");
    }
}

/// A running `dedup store mount`, unmounted and reaped when dropped.
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
            let child = mount.child.as_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                panic!("dedup store mount ended before mounting: {status}");
            }
            assert!(start.elapsed() < Duration::from_secs(30), "the mount did not appear");
            std::thread::sleep(Duration::from_millis(20));
        }
        mount
    }

    /// Unmounts, waits for the program, and returns what it wrote to stderr.
    fn finish(mut self) -> String {
        let status = Command::new("fusermount3").arg("-u").arg(&self.point).status().unwrap();
        assert!(status.success());
        let mut child = self.child.take().unwrap();
        let mut text = String::new();
        child.stderr.take().unwrap().read_to_string(&mut text).unwrap();
        assert!(child.wait().unwrap().success(), "{text}");
        text
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

#[test]
fn the_mount_refuses_a_hostile_tree_and_a_file_the_backup_could_not_read() {
    let test = "the_mount_refuses_a_hostile_tree_and_a_file_the_backup_could_not_read";
    let helper = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join("fusermount3").is_file()));
    if !(require(Path::new("/dev/fuse").exists(), test, "/dev/fuse is missing")
        && require(helper, test, "fusermount3 is not installed (Debian: fuse3)"))
    {
        return;
    }
    let dir = tmp();
    let repo = dir.path().join("repo");
    let named = hostile_repo(&repo);
    {
        let opened =
            Repository::open(Arc::new(LocalBackend::new(&repo)), PASSWORD.as_bytes()).unwrap();
        let w = HandMade::new(&opened);
        let mut unread = w.file(b"unread", b"");
        unread.incomplete = true;
        unread.size = 12_345;
        unread.content = dedup_store::format::Content::Chunks(vec![]);
        w.snapshot(b"/unread", vec![unread]);
    }
    let point = dir.path().join("mnt");
    fs::create_dir(&point).unwrap();
    let mount = Mount::start(&repo, &point);
    let mut refused = 0;
    for snapshot in fs::read_dir(point.join("snapshots")).unwrap() {
        let at = snapshot.unwrap().path();
        let hostile = at.join("hostile/d");
        if hostile.exists() || fs::symlink_metadata(&hostile).is_ok() {
            let listed = fs::read_dir(&hostile).and_then(|mut r| r.try_for_each(|e| e.map(|_| ())));
            let err = listed.expect_err("a hostile tree was listed");
            assert_eq!(err.raw_os_error(), Some(rustix::io::Errno::IO.raw_os_error()), "{err}");
            assert!(fs::read(at.join("hostile/good")).unwrap().starts_with(b"good"));
            refused += 1;
        }
        if at.join("unread").exists() {
            let err = fs::read(at.join("unread")).expect_err("an unread file was read");
            assert_eq!(err.raw_os_error(), Some(rustix::io::Errno::IO.raw_os_error()), "{err}");
        }
    }
    assert_eq!(refused, named.len());
    let said = mount.finish();
    for name in &named {
        assert!(said.contains(name), "the mount did not name {name}\n{said}");
    }
    assert!(said.contains("the backup could not read it whole"), "{said}");
}
