//! `dedup store rewrite`: snapshots written again without what matches (a leaked secret): the
//! copy restores everything else, records its original, the original stays unless `--forget`,
//! `--dry-run` changes nothing, and after `rewrite --forget` and `prune --max-unused 0` the
//! secret's bytes are in no file of the repository.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use common::store::*;
use common::*;

const SECRET: &[u8] = b"AKIA-leaked-secret-4f1d8c2b9e7a";

fn snapshots(repo: &Path) -> Vec<serde_json::Value> {
    let listed: serde_json::Value =
        serde_json::from_str(&store_ok(repo, &["snapshots", "--json"])).unwrap();
    listed.as_array().unwrap().clone()
}

/// Whether any file of the repository holds `needle` as it is.
fn repo_holds(repo: &Path, needle: &[u8]) -> bool {
    repo_files(repo).values().any(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
}

fn plain_repo(repo: &Path) {
    let args = ["init", "--insecure-no-encryption", "--compression", "off", "--pack-size", "1M"];
    store_ok(repo, &args);
}

#[test]
fn a_rewritten_snapshot_leaves_out_the_match_and_keeps_the_rest() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "app/config.yml", b"setting: 1\n");
    write(&src, "app/.env", SECRET);
    write(&src, "app/keys/deploy.key", b"key material");
    write(&src, "notes/.env.example", b"example\n");
    let excludes = dir.path().join("excludes");
    fs::write(&excludes, "# secrets\n\n  *.key  \n").unwrap();
    plain_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), OsStr::new("--tag=t"), src.as_os_str()]);
    let original = snapshots(&repo)[0]["id"].as_str().unwrap().to_string();

    let planned = store_ok(
        &repo,
        &["rewrite", "-n", "--exclude", ".env", "--exclude-file", excludes.to_str().unwrap()],
    );
    let env = format!("{}/app/.env", src.display());
    let key = format!("{}/app/keys/deploy.key", src.display());
    assert!(planned.contains(&format!("leaves out {env}")), "{planned}");
    assert!(planned.contains(&format!("leaves out {key}")), "{planned}");
    assert!(!planned.contains(".env.example"), "{planned}");
    assert!(planned.contains("would rewrite 1 snapshot"), "{planned}");
    assert_eq!(snapshots(&repo).len(), 1, "a dry run writes nothing");

    let args = ["rewrite", "--exclude", ".env", "--exclude-file", excludes.to_str().unwrap()];
    store_ok(&repo, &args);
    let both = snapshots(&repo);
    assert_eq!(both.len(), 2, "the original stays without --forget");
    let copy = both.iter().find(|s| s["original"] == original.as_str()).unwrap();
    assert_eq!(copy["tags"], serde_json::json!(["t"]));
    assert_eq!(copy["paths"], both.iter().find(|s| s["id"] == original.as_str()).unwrap()["paths"]);
    let listed = store_ok(&repo, &["ls", &copy["id"].as_str().unwrap()[..8]]);
    assert!(!listed.contains("/app/.env\n") && !listed.contains("deploy.key"), "{listed}");
    assert!(listed.contains("/app/config.yml") && listed.contains(".env.example"), "{listed}");
    let target = dir.path().join("out");
    let spec = format!("{}:{}", &copy["id"].as_str().unwrap()[..8], src.display());
    store_ok(&repo, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_eq!(fs::read(target.join("app/config.yml")).unwrap(), b"setting: 1\n");
    assert!(target.join("app/keys").is_dir() && !target.join("app/keys/deploy.key").exists());
    assert!(!target.join("app/.env").exists());

    // Nothing matches any more: the copy is left alone, as is a snapshot named that has none.
    let again =
        store_ok(&repo, &["rewrite", "--exclude", ".env", &copy["id"].as_str().unwrap()[..8]]);
    assert!(again.contains("rewrote 0 snapshot(s); 1 held nothing"), "{again}");
    store_ok(&repo, &["check", "--read-data"]);
    // A bad pattern is named; no pattern at all is a usage error.
    store(&repo, &["rewrite", "--exclude", "a[b"]).assert_code(2);
    store(&repo, &["rewrite"]).assert_code(2);
}

#[test]
fn after_rewrite_forget_and_prune_the_secret_is_in_no_file_of_the_repository() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "code/main.rs", b"fn main() {}\n");
    write(&src, "code/credentials.txt", SECRET);
    write(&src, "big", &pattern(300_000, 7));
    plain_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    write(&src, "code/main.rs", b"fn main() { println!(); }\n");
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    assert!(repo_holds(&repo, SECRET), "an unencrypted, uncompressed repository holds it");

    let said = store_ok(&repo, &["rewrite", "--forget", "--exclude", "credentials.txt"]);
    assert!(said.contains("rewrote 2 snapshot(s)"), "{said}");
    let left = snapshots(&repo);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().all(|s| s.get("original").is_some()), "the originals are gone");
    store_ok(&repo, &["prune", "--max-unused", "0"]);
    assert!(!repo_holds(&repo, SECRET), "the secret survived rewrite --forget and prune");
    store_ok(&repo, &["check", "--read-data"]);
    let target = dir.path().join("out");
    let spec = format!("latest:{}", src.display());
    store_ok(&repo, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_eq!(fs::read(target.join("big")).unwrap(), pattern(300_000, 7));
    assert!(!target.join("code/credentials.txt").exists());
}

/// `rewrite --forget` removes an original only after its copy is written: an original that
/// cannot be removed (immutable, as a crash before the removal leaves it) stays beside its copy
/// (exit 1), and the same rewrite run again takes the copy already written instead of a second.
#[test]
fn an_interrupted_rewrite_forget_leaves_the_original_beside_its_copy() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "keep", b"kept");
    write(&src, "secret", SECRET);
    init_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    let old = repo.join(&repo_names(&repo, "snapshots")[0]);
    let chattr = |flag: &str| {
        std::process::Command::new("chattr").arg(flag).arg(&old).status().is_ok_and(|s| s.success())
    };
    if !require(
        chattr("+i"),
        "an_interrupted_rewrite_forget_leaves_the_original_beside_its_copy",
        "chattr +i (root on a file system with immutable files) is needed",
    ) {
        return;
    }
    let out = store(&repo, &["rewrite", "--forget", "--exclude", "secret"]);
    chattr("-i");
    assert_eq!(out.code(), 1, "{}", out.dump());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("could not be removed"),
        "{}",
        out.dump()
    );
    assert_eq!(snapshots(&repo).len(), 2, "the copy and the original");
    store_ok(&repo, &["rewrite", "--forget", "--exclude", "secret"]);
    let left = snapshots(&repo);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].get("original").is_some());
}

/// A rewrite whose patterns match what a snapshot saved (or a directory on the way to it) wrote
/// an empty copy and, with `--forget`, removed the original: `--exclude '*'` or `'/*'` over
/// every snapshot emptied the repository for the next prune, where `forget` is the command for
/// removing snapshots. Now it is refused before anything is written.
#[test]
fn a_rewrite_that_would_leave_nothing_of_a_snapshot_is_refused_before_writing() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "app/config.yml", b"setting: 1\n");
    write(&src, "app/.env", SECRET);
    plain_repo(&repo);
    store_ok(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    let before = snapshots(&repo);
    let top = format!("/{}", src.components().nth(1).unwrap().as_os_str().to_str().unwrap());
    let saved = src.to_str().unwrap();
    for pattern in ["*", "**", "/*", top.as_str(), saved] {
        for forget in [false, true] {
            let mut args = vec!["rewrite", "--exclude", pattern];
            if forget {
                args.push("--forget");
            }
            let out = store(&repo, &args);
            assert_ne!(
                out.code,
                Some(0),
                "--exclude {pattern:?} emptied a snapshot:\n{}",
                out.dump()
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("leaves nothing of snapshot"), "{pattern:?}: {stderr}");
            assert_eq!(snapshots(&repo), before, "{pattern:?} changed the snapshots");
        }
    }
    // What leaves something is rewritten as before.
    let out = store_ok(&repo, &["rewrite", "--forget", "--exclude", ".env"]);
    assert!(out.contains("leaves out"), "{out}");
    let after = snapshots(&repo);
    assert_eq!(after.len(), 1, "the original stays beside its copy");
    assert_ne!(after[0]["id"], before[0]["id"]);
}
