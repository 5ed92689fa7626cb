//! The store under random work: several backups and a prune at once lose nothing, and a seeded
//! engine of random tree changes, backups, forgets, prunes and restores checks every restore
//! against the tree as it was. Bounded for CI; `DEDUP_ROBUSTNESS_STEPS` runs it longer, and
//! `DEDUP_ROBUSTNESS_SEED` replays a failing seed.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::store::*;
use common::*;

/// A small deterministic generator (xorshift), so that a seed replays a run exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn snapshot_ids(repo: &Path) -> Vec<String> {
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    list.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn backups_and_a_prune_at_once_lose_nothing() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);
    let trees: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("host{i}"))).collect();
    let mut looks: BTreeMap<String, (PathBuf, BTreeMap<Vec<u8>, Seen>)> = BTreeMap::new();
    for round in 0..3u64 {
        // Each tree holds a file that never changes (which the prune will find unreferenced
        // while the backups deduplicate against it), one shared with the others and changing
        // each round, and one of its own.
        for (i, root) in trees.iter().enumerate() {
            let _ = fs::remove_dir_all(root);
            fs::create_dir_all(root).unwrap();
            fs::write(root.join("same"), pattern(250_000, 1)).unwrap();
            fs::write(root.join("shared"), pattern(300_000, 7 + round)).unwrap();
            fs::write(root.join("own"), pattern(200_000, 100 * (i as u64 + 1) + round)).unwrap();
        }
        // Forget every earlier snapshot, so that the prune has work.
        if !looks.is_empty() {
            let ids: Vec<String> = looks.keys().map(|id| id[..8].to_string()).collect();
            let mut args = vec!["forget"];
            args.extend(ids.iter().map(String::as_str));
            store_ok(&repo, &args);
            looks.clear();
        }
        let mut children: Vec<_> = trees
            .iter()
            .map(|root| spawn_store(&repo, &["backup", "--host", "h", root.to_str().unwrap()]))
            .collect();
        children.push(spawn_store(&repo, &["prune", "--max-unused", "0"]));
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for root in &trees {
            looks.insert(snapshot_of(&repo, root), (root.clone(), look(root)));
        }
        // Every snapshot still present restores exactly, at once.
        for (id, (root, seen)) in &looks {
            let target = dir.path().join(format!("r{round}-{}", &id[..8]));
            assert_restores(&repo, &id[..8], root, &target, seen);
            fs::remove_dir_all(&target).unwrap();
        }
    }
    store_ok(&repo, &["prune"]);
    let out = store(&repo, &["check", "--read-data"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
}

/// One random change to the tree under `root`.
fn change(rng: &mut Rng, root: &Path) {
    let name = root.join(format!("f{}", rng.below(6)));
    match rng.below(4) {
        0 => {
            let _ = fs::remove_file(&name);
        }
        1 => {
            // Appended to: the chunker resynchronises, the start is shared with before.
            let mut data = fs::read(&name).unwrap_or_default();
            data.extend(pattern(20_000 + rng.below(100_000) as usize, rng.next()));
            fs::write(&name, data).unwrap();
        }
        _ => fs::write(&name, pattern(rng.below(300_000) as usize, rng.next())).unwrap(),
    }
}

#[test]
fn a_seeded_run_of_random_work_restores_every_snapshot_as_it_was() {
    let steps: u64 =
        std::env::var("DEDUP_ROBUSTNESS_STEPS").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
    let seed: u64 = std::env::var("DEDUP_ROBUSTNESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos() as u64 | 1);
    eprintln!("robustness seed {seed} ({steps} steps); replay with DEDUP_ROBUSTNESS_SEED={seed}");
    let mut rng = Rng(seed);
    let dir = tmp();
    let (repo, root) = (dir.path().join("repo"), dir.path().join("src"));
    fs::create_dir_all(&root).unwrap();
    init_repo(&repo);
    let mut looks: BTreeMap<String, BTreeMap<Vec<u8>, Seen>> = BTreeMap::new();
    for step in 0..steps {
        let what = rng.below(10);
        let context = format!("seed {seed}, step {step}, action {what}");
        match what {
            0..=3 => {
                for _ in 0..=rng.below(3) {
                    change(&mut rng, &root);
                }
                backup_json(&repo, &root);
                looks.insert(snapshot_of(&repo, &root), look(&root));
            }
            4..=5 if looks.len() > 1 => {
                let keep = 1 + rng.below(looks.len() as u64 - 1);
                store_ok(&repo, &["forget", "--keep-last", &keep.to_string()]);
                let present = snapshot_ids(&repo);
                looks.retain(|id, _| present.contains(id));
                assert_eq!(looks.len() as u64, keep, "{context}: forget kept the wrong number");
            }
            6..=7 => {
                let unused = ["0", "5", "50"][rng.below(3) as usize];
                let out = store(&repo, &["prune", "--max-unused", unused]);
                assert_eq!(out.code(), 0, "{context}:\n{}", out.dump());
            }
            _ => {
                if let Some((id, seen)) = looks.iter().nth(rng.below(looks.len() as u64) as usize) {
                    let target = dir.path().join(format!("restore-{step}"));
                    assert_restores(&repo, &id[..8], &root, &target, seen);
                    fs::remove_dir_all(&target).unwrap();
                }
            }
        }
    }
    let out = store(&repo, &["check", "--read-data"]);
    assert_eq!(out.code(), 0, "seed {seed}: {}", out.dump());
    for (id, seen) in &looks {
        let target = dir.path().join(format!("final-{}", &id[..8]));
        assert_restores(&repo, &id[..8], &root, &target, seen);
    }
}
