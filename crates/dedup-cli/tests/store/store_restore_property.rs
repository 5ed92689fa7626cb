//! Property test of `dedup store restore` over a target that already holds things: random small
//! snapshots restored over random targets (files, directories and symlinks planted at the same
//! names, links pointing outside the target into a sibling directory), with every overwrite
//! policy, with and without `--delete`. Nothing outside the target ever changes; without
//! `--delete` no directory of the user's goes, and no entry of the user's changes unless
//! `--overwrite` lets the snapshot's entry of the same name replace it; every name the target
//! left free comes back as the snapshot has it; with `--overwrite always --delete` the target
//! ends up exactly as the snapshot.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::store::*;
use common::*;
use proptest::prelude::*;

const NAMES: [&str; 3] = ["a", "b", "c"];

/// One entry of a generated tree.
#[derive(Debug, Clone)]
enum Gen {
    File(u8),
    /// A symlink: 0 to the outside directory, 1 to a file there, 2 relative up and out (from
    /// the top of the target), 3 to nothing.
    Link(u8),
    Dir(BTreeMap<usize, Gen>),
}

fn leaf() -> impl Strategy<Value = Gen> {
    prop_oneof![3 => any::<u8>().prop_map(Gen::File), 2 => (0u8..4).prop_map(Gen::Link)]
}

fn tree() -> impl Strategy<Value = BTreeMap<usize, Gen>> {
    let entry = leaf().prop_recursive(2, 12, 3, |inner| {
        prop_oneof![
            2 => inner.clone(),
            2 => proptest::collection::btree_map(0..NAMES.len(), inner, 0..=3).prop_map(Gen::Dir),
        ]
    });
    proptest::collection::btree_map(0..NAMES.len(), entry, 0..=3)
}

fn make(dir: &Path, tree: &BTreeMap<usize, Gen>, outside: &Path, tag: &str) {
    for (&name, entry) in tree {
        let path = dir.join(NAMES[name]);
        match entry {
            Gen::File(seed) => fs::write(&path, format!("{tag} {seed}")).unwrap(),
            Gen::Link(0) => symlink(outside, &path).unwrap(),
            Gen::Link(1) => symlink(outside.join("file"), &path).unwrap(),
            Gen::Link(2) => symlink("../outside/dir", &path).unwrap(),
            Gen::Link(_) => symlink("nowhere", &path).unwrap(),
            Gen::Dir(sub) => {
                fs::create_dir(&path).unwrap();
                make(&path, sub, outside, tag);
            }
        }
    }
}

/// Whether some proper ancestor of `rel` in `tree` is not a directory (then `rel` is not there).
fn under_non_dir(tree: &BTreeMap<Vec<u8>, Seen>, rel: &[u8]) -> bool {
    let mut at = rel;
    while let Some(cut) = at.iter().rposition(|&b| b == b'/') {
        at = &at[..cut];
        if tree.get(at).is_some_and(|s| s.kind != 'd') {
            return true;
        }
    }
    false
}

fn check(
    snapshot: &BTreeMap<usize, Gen>,
    planted: &BTreeMap<usize, Gen>,
    overwrite: &str,
    delete: bool,
) -> Result<(), TestCaseError> {
    let dir = tmp();
    let (src, target, outside) =
        (dir.path().join("src"), dir.path().join("target"), dir.path().join("outside"));
    let repo = dir.path().join("repo");
    fs::create_dir_all(outside.join("dir")).unwrap();
    fs::write(outside.join("file"), b"outside's file").unwrap();
    fs::write(outside.join("dir/inner"), b"outside's inner").unwrap();
    fs::create_dir(&src).unwrap();
    fs::create_dir(&target).unwrap();
    make(&src, snapshot, &outside, "snapshot's");
    make(&target, planted, &outside, "user's");
    init_repo(&repo);
    backup_json(&repo, &src);
    let (src_seen, user, outside_before) = (look(&src), look(&target), look(&outside));

    let spec = format!("latest:{}", src.display());
    let mut args = vec!["restore", &spec, "--target", target.to_str().unwrap()];
    args.extend(["--overwrite", overwrite]);
    if delete {
        args.push("--delete");
    }
    let out = store(&repo, &args);
    let code = out.code();
    prop_assert!(code == 0 || code == 1, "{}", out.dump());
    prop_assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{}", out.dump());
    let after = look(&target);
    prop_assert_eq!(&outside_before, &look(&outside), "outside changed\n{}", out.dump());

    if !delete {
        for (rel, theirs) in user.iter().filter(|(rel, _)| !rel.is_empty()) {
            let now = after.get(rel);
            let shown = String::from_utf8_lossy(rel);
            if theirs.kind == 'd' {
                prop_assert!(now.is_some_and(|n| n.kind == 'd'), "{shown}: the user's dir went");
                continue;
            }
            let replaceable = overwrite != "never" && src_seen.contains_key(rel);
            if !replaceable {
                prop_assert_eq!(now, Some(theirs), "{} changed\n{}", shown, out.dump());
            }
        }
    }
    // Every name the target left free (nothing there, nor a non-directory above it) comes back.
    for (rel, theirs) in src_seen.iter().filter(|(rel, _)| !rel.is_empty()) {
        let free = !user.contains_key(rel) && !under_non_dir(&user, rel);
        if free && theirs.kind != 'd' {
            let now = after.get(rel).map(|n| (n.kind, &n.data));
            let shown = String::from_utf8_lossy(rel);
            prop_assert_eq!(now, Some((theirs.kind, &theirs.data)), "{} not restored", shown);
        }
    }
    if delete && overwrite == "always" {
        prop_assert_eq!(code, 0, "{}", out.dump());
        let strip = |m: &BTreeMap<Vec<u8>, Seen>| {
            m.iter().map(|(k, s)| (k.clone(), (s.kind, s.data.clone()))).collect::<Vec<_>>()
        };
        prop_assert_eq!(strip(&src_seen), strip(&after), "not the snapshot\n{}", out.dump());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        // PROPTEST_CASES=n runs more (or fewer) cases
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_restore_over_a_planted_target_stays_inside_and_loses_only_what_options_allow(
        snapshot in tree(),
        planted in tree(),
        overwrite in prop::sample::select(vec!["never", "if-changed", "if-newer", "always"]),
        delete in any::<bool>(),
    ) {
        check(&snapshot, &planted, overwrite, delete)?;
    }
}
