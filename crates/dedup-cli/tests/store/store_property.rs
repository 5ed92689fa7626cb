//! Property test of `dedup store`: random small trees changed by random edits (new, removed,
//! renamed, rewritten, grown, cut and relinked files; modes, owners, times, xattrs) across
//! several snapshots; afterwards every snapshot restores exactly as its tree was, in content and
//! in every field the round-trip test compares.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::store::*;
use common::*;
use proptest::prelude::*;
use proptest::sample::Index;

/// Names the edits use, odd ones among them.
const NAMES: &[&[u8]] = &[b"a", b"b", b"c", b"d e", b"\xff\xfe", b"new\nline", b".hidden", b"z"];

#[derive(Debug, Clone)]
enum Edit {
    File { dir: Index, name: usize, len: usize, seed: u64 },
    Dir { dir: Index, name: usize },
    Symlink { dir: Index, name: usize, target: Index },
    HardLink { file: Index, dir: Index, name: usize },
    Remove { entry: Index },
    Overwrite { file: Index, at: Index, len: usize, seed: u64 },
    Insert { file: Index, at: Index, len: usize, seed: u64 },
    Truncate { file: Index, keep: Index },
    Chmod { entry: Index, mode: usize },
    Chown { entry: Index, owner: u32 },
    Touch { entry: Index, secs: i64, nanos: u32 },
    Xattr { entry: Index, value: u8 },
    Rename { entry: Index, dir: Index, name: usize },
}

fn length() -> impl Strategy<Value = usize> {
    prop_oneof![2 => 0usize..4, 2 => 0usize..5_000, 1 => 0usize..300_000]
}

fn edit() -> impl Strategy<Value = Edit> {
    let name = 0..NAMES.len();
    prop_oneof![
        4 => (any::<Index>(), name.clone(), length(), any::<u64>())
            .prop_map(|(dir, name, len, seed)| Edit::File { dir, name, len, seed }),
        2 => (any::<Index>(), name.clone()).prop_map(|(dir, name)| Edit::Dir { dir, name }),
        1 => (any::<Index>(), name.clone(), any::<Index>())
            .prop_map(|(dir, name, target)| Edit::Symlink { dir, name, target }),
        1 => (any::<Index>(), any::<Index>(), name.clone())
            .prop_map(|(file, dir, name)| Edit::HardLink { file, dir, name }),
        1 => any::<Index>().prop_map(|entry| Edit::Remove { entry }),
        2 => (any::<Index>(), any::<Index>(), 1usize..3000, any::<u64>())
            .prop_map(|(file, at, len, seed)| Edit::Overwrite { file, at, len, seed }),
        1 => (any::<Index>(), any::<Index>(), 1usize..200, any::<u64>())
            .prop_map(|(file, at, len, seed)| Edit::Insert { file, at, len, seed }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(file, keep)| Edit::Truncate { file, keep }),
        1 => (any::<Index>(), 0usize..4).prop_map(|(entry, mode)| Edit::Chmod { entry, mode }),
        1 => (any::<Index>(), 1000u32..1003).prop_map(|(entry, owner)| Edit::Chown { entry, owner }),
        1 => (any::<Index>(), 0i64..2_000_000_000, 0u32..1_000_000_000)
            .prop_map(|(entry, secs, nanos)| Edit::Touch { entry, secs, nanos }),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(entry, value)| Edit::Xattr { entry, value }),
        1 => (any::<Index>(), any::<Index>(), name)
            .prop_map(|(entry, dir, name)| Edit::Rename { entry, dir, name }),
    ]
}

/// The tree's directories (the root first), regular files and every entry below the root,
/// each sorted.
struct Entries {
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    all: Vec<PathBuf>,
}

fn entries(root: &Path) -> Entries {
    let mut found = Entries { dirs: vec![root.to_path_buf()], files: Vec::new(), all: Vec::new() };
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let mut children: Vec<PathBuf> =
            fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        children.sort();
        for child in children {
            let kind = fs::symlink_metadata(&child).unwrap().file_type();
            if kind.is_dir() {
                found.dirs.push(child.clone());
                pending.push(child.clone());
            } else if kind.is_file() {
                found.files.push(child.clone());
            }
            found.all.push(child);
        }
    }
    found
}

fn pick<'a>(list: &'a [PathBuf], index: &Index) -> Option<&'a PathBuf> {
    (!list.is_empty()).then(|| &list[index.index(list.len())])
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Applies one edit; an edit that does not fit the tree as it is does nothing.
fn apply(root: &Path, edit: &Edit) {
    let e = entries(root);
    let free = |dir: &Index, name: usize| {
        let path = pick(&e.dirs, dir).unwrap().join(OsStr::from_bytes(NAMES[name]));
        (fs::symlink_metadata(&path).is_err()).then_some(path)
    };
    match edit {
        Edit::File { dir, name, len, seed } => {
            if let Some(path) = free(dir, *name) {
                fs::write(path, pattern(*len, *seed)).unwrap();
            }
        }
        Edit::Dir { dir, name } => {
            if let Some(path) = free(dir, *name) {
                fs::create_dir(path).unwrap();
            }
        }
        Edit::Symlink { dir, name, target } => {
            if let Some(path) = free(dir, *name) {
                let target = pick(&e.all, target)
                    .map(|t| t.strip_prefix(root).unwrap().to_path_buf())
                    .unwrap_or_else(|| PathBuf::from("dangling"));
                std::os::unix::fs::symlink(target, path).unwrap();
            }
        }
        Edit::HardLink { file, dir, name } => {
            if let (Some(file), Some(path)) = (pick(&e.files, file), free(dir, *name)) {
                fs::hard_link(file, path).unwrap();
            }
        }
        Edit::Remove { entry } => match pick(&e.all, entry) {
            Some(path) if path.is_dir() && !is_symlink(path) => fs::remove_dir_all(path).unwrap(),
            Some(path) => fs::remove_file(path).unwrap(),
            None => {}
        },
        Edit::Overwrite { file, at, len, seed } => {
            if let Some(path) = pick(&e.files, file) {
                let size = fs::metadata(path).unwrap().len() as usize;
                let f = fs::OpenOptions::new().write(true).open(path).unwrap();
                f.write_all_at(&pattern(*len, *seed), at.index(size + 1) as u64).unwrap();
            }
        }
        Edit::Insert { file, at, len, seed } => {
            if let Some(path) = pick(&e.files, file) {
                let mut data = fs::read(path).unwrap();
                let at = at.index(data.len() + 1);
                data.splice(at..at, pattern(*len, *seed));
                // Written in place: the inode (and any hard link to it) stays.
                let f = fs::OpenOptions::new().write(true).open(path).unwrap();
                f.write_all_at(&data, 0).unwrap();
            }
        }
        Edit::Truncate { file, keep } => {
            if let Some(path) = pick(&e.files, file) {
                let size = fs::metadata(path).unwrap().len() as usize;
                let f = fs::OpenOptions::new().write(true).open(path).unwrap();
                f.set_len(keep.index(size + 1) as u64).unwrap();
            }
        }
        Edit::Chmod { entry, mode } => match pick(&e.all, entry) {
            Some(path) if is_symlink(path) => {}
            Some(path) => {
                let modes = if path.is_dir() {
                    [0o755, 0o700, 0o750, 0o1777]
                } else {
                    [0o600, 0o644, 0o755, 0o4750]
                };
                fs::set_permissions(path, fs::Permissions::from_mode(modes[*mode])).unwrap();
            }
            None => {}
        },
        Edit::Chown { entry, owner } => {
            if let Some(path) = pick(&e.all, entry).filter(|_| is_root()) {
                std::os::unix::fs::lchown(path, Some(*owner), Some(*owner + 1)).unwrap();
            }
        }
        Edit::Touch { entry, secs, nanos } => {
            if let Some(path) = pick(&e.all, entry) {
                let time = rustix::fs::Timespec { tv_sec: *secs, tv_nsec: *nanos as _ };
                let times = rustix::fs::Timestamps { last_access: time, last_modification: time };
                rustix::fs::utimensat(
                    rustix::fs::CWD,
                    path,
                    &times,
                    rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                )
                .unwrap();
            }
        }
        Edit::Xattr { entry, value } => {
            if let Some(path) = pick(&e.all, entry).filter(|p| !is_symlink(p)) {
                // A file system without user xattrs leaves the tree as it was.
                let _ = rustix::fs::lsetxattr(
                    path,
                    "user.p",
                    &[*value; 3],
                    rustix::fs::XattrFlags::empty(),
                );
            }
        }
        Edit::Rename { entry, dir, name } => {
            if let (Some(from), Some(to)) = (pick(&e.all, entry), free(dir, *name)) {
                if !to.starts_with(from) {
                    fs::rename(from, to).unwrap();
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // PROPTEST_CASES=n runs more (or fewer) cases
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_snapshot_of_a_changing_tree_restores_exactly(
        rounds in prop::collection::vec(prop::collection::vec(edit(), 1..12), 3),
        settle in prop::bool::weighted(0.25),
    ) {
        let dir = tmp();
        let (tree, repo) = (dir.path().join("tree"), dir.path().join("repo"));
        fs::create_dir(&tree).unwrap();
        init_repo(&repo);
        let mut taken: Vec<(String, BTreeMap<Vec<u8>, Seen>)> = Vec::new();
        for (round, edits) in rounds.iter().enumerate() {
            for edit in edits {
                apply(&tree, edit);
            }
            if settle && round == 1 {
                // Older than the next backup's racy-timestamp window: the third backup then
                // takes the files no edit touched from its parent without reading them.
                std::thread::sleep(Duration::from_millis(1100));
            }
            // A round may leave the tree empty: meant here, not a disk that is not mounted.
            let args = [OsStr::new("backup"), OsStr::new("--json"), OsStr::new("--allow-empty-source")];
            let out = store(&repo, &[&args[..], &[tree.as_os_str()]].concat());
            out.assert_code(0);
            let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            prop_assert_eq!(summary["errors"].as_u64(), Some(0), "{}", summary);
            taken.push((summary["snapshot"].as_str().unwrap().to_string(), look(&tree)));
        }
        for (i, (id, expected)) in taken.iter().enumerate() {
            let target = dir.path().join(format!("restored-{i}"));
            assert_restores(&repo, &id[..12], &tree, &target, expected);
        }
        store_ok(&repo, &["check", "--read-data"]);
    }
}
