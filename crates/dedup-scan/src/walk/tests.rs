//! The walk seen by a visitor: every entry kind with its metadata, post-order `leave`, and the
//! options that stop it (exclusions, depth, loops).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::{mknodat, FileType, Mode, CWD};

use super::*;
use crate::io::Concurrency;

/// Records every entry by path, and the order of `leave` calls.
#[derive(Default)]
struct Recorder {
    entries: Mutex<BTreeMap<Vec<u8>, Entry>>,
    left: Mutex<Vec<Vec<u8>>>,
    excluded: Mutex<Vec<Vec<u8>>>,
}

impl Visitor for Recorder {
    type Dir = Vec<u8>;

    fn root(&self, root: &RootVisit<'_>) -> Option<Vec<u8>> {
        (root.entry?.kind == EntryKind::Dir).then(|| root.path.as_os_str().as_bytes().to_vec())
    }

    fn dir(&self, dir: &Vec<u8>, listing: &Listing<'_>) -> Vec<(usize, Vec<u8>)> {
        assert_eq!(listing.path.as_os_str().as_bytes(), dir.as_slice());
        let mut subdirs = Vec::new();
        for (i, e) in listing.entries.iter().enumerate() {
            let mut path = dir.clone();
            path.push(b'/');
            path.extend_from_slice(&e.name);
            if e.kind == EntryKind::Dir {
                subdirs.push((i, path.clone()));
            }
            self.entries.lock().unwrap().insert(path, e.clone());
        }
        for (name, _) in listing.excluded {
            self.excluded.lock().unwrap().push(name.clone());
        }
        subdirs
    }

    fn leave(&self, dir: Vec<u8>) {
        self.left.lock().unwrap().push(dir);
    }
}

fn run(root: &Path, options: &WalkOptions) -> Recorder {
    let recorder = Recorder::default();
    let io = IoScheduler::new(Concurrency::Fixed(4));
    walk(&[root.to_path_buf()], options, &io, &(), &recorder);
    recorder
}

fn everything() -> WalkOptions {
    WalkOptions { detail: Detail::Everything, ..WalkOptions::default() }
}

fn key(root: &Path, rel: &str) -> Vec<u8> {
    root.join(rel).as_os_str().as_bytes().to_vec()
}

#[test]
fn every_kind_with_its_metadata() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    std::fs::create_dir(r.join("dir")).unwrap();
    std::fs::write(r.join("dir/file"), b"hello").unwrap();
    symlink("dir/file", r.join("link")).unwrap();
    symlink("nowhere", r.join("dangling")).unwrap();
    mknodat(CWD, r.join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o640), 0).unwrap();
    std::os::unix::net::UnixListener::bind(r.join("sock")).unwrap();
    let got = run(r, &everything());
    let entries = got.entries.lock().unwrap();
    let kind = |rel: &str| entries[&key(r, rel)].kind;
    assert_eq!(kind("dir"), EntryKind::Dir);
    assert_eq!(kind("dir/file"), EntryKind::File);
    assert_eq!(kind("link"), EntryKind::Symlink);
    assert_eq!(kind("dangling"), EntryKind::Symlink);
    assert_eq!(kind("fifo"), EntryKind::Fifo);
    assert_eq!(kind("sock"), EntryKind::Socket);

    let file = &entries[&key(r, "dir/file")];
    let std_meta = std::fs::symlink_metadata(r.join("dir/file")).unwrap();
    let m = file.meta.unwrap();
    assert_eq!((m.size, m.ino, m.nlink, m.uid), (5, std_meta.ino(), 1, std_meta.uid()));
    assert_eq!(m.mode, std_meta.mode() & 0o7777);
    assert_eq!(m.mtime_ns, std_meta.mtime() * 1_000_000_000 + std_meta.mtime_nsec());
    assert_eq!(entries[&key(r, "link")].target.as_deref(), Some(b"dir/file".as_slice()));
    assert_eq!(entries[&key(r, "fifo")].meta.unwrap().mode, 0o640);
    if is_root() {
        mknodat(
            CWD,
            r.join("null"),
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o600),
            rustix::fs::makedev(1, 3),
        )
        .unwrap();
        let got = run(r, &everything());
        let entries = got.entries.lock().unwrap();
        let null = &entries[&key(r, "null")];
        assert_eq!(null.kind, EntryKind::CharDevice);
        assert_eq!(null.meta.unwrap().rdev, rustix::fs::makedev(1, 3));
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn files_detail_stats_only_regular_files() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    std::fs::create_dir(r.join("dir")).unwrap();
    std::fs::write(r.join("file"), b"x").unwrap();
    symlink("file", r.join("link")).unwrap();
    let got = run(r, &WalkOptions::default());
    let entries = got.entries.lock().unwrap();
    assert!(entries[&key(r, "file")].meta.is_some());
    assert!(entries[&key(r, "dir")].meta.is_none());
    let link = &entries[&key(r, "link")];
    assert_eq!((link.kind, link.meta, &link.target), (EntryKind::Symlink, None, &None));
}

#[test]
fn leave_comes_after_every_descendant() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    for dir in ["a/b/c", "a/d", "e"] {
        std::fs::create_dir_all(r.join(dir)).unwrap();
    }
    let got = run(r, &WalkOptions::default());
    let left = got.left.lock().unwrap();
    let at = |rel: &str| {
        let k = if rel.is_empty() { r.as_os_str().as_bytes().to_vec() } else { key(r, rel) };
        left.iter().position(|p| *p == k).unwrap_or_else(|| panic!("{rel} never left"))
    };
    assert_eq!(left.len(), 6);
    assert!(at("a/b/c") < at("a/b") && at("a/b") < at("a") && at("a/d") < at("a"));
    assert!(at("a") < at("") && at("e") < at(""));
}

#[test]
fn exclusions_depth_and_loops() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    std::fs::create_dir_all(r.join("keep/deep/deeper")).unwrap();
    std::fs::write(r.join("keep/x.tmp"), b"x").unwrap();
    symlink("..", r.join("keep/up")).unwrap();
    let options = WalkOptions { follow_links: true, ..WalkOptions::default() }
        .with_excludes(["*.tmp"])
        .unwrap();
    let got = run(r, &options);
    assert_eq!(*got.excluded.lock().unwrap(), [b"x.tmp".to_vec()]);
    let entries = got.entries.lock().unwrap();
    // The followed link to an ancestor is a directory, but the walk does not enter it again.
    assert_eq!(entries[&key(r, "keep/up")].kind, EntryKind::Dir);
    assert!(!entries.contains_key(&key(r, "keep/up/keep")));

    let shallow = WalkOptions { max_depth: Some(1), ..WalkOptions::default() };
    let got = run(r, &shallow);
    let entries = got.entries.lock().unwrap();
    assert!(entries.contains_key(&key(r, "keep")));
    assert!(!entries.contains_key(&key(r, "keep/deep")));
    assert_eq!(got.left.lock().unwrap().len(), 2, "every directory handed out is left");
}

#[test]
fn a_root_that_is_a_file_is_visited_but_not_listed() {
    let d = tempfile::tempdir().unwrap();
    let f: PathBuf = d.path().join("f");
    std::fs::write(&f, b"abc").unwrap();
    struct Roots(Mutex<Vec<(EntryKind, u64)>>);
    impl Visitor for Roots {
        type Dir = ();
        fn root(&self, root: &RootVisit<'_>) -> Option<()> {
            let e = root.entry?;
            self.0.lock().unwrap().push((e.kind, e.meta.unwrap().size));
            Some(())
        }
        fn dir(&self, _: &(), _: &Listing<'_>) -> Vec<(usize, ())> {
            panic!("a file is not listed")
        }
    }
    let roots = Roots(Mutex::new(Vec::new()));
    let io = IoScheduler::new(Concurrency::Fixed(1));
    walk(&[f.clone(), f], &WalkOptions::default(), &io, &(), &roots);
    assert_eq!(*roots.0.lock().unwrap(), [(EntryKind::File, 3)], "the same root is walked once");
}

#[test]
fn inode_order_lists_the_lowest_inode_first() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    // Made in an order unlike both the names' and their hashes': inode numbers follow it.
    for name in ["m", "c", "x", "a", "q", "f", "z", "b", "k", "e", "t", "h"] {
        std::fs::create_dir(r.join(name)).unwrap();
    }
    let io = IoScheduler::new(Concurrency::Fixed(1));
    let recorder = Recorder::default();
    let options = WalkOptions { inode_order: true, ..WalkOptions::default() };
    walk(&[r.to_path_buf()], &options, &io, &(), &recorder);
    let left = recorder.left.into_inner().unwrap();
    let inos: Vec<u64> = left[..left.len() - 1]
        .iter()
        .map(|p| std::fs::metadata(Path::new(std::ffi::OsStr::from_bytes(p))).unwrap().ino())
        .collect();
    assert_eq!(inos.len(), 12);
    assert!(inos.is_sorted(), "listed in inode order: {inos:?}");
}

/// Leaves out directories named `skip` and, below the second root only, names ending in `.o`.
#[derive(Debug)]
struct SkipFilter;

impl EntryFilter for SkipFilter {
    fn leaves_out(&self, root: u32, relative: &[u8], name: &[u8], kind: Option<EntryKind>) -> bool {
        assert!(relative.ends_with(name), "{relative:?} {name:?}");
        (name == b"skip" && kind == Some(EntryKind::Dir)) || (root == 1 && name.ends_with(b".o"))
    }
}

#[test]
fn a_job_filter_leaves_entries_out_before_they_are_examined_or_entered() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    for r in [&a, &b] {
        std::fs::create_dir_all(r.join("skip/inner")).unwrap();
        std::fs::create_dir_all(r.join("keep")).unwrap();
        std::fs::write(r.join("keep/skip"), b"a file of that name").unwrap();
        std::fs::write(r.join("keep/x.o"), b"x").unwrap();
    }
    let options =
        WalkOptions { filter: Some(std::sync::Arc::new(SkipFilter)), ..WalkOptions::default() };
    let recorder = Recorder::default();
    let io = IoScheduler::new(Concurrency::Fixed(2));
    walk(&[a.clone(), b.clone()], &options, &io, &(), &recorder);
    let entries = recorder.entries.lock().unwrap();
    for r in [&a, &b] {
        assert!(!entries.contains_key(&key(r, "skip")), "left out");
        assert!(!entries.contains_key(&key(r, "skip/inner")), "never entered");
        assert!(entries.contains_key(&key(r, "keep/skip")), "a file is not a directory");
    }
    assert!(entries.contains_key(&key(&a, "keep/x.o")));
    assert!(!entries.contains_key(&key(&b, "keep/x.o")), "the second root's own rule");
    let mut excluded = recorder.excluded.lock().unwrap().clone();
    excluded.sort();
    assert_eq!(excluded, [b"skip".to_vec(), b"skip".to_vec(), b"x.o".to_vec()]);
}
