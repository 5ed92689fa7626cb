//! Writes a synthetic repository of N tiny data blobs for prune's scale benchmark
//! (bench/store/prune_scale.py): two snapshots, `keep` holding 70 % of the blobs and `drop` the
//! other 30 %, in files of 1,000 chunks, 100 files to a directory. Unencrypted, uncompressed,
//! 1 MiB packs, so that building 10 M blobs takes a minute, not an hour.
//!
//! `cargo run --release --example synthetic_repo -- DIR BLOBS`

use std::sync::Arc;

use dedup_store::backend::LocalBackend;
use dedup_store::blob::BlobKind;
use dedup_store::format::{CompressionMode, Content, Node, NodeKind, Snapshot, Tree};
use dedup_store::id::Id;
use dedup_store::index::Index;
use dedup_store::repo::{BlobSink, InitOptions, Repository};

const CHUNKS_PER_FILE: u64 = 1000;
const FILES_PER_DIR: u64 = 100;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(blobs)) = (args.get(1), args.get(2).and_then(|n| n.parse::<u64>().ok()))
    else {
        eprintln!("usage: synthetic_repo DIR BLOBS");
        std::process::exit(2);
    };
    // Small packs, so that index files hold tens of thousands of blobs, as those of a real
    // repository (16 MiB packs of 1 MiB chunks) hold thousands, not millions.
    let options = InitOptions {
        compression: CompressionMode::Off,
        pack_size: 1 << 20,
        ..InitOptions::default()
    };
    let repo = Repository::init(Arc::new(LocalBackend::new(dir)), options)
        .unwrap_or_else(|e| panic!("{dir}: {e}"));
    let kept = blobs * 7 / 10;
    for (host, range) in [("keep", 0..kept), ("drop", kept..blobs)] {
        let sink = BlobSink::new(&repo, Index::new(), false);
        let root = snapshot_tree(&sink, range);
        sink.flush().unwrap();
        let snapshot = Snapshot {
            time: 1,
            tree: root,
            host: host.into(),
            paths: vec![b"/synthetic".to_vec()],
            ..Snapshot::default()
        };
        let id = repo.save_snapshot(&snapshot).unwrap();
        println!("{host} {id}");
    }
}

/// Stores the blobs numbered `range` in files and directories; returns the root tree.
fn snapshot_tree(sink: &BlobSink<'_>, range: std::ops::Range<u64>) -> Id {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    let mut chunks = Vec::new();
    let store = |kind: BlobKind, bytes: &[u8]| sink.store(kind, bytes).unwrap();
    let file_node = |name: String, chunks: Vec<Id>| Node {
        name: name.into_bytes(),
        kind: NodeKind::File,
        mode: 0o644,
        size: chunks.len() as u64 * 32,
        nlink: 1,
        content: Content::Chunks(chunks),
        ..Node::default()
    };
    for n in range {
        let mut plaintext = [0u8; 32];
        plaintext[..8].copy_from_slice(&n.to_le_bytes());
        chunks.push(store(BlobKind::Data, &plaintext));
        if chunks.len() as u64 == CHUNKS_PER_FILE {
            files.push(file_node(format!("f{n:012}"), std::mem::take(&mut chunks)));
        }
        if files.len() as u64 == FILES_PER_DIR {
            let tree = store(
                BlobKind::Tree,
                &Tree { nodes: std::mem::take(&mut files), ..Tree::default() }.encode(),
            );
            dirs.push(dir_node(format!("d{n:012}"), tree));
        }
    }
    if !chunks.is_empty() {
        files.push(file_node("z-last".into(), chunks));
    }
    if !files.is_empty() {
        let tree = store(BlobKind::Tree, &Tree { nodes: files, ..Tree::default() }.encode());
        dirs.push(dir_node("z-last".into(), tree));
    }
    dirs.sort_by(|a, b| a.name.cmp(&b.name));
    store(BlobKind::Tree, &Tree { nodes: dirs, ..Tree::default() }.encode())
}

fn dir_node(name: String, tree: Id) -> Node {
    Node {
        name: name.into_bytes(),
        kind: NodeKind::Dir,
        mode: 0o755,
        nlink: 2,
        content: Content::Subtree(tree),
        ..Node::default()
    }
}
