//! `dedup store` on a repository on a real SFTP server (OpenSSH's sshd on 127.0.0.1, reached
//! through the real ssh client): every command a user runs on a local path, and the backend's
//! own promises (write-once puts, listings with sizes and times, ranged reads, deletes, no
//! temporary left visible, puts after the server dropped every connection), and three hosts
//! backing up into one repository at once.

use crate::common;
use crate::common::sftpserver;

use std::path::Path;

use common::act::contents;
use common::store::*;
use dedup_store::backend::{Backend, PutOutcome, S3Options, SftpBackend};
use sftpserver::SftpServer;

/// A tree of `files` files of varied sizes, some the same bytes.
fn tree(root: &Path, seed: u64, files: usize) {
    std::fs::create_dir_all(root.join("sub")).unwrap();
    for i in 0..files {
        let len = 1000 + (i * 37_717 + seed as usize * 101) % 300_000;
        let bytes = common::noise_bytes(seed.wrapping_mul(31).wrapping_add(i as u64), len);
        let dir = if i % 3 == 0 { root.join("sub") } else { root.to_path_buf() };
        std::fs::write(dir.join(format!("f{i}")), bytes).unwrap();
    }
    std::fs::write(root.join("same-a"), vec![7u8; 300_000]).unwrap();
    std::fs::write(root.join("sub/same-b"), vec![7u8; 300_000]).unwrap();
}

/// Every file under `dir` (on the server's disk) whose name begins with `.`.
fn hidden_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else if entry.file_name().to_string_lossy().starts_with('.') {
                out.push(entry.path().display().to_string());
            }
        }
    }
    out
}

#[test]
fn a_repository_on_sftp_backs_up_restores_checks_forgets_and_prunes() {
    let Some(server) = SftpServer::start("sftp round trip") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 1, 30);
    // Files changed within a second of a backup are read again by the next one (their times
    // cannot vouch for them yet): let the tree's times settle first.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let repo = server.repo("repo");
    init_repo(&repo);
    assert!(server.dir("repo").join("config").is_file(), "the repository is on the server");

    let first = backup_json(&repo, &src);
    assert!(first["files_new"].as_u64().unwrap() >= 30, "{first}");
    let unchanged = backup_json(&repo, &src);
    assert_eq!(unchanged["files_unchanged"], first["files_new"], "{unchanged}");
    assert_eq!(unchanged["bytes_read"], 0, "an unchanged backup reads nothing: {unchanged}");
    // At most a few status trees (atimes the first backup's reads moved), in one pack padded to
    // the smallest bucket (docs/store-format.md §7).
    assert!(unchanged["blobs_added"].as_u64().unwrap() < 10, "{unchanged}");
    assert!(unchanged["bytes_added"].as_u64().unwrap() <= 65_536, "{unchanged}");

    let target = dir.path().join("restored");
    let spec = format!("latest:{}", src.display());
    store_ok(&repo, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_eq!(contents(&target), contents(&src), "the restore is byte for byte the source");
    store_ok(&repo, &["check", "--read-data"]);

    // A second state of the tree; the first two snapshots are forgotten and their data pruned.
    std::fs::remove_file(src.join("f1")).unwrap();
    tree(&src.join("later"), 2, 8);
    backup_json(&repo, &src);
    // The data blobs' bytes: a pack's padding (docs/store-format.md §7) may not shrink when a
    // prune frees less than its bucket's width, nor does it hold anything.
    let data_bytes = |repo: &Path| {
        let stats: serde_json::Value =
            serde_json::from_str(&store_ok(repo, &["stats", "--json"])).unwrap();
        stats["stored_data_bytes"].as_u64().unwrap()
    };
    let before = data_bytes(&repo);
    store_ok(&repo, &["forget", "--keep-last", "1"]);
    store_ok(&repo, &["prune", "--max-unused", "0"]);
    let list: serde_json::Value =
        serde_json::from_str(&store_ok(&repo, &["snapshots", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert!(data_bytes(&repo) < before, "prune freed the deleted file's data");
    store_ok(&repo, &["check", "--read-data"]);
    let target = dir.path().join("restored-2");
    store_ok(&repo, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_eq!(contents(&target), contents(&src), "the kept snapshot restores exactly");
    assert_eq!(hidden_files(&server.dir("repo")), Vec::<String>::new(), "no temporary is left");
    // The same repository opened as a local folder (the server is this host) reads the same.
    store_ok(&server.dir("repo"), &["check", "--read-data"]);
}

#[test]
fn restic_style_locations_and_clear_errors() {
    let Some(server) = SftpServer::start("sftp errors") else { return };
    let repo = server.repo("repo");
    init_repo(&repo);
    let out = store(&repo, &["init"]);
    assert_eq!(out.code, Some(2), "init twice is refused: {}", out.dump());
    let nothing = server.repo("nothing");
    let out = store(&nothing, &["snapshots"]);
    assert_eq!(out.code, Some(2), "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no repository"), "{}", out.dump());
    // Nobody listens on this port: a clear error, no hang.
    let closed = format!("sftp://127.0.0.1:{}//tmp/x", sftpserver_free_port());
    let out = store(Path::new(&closed), &["snapshots"]);
    assert_eq!(out.code, Some(2), "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ssh"), "{}", out.dump());
    let out = store(Path::new("sftp://127.0.0.1:99999/x"), &["snapshots"]);
    assert_eq!(out.code, Some(2), "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("port"), "{}", out.dump());
}

/// A port nobody listens on now.
fn sftpserver_free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_backend_writes_once_lists_reads_ranges_and_deletes() {
    let Some(server) = SftpServer::start("sftp backend") else { return };
    let location = server.repo("objects");
    let backend = SftpBackend::new(location.to_str().unwrap(), &S3Options::default()).unwrap();
    assert_eq!(backend.put("config", b"first").unwrap(), PutOutcome::Created);
    assert_eq!(backend.put("data/ab/abc", b"one two three").unwrap(), PutOutcome::Created);
    assert_eq!(backend.put("data/ab/abc", b"other bytes").unwrap(), PutOutcome::AlreadyExisted);
    assert_eq!(backend.get("data/ab/abc").unwrap(), b"one two three", "never replaced");
    assert_eq!(backend.put("config", b"second").unwrap(), PutOutcome::AlreadyExisted);
    assert_eq!(backend.get("config").unwrap(), b"first");
    assert_eq!(backend.get_range("data/ab/abc", 4, 3).unwrap(), b"two");
    assert!(backend.get_range("data/ab/abc", 10, 10).is_err(), "a range past the end");
    assert_eq!(backend.get("data/ab/none").unwrap_err().kind(), std::io::ErrorKind::NotFound);
    backend.put("data/cd/cde", &vec![5u8; 3_000_000]).unwrap();
    // A writer killed half-way leaves its temporary; it is no object.
    let shard = server.dir("objects").join("data/ab");
    let leftover = shard.join(".tmp-ffffffff-1-1111");
    std::fs::write(&leftover, b"partial").unwrap();
    let listed = backend.list("data").unwrap();
    let names: Vec<_> = listed.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["data/ab/abc", "data/cd/cde"]);
    assert_eq!((listed[0].size, listed[1].size), (13, 3_000_000));
    let age = std::time::SystemTime::now()
        .duration_since(listed[1].modified.expect("the server gives times"))
        .unwrap_or_default();
    assert!(age.as_secs() < 600, "a fresh object's time: {age:?} ago");
    assert!(backend.list("snapshots").unwrap().is_empty());
    // Another host's temporary is kept until it is old.
    assert_eq!(backend.remove_stale_temporaries(std::time::Duration::from_secs(3600)).unwrap(), 0);
    assert_eq!(backend.remove_stale_temporaries(std::time::Duration::ZERO).unwrap(), 1);
    assert!(!leftover.exists());
    backend.delete("data/ab/abc").unwrap();
    backend.delete("data/ab/abc").unwrap();
    assert!(!backend.exists("data/ab/abc").unwrap());
    assert!(backend.exists("data/cd/cde").unwrap());
    assert_eq!(hidden_files(&server.dir("objects")), Vec::<String>::new());
}

#[test]
fn puts_and_reads_go_on_after_the_server_drops_every_connection() {
    let Some(server) = SftpServer::start("sftp reconnect") else { return };
    let location = server.repo("objects");
    let backend = SftpBackend::new(location.to_str().unwrap(), &S3Options::default()).unwrap();
    assert_eq!(backend.put("data/ab/one", b"one").unwrap(), PutOutcome::Created);
    server.drop_connections();
    // Both OpenDAL's pooled sessions and the backend's own are dead now.
    assert_eq!(backend.put("data/ab/two", b"two").unwrap(), PutOutcome::Created);
    assert_eq!(backend.put("data/ab/one", b"one").unwrap(), PutOutcome::AlreadyExisted);
    assert_eq!(backend.get("data/ab/one").unwrap(), b"one");
    assert_eq!(backend.list("data").unwrap().len(), 2);
    assert_eq!(hidden_files(&server.dir("objects")), Vec::<String>::new());
}

#[test]
fn three_hosts_back_up_into_one_sftp_repository_at_once() {
    let Some(server) = SftpServer::start("sftp several hosts") else { return };
    let dir = tempfile::tempdir().unwrap();
    let repo = server.repo("repo");
    init_repo(&repo);
    let srcs: Vec<_> = (0..3).map(|h| dir.path().join(format!("host{h}"))).collect();
    for (h, src) in srcs.iter().enumerate() {
        tree(src, h as u64 * 10, 10);
    }
    // Each host a process of its own, all at once, no lock between them.
    let children: Vec<_> =
        srcs.iter().enumerate().map(|(h, src)| spawn_backup(&repo, h, src)).collect();
    for (h, child) in children.into_iter().enumerate() {
        wait_ok(child, &format!("host{h}"));
    }
    store_ok(&repo, &["check", "--read-data"]);
    for (h, src) in srcs.iter().enumerate() {
        let spec = format!("latest:{}", src.display());
        let target = dir.path().join(format!("r{h}"));
        let host = format!("host{h}");
        store_ok(&repo, &["restore", &spec, "--host", &host, "--target", target.to_str().unwrap()]);
        assert_eq!(contents(&target), contents(src), "host{h}");
    }
}

#[test]
fn init_refuses_a_folder_holding_part_of_a_repository() {
    let Some(server) = SftpServer::start("init over remains") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    tree(&src, 3, 5);
    assert_init_refuses_remains(&server.repo("repo"), &server.dir("repo"), &src);
}
