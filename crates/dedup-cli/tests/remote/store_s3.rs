//! `dedup store` on a real S3 server (s3s-fs) reached through a proxy that delays, drops and
//! fails requests: backups and restores retry and finish, or fail naming the object and leave the
//! repository consistent; large packs uploaded in parts through the same faults; and several
//! hosts backing up into one repository at once; and deletions sent 1,000 keys to a request
//! (a prune of many packs in a few requests; a failed batch names a pack).

use crate::common;
use crate::common::append_only_proxy::read_request;
use crate::common::s3server;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::act::contents;
use common::store::*;
use s3server::S3Server;

/// What the proxy does to requests, in per mille of them (chosen by a fixed pseudo-random
/// sequence, so a run is repeatable up to thread timing).
#[derive(Clone, Copy, Default)]
struct Faults {
    /// Answered after a pause.
    delay: u64,
    /// Answered `503 Slow Down` without reaching the server.
    fail: u64,
    /// Forwarded, but the connection is closed before the answer (the server acted on it).
    drop_answer: u64,
    /// PUTs whose path contains this are all answered 500 (a failure that outlasts retries).
    fail_puts_under: Option<&'static str>,
    /// DELETEs whose path contains this, and every batch deletion (`POST ?delete`), are all
    /// answered 500.
    fail_deletes_under: Option<&'static str>,
}

/// A proxy in front of the server on `upstream`, on its own port; runs until the test ends.
struct Proxy {
    port: u16,
    seen: Arc<AtomicU64>,
    /// Requests that uploaded one part of a multipart upload (`PUT …?partNumber=…`).
    parts: Arc<AtomicU64>,
    /// Requests that deleted objects: one each (`DELETE`) or many (`POST ?delete`).
    deletions: Arc<AtomicU64>,
}

impl Proxy {
    fn start(upstream: u16, faults: Faults) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(AtomicU64::new(0));
        let parts = Arc::new(AtomicU64::new(0));
        let deletions = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&seen);
        let counts = Counts { parts: Arc::clone(&parts), deletions: Arc::clone(&deletions) };
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let counts = counts.clone();
                std::thread::spawn(move || {
                    let _ = serve(client, upstream, faults, n, &counts);
                });
            }
        });
        Proxy { port, seen, parts, deletions }
    }
}

/// The proxy's counters of particular requests (see [`Proxy`]).
#[derive(Clone)]
struct Counts {
    parts: Arc<AtomicU64>,
    deletions: Arc<AtomicU64>,
}

/// Serves one client connection request by request; each request goes to the server on a
/// connection of its own, which it closes after answering.
fn serve(
    mut client: TcpStream,
    upstream: u16,
    faults: Faults,
    conn: u64,
    counts: &Counts,
) -> std::io::Result<()> {
    let mut nth = conn.wrapping_mul(1000);
    while let Some((head, body)) = read_request(&mut client)? {
        nth += 1;
        // A splitmix step: a well-spread number in 0..1000 for this request.
        let mut z = nth.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let roll = (z ^ (z >> 31)) % 1000;
        let request_line = head.lines().next().unwrap_or("").to_string();
        if request_line.starts_with("PUT ") && request_line.contains("partNumber=") {
            counts.parts.fetch_add(1, Ordering::Relaxed);
        }
        let batch_delete = request_line.starts_with("POST ") && request_line.contains("?delete");
        let delete = request_line.starts_with("DELETE ");
        if batch_delete || delete {
            counts.deletions.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(under) = faults.fail_deletes_under {
            if batch_delete || (delete && request_line.contains(under)) {
                client.write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
                )?;
                continue;
            }
        }
        if let Some(under) = faults.fail_puts_under {
            if request_line.starts_with("PUT ") && request_line.contains(under) {
                client.write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
                )?;
                continue;
            }
        }
        if roll < faults.fail {
            client.write_all(b"HTTP/1.1 503 Slow Down\r\ncontent-length: 0\r\n\r\n")?;
            continue;
        }
        if roll < faults.fail + faults.delay {
            std::thread::sleep(Duration::from_millis(150));
        }
        let head: String = head
            .split("\r\n")
            .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
            .filter(|l| !l.is_empty())
            .map(|l| format!("{l}\r\n"))
            .collect();
        let mut server = TcpStream::connect(("127.0.0.1", upstream))?;
        server.write_all(head.as_bytes())?;
        server.write_all(b"connection: close\r\n\r\n")?;
        server.write_all(&body)?;
        let mut answer = Vec::new();
        server.read_to_end(&mut answer)?;
        if roll >= 1000 - faults.drop_answer {
            let _ = client.shutdown(Shutdown::Both);
            return Ok(());
        }
        client.write_all(&answer)?;
        // The server's answer said `connection: close`; the client opens a new connection.
        let _ = client.shutdown(Shutdown::Both);
        return Ok(());
    }
    Ok(())
}

/// A tree of `files` files of varied sizes, some shared with other seeds.
fn tree(root: &Path, seed: u64, files: usize) {
    std::fs::create_dir_all(root.join("sub")).unwrap();
    for i in 0..files {
        let len = 1000 + (i * 37_717 + seed as usize * 101) % 300_000;
        let bytes = common::noise_bytes(seed.wrapping_mul(31).wrapping_add(i as u64), len);
        let dir = if i % 3 == 0 { root.join("sub") } else { root.to_path_buf() };
        std::fs::write(dir.join(format!("f{i}")), bytes).unwrap();
    }
    // The same bytes on every host: stored once however many back them up.
    std::fs::write(root.join("shared"), vec![7u8; 700_000]).unwrap();
}

/// Restores `spec` (`ID:PATH`) into a new directory under `dir` and compares it with `src`.
fn assert_restores(repo: &Path, spec: &str, src: &Path, dir: &Path, name: &str) {
    let target = dir.join(name);
    store_ok(repo, &["restore", spec, "--target", target.to_str().unwrap()]);
    assert_eq!(contents(&target), contents(src), "{spec} restores exactly");
}

#[test]
fn backup_and_restore_through_a_faulty_network_retry_and_lose_nothing() {
    let Some(server) = S3Server::start("faulty network") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 1, 40);
    let proxy = Proxy::start(
        server.port,
        Faults { delay: 100, fail: 100, drop_answer: 50, ..Faults::default() },
    );
    let repo = server.repo_at(proxy.port, "repo");
    init_repo(&repo);
    store_ok(&repo, &["backup", src.to_str().unwrap()]);
    std::fs::write(src.join("new"), b"a second snapshot").unwrap();
    store_ok(&repo, &["backup", src.to_str().unwrap()]);
    assert_restores(&repo, &format!("latest:{}", src.display()), &src, dir.path(), "t1");
    assert!(proxy.seen.load(Ordering::Relaxed) > 50, "the requests went through the proxy");
    let direct = server.repo("repo");
    store_ok(&direct, &["check", "--read-data"]);
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(&direct, &["snapshots", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
}

#[test]
fn packs_above_the_multipart_threshold_go_up_in_parts_through_a_faulty_network() {
    let Some(server) = S3Server::start("multipart packs") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    // 128 MiB that neither compresses nor deduplicates. Blobs are spread by id over a session's
    // open packs (format 4): four until one reaches 16 MiB (S3 cannot take a pack as it fills),
    // then two; so however the ids fall, the two take at least 64 MiB between them and one pack
    // passes the 32 MiB multipart threshold: at least three parts of 16 MiB or less.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let bytes: Vec<u8> = (0..128 << 17)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect();
    std::fs::write(src.join("big"), &bytes).unwrap();
    drop(bytes);
    let proxy = Proxy::start(
        server.port,
        Faults { delay: 50, fail: 100, drop_answer: 30, ..Faults::default() },
    );
    let repo = server.repo_at(proxy.port, "repo");
    store_ok(
        &repo,
        &["init", "--kdf-memory-kib", "64", "--kdf-iterations", "1", "--pack-size", "64MiB"],
    );
    store_ok(&repo, &["backup", src.to_str().unwrap()]);
    assert!(
        proxy.parts.load(Ordering::Relaxed) >= 3,
        "the large pack went up in parts ({} part requests)",
        proxy.parts.load(Ordering::Relaxed)
    );
    eprintln!(
        "multipart packs: {} requests, {} of them part uploads",
        proxy.seen.load(Ordering::Relaxed),
        proxy.parts.load(Ordering::Relaxed)
    );
    let direct = server.repo("repo");
    store_ok(&direct, &["check", "--read-data"]);
    assert_restores(&direct, &format!("latest:{}", src.display()), &src, dir.path(), "t");
}

#[test]
fn a_large_object_is_written_once_in_parts_and_never_replaced() {
    use dedup_store::backend::{Backend, PutOutcome, S3Backend, S3Options, MULTIPART_THRESHOLD};
    let Some(server) = S3Server::start("multipart write-once") else { return };
    let proxy = Proxy::start(server.port, Faults::default());
    let location = server.repo_at(proxy.port, "objects");
    let backend = S3Backend::new(location.to_str().unwrap(), &S3Options::default()).unwrap();
    let first = vec![1u8; MULTIPART_THRESHOLD + 5];
    assert_eq!(backend.put("data/ab/big", &first).unwrap(), PutOutcome::Created);
    let parts = proxy.parts.load(Ordering::Relaxed);
    assert!(parts >= 2, "uploaded in parts: {parts}");
    // Another length, so that only the condition (not the length check after a lost answer)
    // can make this `AlreadyExisted`.
    let second = vec![2u8; MULTIPART_THRESHOLD + 6];
    assert_eq!(backend.put("data/ab/big", &second).unwrap(), PutOutcome::AlreadyExisted);
    assert!(backend.get("data/ab/big").unwrap() == first, "the first object is kept whole");
    assert_eq!(backend.list("data").unwrap()[0].size, first.len() as u64);
}

#[test]
fn a_failure_outlasting_the_retries_names_the_object_and_leaves_the_repository_usable() {
    let Some(server) = S3Server::start("failure after retries") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 2, 10);
    let direct = server.repo("repo");
    init_repo(&direct);
    let proxy =
        Proxy::start(server.port, Faults { fail_puts_under: Some("/data/"), ..Faults::default() });
    let out = store(&server.repo_at(proxy.port, "repo"), &["backup", src.to_str().unwrap()]);
    assert_ne!(out.code, Some(0), "{}", out.dump());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("data/"), "the error names the object: {stderr}");
    store_ok(&direct, &["check"]);
    store_ok(&direct, &["backup", src.to_str().unwrap()]);
    store_ok(&direct, &["check", "--read-data"]);
    assert_restores(&direct, &format!("latest:{}", src.display()), &src, dir.path(), "t");
}

#[test]
fn several_hosts_back_up_into_one_repository_at_once() {
    let Some(server) = S3Server::start("several hosts") else { return };
    let dir = tempfile::tempdir().unwrap();
    let repo = server.repo("repo");
    init_repo(&repo);
    let hosts: usize = 3;
    let rounds: usize =
        std::env::var("DEDUP_TEST_S3_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let srcs: Vec<_> = (0..hosts).map(|h| dir.path().join(format!("host{h}"))).collect();
    for round in 0..rounds {
        for (h, src) in srcs.iter().enumerate() {
            tree(src, (h * 100 + round) as u64, 12);
        }
        // The earlier rounds' snapshots go, and a prune runs beside the backups.
        if round > 0 {
            store_ok(&repo, &["forget", "--quiet", "--keep-last", "1"]);
        }
        let prune = spawn_store(&repo, &["prune", "--quiet", "--max-unused", "0"]);
        // Each host a process of its own, all at once, no lock between them.
        let children: Vec<_> =
            srcs.iter().enumerate().map(|(h, src)| spawn_backup(&repo, h, src)).collect();
        for (h, child) in children.into_iter().enumerate() {
            wait_ok(child, &format!("host{h} round {round}"));
        }
        wait_ok(prune, &format!("prune round {round}"));
        for (h, src) in srcs.iter().enumerate() {
            let spec = format!("latest:{}", src.display());
            let target = dir.path().join(format!("r{round}-{h}"));
            let host = format!("host{h}");
            store_ok(
                &repo,
                &["restore", &spec, "--host", &host, "--target", target.to_str().unwrap()],
            );
            assert_eq!(contents(&target), contents(src), "host{h} round {round}");
        }
    }
    store_ok(&repo, &["prune"]);
    store_ok(&repo, &["check", "--read-data"]);
}

/// Packs of the repository `name`, counted in the server's directory.
fn count_packs(server: &S3Server, name: &str) -> usize {
    let mut count = 0;
    let mut pending = vec![server.dir(name).join("data")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else {
                count += 1;
            }
        }
    }
    count
}

/// Backs up `gone` then `kept` into the repository `direct` and forgets the first snapshot.
fn back_up_and_forget_one(direct: &Path, gone: &Path, kept: &Path) {
    store_ok(direct, &["backup", gone.to_str().unwrap()]);
    let doomed = snapshot_of(direct, gone);
    store_ok(direct, &["backup", kept.to_str().unwrap()]);
    store_ok(direct, &["forget", &doomed]);
}

#[test]
fn prune_deletes_many_packs_in_few_requests_and_everything_still_restores() {
    let Some(server) = S3Server::start("batch deletion") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (gone, kept) = (dir.path().join("gone"), dir.path().join("kept"));
    // About 37 MB that neither compresses nor deduplicates: some 25 packs, all
    // unreachable once their snapshot is forgotten.
    tree(&gone, 11, 250);
    tree(&kept, 12, 6);
    let direct = server.repo("repo");
    init_repo(&direct);
    back_up_and_forget_one(&direct, &gone, &kept);
    let before = count_packs(&server, "repo");
    let proxy = Proxy::start(server.port, Faults::default());
    store_ok(&server.repo_at(proxy.port, "repo"), &["prune", "--max-unused", "0"]);
    let deleted = before.saturating_sub(count_packs(&server, "repo"));
    let requests = proxy.deletions.load(Ordering::Relaxed);
    eprintln!("{deleted} packs deleted in {requests} deletion requests");
    assert!(deleted >= 20, "the prune deleted many packs: {deleted}");
    // The packs in one request, the index files in another, the plan, the first plan, the
    // writer marker and the prune's question whether it may delete (append-only credentials)
    // one each.
    assert!(requests <= 7, "{deleted} packs deleted in {requests} deletion requests");
    store_ok(&direct, &["check", "--read-data"]);
    assert_restores(&direct, &format!("latest:{}", kept.display()), &kept, dir.path(), "t");
}

#[test]
fn a_batch_deletion_that_fails_names_a_pack_and_the_next_prune_finishes_it() {
    let Some(server) = S3Server::start("failed batch deletion") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (gone, kept) = (dir.path().join("gone"), dir.path().join("kept"));
    tree(&gone, 13, 30);
    tree(&kept, 14, 6);
    let direct = server.repo("repo");
    init_repo(&direct);
    back_up_and_forget_one(&direct, &gone, &kept);
    let before = count_packs(&server, "repo");
    let proxy = Proxy::start(
        server.port,
        Faults { fail_deletes_under: Some("/data/"), ..Faults::default() },
    );
    let out = store(&server.repo_at(proxy.port, "repo"), &["prune", "--max-unused", "0"]);
    assert_ne!(out.code, Some(0), "{}", out.dump());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("data/"), "the error names a pack: {stderr}");
    assert!(count_packs(&server, "repo") >= before, "no pack went");
    store_ok(&direct, &["check"]);
    store_ok(&direct, &["prune", "--max-unused", "0"]);
    assert!(count_packs(&server, "repo") < before, "the next prune deleted them");
    store_ok(&direct, &["check", "--read-data"]);
    assert_restores(&direct, &format!("latest:{}", kept.display()), &kept, dir.path(), "t");
}

#[test]
fn many_objects_are_deleted_a_thousand_to_a_request_and_absent_ones_succeed() {
    use dedup_store::backend::{Backend, S3Backend, S3Options};
    let Some(server) = S3Server::start("delete_many") else { return };
    // Written straight into the server's directory: s3s-fs serves files as objects.
    let mut names = Vec::new();
    for i in 0..2100u32 {
        let name = format!("data/{:02x}/{i:064x}", i % 256);
        let path = server.dir("bulk").join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, i.to_le_bytes()).unwrap();
        names.push(name);
    }
    names.push(format!("data/ff/{:064x}", u32::MAX));
    let proxy = Proxy::start(server.port, Faults::default());
    let location = server.repo_at(proxy.port, "bulk");
    let backend = S3Backend::new(location.to_str().unwrap(), &S3Options::default()).unwrap();
    assert_eq!(backend.list("data").unwrap().len(), 2100);
    backend.delete_many(&names).unwrap();
    assert!(backend.list("data").unwrap().is_empty(), "all gone");
    assert_eq!(proxy.deletions.load(Ordering::Relaxed), 3, "2,101 keys in three requests");
}

#[test]
fn init_refuses_a_prefix_holding_part_of_a_repository() {
    let Some(server) = S3Server::start("init over remains") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 3, 5);
    assert_init_refuses_remains(&server.repo("repo"), &server.dir("repo"), &src);
}
