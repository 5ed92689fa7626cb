//! `repair snapshots --forget` removes only snapshots that proved damaged.

use std::sync::Arc;

use super::*;
use crate::backend::LocalBackend;
use crate::format::{KdfParams, Magic, Snapshot};
use crate::repo::InitOptions;

#[test]
fn forget_removes_a_damaged_snapshot_and_leaves_one_of_a_newer_version() {
    let dir = tempfile::tempdir().unwrap();
    let options = InitOptions {
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    let repo =
        Repository::init(Arc::new(LocalBackend::new(dir.path().join("repo"))), options).unwrap();
    let empty = Tree { status: tree_status(&repo), ..Tree::default() };
    let sink = BlobSink::new(&repo, Index::new(), false);
    let tree = sink.store(BlobKind::Tree, &empty.encode()).unwrap();
    sink.flush().unwrap();
    let snapshot = Snapshot { tree, host: "h".into(), ..Snapshot::default() };
    // One written by a newer program: a version this one does not know.
    let mut newer = snapshot.encode();
    newer[0] = 9;
    let newer = repo.write_sealed("snapshots", Magic::Snapshot, &newer).unwrap();
    // One that is damaged: its box does not open.
    let damaged = repo.save_snapshot(&Snapshot { time: 1, ..snapshot }).unwrap();
    let path = dir.path().join(format!("repo/snapshots/{damaged}"));
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();

    let outcome = repair_snapshots(&repo, "h", true).unwrap();
    assert_eq!(outcome.unreadable.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [damaged]);
    assert_eq!(outcome.left_alone.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [newer]);
    let left = repo.list_snapshot_ids().unwrap();
    assert_eq!(left, [newer], "only the damaged snapshot is removed");
}
