//! A repository whose trees were written by hand, as an attacker with the key could: entries
//! named `..`, `.`, `a/b`, `/etc/x`, empty, with a NUL, longer than a name may be, repeated or
//! out of order. Reading such a tree fails with a message naming the entry, and a restore refuses
//! the directory that holds it (a problem naming both), restores the rest, and writes nothing
//! outside its target.

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use dedup_core::{Observer, Problem};
use dedup_store::backend::LocalBackend;
use dedup_store::repo::Repository;
use dedup_store::restore::{restore, Change, Events, Overwrite, RestoreOptions};
use dedup_store::tree_walk::root_node;

use crate::common::hand_made::HandMade;
use crate::common::small_repo;

#[derive(Default)]
struct Seen {
    problems: Mutex<Vec<String>>,
}

impl Observer for Seen {
    fn problem(&self, problem: Problem) {
        let line = format!("{}: {}", problem.path.display(), problem.kind);
        self.problems.lock().unwrap().push(line);
    }
}

impl Events for Seen {
    fn change(&self, _change: &Change) {}
}

/// Every path below `dir` with its bytes (empty for directories and symlinks' own text).
fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let data = if meta.is_file() {
                fs::read(&path).unwrap()
            } else if meta.file_type().is_symlink() {
                fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()
            } else {
                pending.push(path.clone());
                Vec::new()
            };
            out.push((path.display().to_string(), data));
        }
    }
    out.sort();
    out
}

/// The hostile entries: (what the tree holds, what the refusal names).
fn hostile(w: &HandMade<'_>) -> Vec<(Vec<dedup_store::format::Node>, &'static str)> {
    let long = vec![b'n'; 256];
    vec![
        (vec![w.file(b"..", b"up one")], "\"..\""),
        (vec![w.file(b".", b"here")], "\".\""),
        (vec![w.file(b"../escaped", b"up and out")], "\"../escaped\""),
        (vec![w.file(b"/etc/x", b"absolute")], "\"/etc/x\""),
        (vec![w.file(b"", b"nameless")], "\"\""),
        (vec![w.file(b"a\0b", b"nul")], "\"a\\x00b\""),
        (vec![w.file(&long, b"long")], "256 bytes"),
        (vec![w.file(b"twice", b"1"), w.file(b"twice", b"2")], "\"twice\" repeated"),
        (vec![w.file(b"b", b"b"), w.file(b"a", b"a")], "\"a\" out of order"),
        (vec![w.dir(b"..", vec![w.file(b"x", b"x")])], "\"..\""),
    ]
}

#[test]
fn hostile_names_are_refused_by_name_and_nothing_lands_outside_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("repo");
    small_repo(&repo_dir, true);
    let repo = Repository::open(Arc::new(LocalBackend::new(&repo_dir)), b"pw").unwrap();
    let cases = {
        let w = HandMade::new(&repo);
        let cases = hostile(&w);
        w.snapshot(b"/warm-up", vec![]);
        cases
    };
    for (n, (entries, named)) in cases.into_iter().enumerate() {
        for (where_, overwrite) in [("below", Overwrite::Never), ("root", Overwrite::Always)] {
            let repo = Repository::open(Arc::new(LocalBackend::new(&repo_dir)), b"pw").unwrap();
            let w = HandMade::new(&repo);
            let good = w.file(b"good", b"restored");
            let entries: Vec<_> = entries.clone();
            let root = if where_ == "below" {
                vec![w.dir(b"d", entries), good]
            } else {
                let mut all = entries;
                all.push(good);
                all
            };
            let id = w.snapshot(b"/hostile", root);
            let snapshot = repo.load_snapshot(&id).unwrap();
            let scratch = tmp.path().join(format!("case-{n}-{where_}"));
            let target = scratch.join("target");
            fs::create_dir_all(scratch.join("outside")).unwrap();
            fs::write(scratch.join("outside/kept"), b"kept").unwrap();
            let before = listing(&scratch);
            let seen = Seen::default();
            let options = RestoreOptions { overwrite, delete: true, ..RestoreOptions::default() };
            let node = root_node(snapshot.tree);
            let summary = restore(&repo, &node, &target, options, &seen).unwrap();
            let problems = seen.problems.lock().unwrap().clone();
            assert!(summary.errors >= 1, "case {n} {where_}: no problem\n{problems:?}");
            assert!(
                problems.iter().any(|p| p.contains(named)),
                "case {n} {where_}: {named} not named\n{problems:?}"
            );
            let after: Vec<_> = listing(&scratch)
                .into_iter()
                .filter(|(p, _)| !p.starts_with(&target.display().to_string()))
                .collect();
            assert_eq!(before, after, "case {n} {where_}: something changed outside the target");
            if where_ == "below" {
                assert_eq!(fs::read(target.join("good")).unwrap(), b"restored", "case {n}");
                let d = fs::read_dir(target.join("d")).map(|r| r.count()).unwrap_or(0);
                assert_eq!(d, 0, "case {n}: an entry of the hostile tree was restored");
            } else {
                assert_eq!(
                    listing(&target),
                    vec![],
                    "case {n}: the hostile root restored something"
                );
            }
            // Listing the snapshot (what `ls`, `diff` and `check` do) refuses it too.
            let walked = dedup_store::tree_walk::walk(&repo, snapshot.tree, &mut |_, _| Ok(()));
            let err = walked.expect_err("the walk took the hostile tree").to_string();
            assert!(err.contains(named), "case {n} {where_}: {err}");
        }
    }
}
