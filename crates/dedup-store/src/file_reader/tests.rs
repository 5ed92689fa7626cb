//! The file reader on a real repository: reads at any offset and length, chunk by chunk, from
//! several threads at once; a chunk missing, damaged or moved by a prune.

use std::sync::Arc;

use super::*;
use crate::backend::LocalBackend;
use crate::format::{Content, KdfParams, NodeKind};
use crate::index::Index;
use crate::repo::{BlobSink, InitOptions};

fn noise(len: usize, seed: u8) -> Vec<u8> {
    let mut out = vec![0u8; len];
    blake3::Hasher::new_keyed(&[seed; 32]).finalize_xof().fill(&mut out);
    out
}

/// A repository in `dir` holding `pieces` as data chunks in one pack; the repository, its
/// index and the file node made of the pieces in order.
fn stored(dir: &std::path::Path, pieces: &[Vec<u8>]) -> (Arc<Repository>, Index, Node) {
    let options = InitOptions {
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    let repo = Repository::init(Arc::new(LocalBackend::new(dir)), options).unwrap();
    let sink = BlobSink::new(&repo, Index::new(), false);
    let ids: Vec<Id> = pieces.iter().map(|p| sink.store(BlobKind::Data, p).unwrap()).collect();
    let (index, _) = sink.finish().unwrap();
    let size = pieces.iter().map(|p| p.len() as u64).sum();
    let node = Node {
        name: b"file".to_vec(),
        kind: NodeKind::File,
        size,
        content: Content::Chunks(ids),
        ..Node::default()
    };
    (Arc::new(repo), index, node)
}

/// Chunks of several lengths, one of them twice.
fn pieces() -> Vec<Vec<u8>> {
    let (a, b, c) = (noise(70_001, 1), noise(3, 2), noise(250_000, 3));
    vec![a.clone(), b, c, a, noise(1, 4)]
}

fn reader(repo: &Arc<Repository>, index: Index) -> FileReader {
    let live = Arc::new(LiveIndex::new(Arc::new(index)));
    FileReader::new(Arc::clone(repo), live, ReaderOptions::default())
}

#[test]
fn reads_at_any_offset_and_length_give_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let pieces = pieces();
    let whole = pieces.concat();
    let (repo, index, node) = stored(dir.path(), &pieces);
    let file = reader(&repo, index).open(&node).unwrap();
    let len = whole.len() as u64;
    assert_eq!(file.len(), len);
    for (offset, size) in [
        (0, 1),
        (0, whole.len()),
        (1, 70_000),
        (70_000, 5),
        (70_003, 2),
        (69_999, 250_010),
        (len - 1, 1),
        (len - 1, 100),
        (len, 10),
        (len + 1000, 10),
        (5, 0),
    ] {
        let mut buf = vec![0xee; size];
        let n = file.read_at(offset, &mut buf).unwrap();
        let from = (offset as usize).min(whole.len());
        let want = &whole[from..(from + size).min(whole.len())];
        assert_eq!(&buf[..n], want, "{size} bytes at {offset}");
    }
    // A sequential reader in small steps, as the kernel reads.
    let mut back = Vec::new();
    let mut buf = vec![0; 4096];
    loop {
        let n = file.read_at(back.len() as u64, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        back.extend_from_slice(&buf[..n]);
    }
    assert!(back == whole);
}

#[test]
fn chunks_come_in_order_with_their_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let pieces = pieces();
    let (repo, index, node) = stored(dir.path(), &pieces);
    let live = Arc::new(LiveIndex::new(Arc::new(index)));
    let file = FileReader::new(repo, live, ReaderOptions::sequential()).open(&node).unwrap();
    let mut offset = 0;
    let mut count = 0;
    for (chunk, piece) in file.chunks().zip(&pieces) {
        let chunk = chunk.unwrap();
        assert_eq!(chunk.offset, offset);
        assert!(*chunk.bytes == *piece);
        offset += piece.len() as u64;
        count += 1;
    }
    assert_eq!((count, file.chunks().count()), (pieces.len(), pieces.len()));
}

#[test]
fn threads_read_one_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let pieces: Vec<Vec<u8>> = (0..12).map(|n| noise(40_000 + n * 977, n as u8)).collect();
    let whole = pieces.concat();
    let (repo, index, node) = stored(dir.path(), &pieces);
    let options = ReaderOptions { cache_bytes: 100_000, read_ahead_threads: 2 };
    let live = Arc::new(LiveIndex::new(Arc::new(index)));
    let file = FileReader::new(repo, live, options).open(&node).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let (file, whole) = (&file, &whole);
            scope.spawn(move || {
                for step in 0..40u64 {
                    let offset = (t * 104_729 + step * 13_331) % whole.len() as u64;
                    let mut buf = vec![0; 30_000];
                    let n = file.read_at(offset, &mut buf).unwrap();
                    let from = offset as usize;
                    assert!(buf[..n] == whole[from..(from + 30_000).min(whole.len())]);
                }
            });
        }
    });
}

#[test]
fn only_regular_files_open() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, index, _) = stored(dir.path(), &[]);
    let node = Node { name: b"d".to_vec(), kind: NodeKind::Dir, ..Node::default() };
    let err = reader(&repo, index).open(&node).err().expect("a directory opened");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_chunk_the_index_does_not_know_ends_the_content_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let pieces = pieces();
    let (repo, index, mut node) = stored(dir.path(), &pieces);
    let unknown = Id([0x5a; 32]);
    let Content::Chunks(ids) = &mut node.content else { unreachable!() };
    ids.insert(2, unknown);
    let file = reader(&repo, index).open(&node).unwrap();
    let known = (pieces[0].len() + pieces[1].len()) as u64;
    assert_eq!(file.len(), known);
    let mut buf = vec![0; 10];
    assert_eq!(file.read_at(known - 4, &mut buf).unwrap(), 4);
    let err = file.read_at(known, &mut buf).unwrap_err().to_string();
    assert!(err.contains(&unknown.to_string()) && err.contains("not in the index"), "{err}");
    let chunks: Vec<Result<FileChunk>> = file.chunks().collect();
    assert_eq!(chunks.len(), 3);
    assert!(chunks[..2].iter().all(|c| c.is_ok()));
    let err = chunks[2].as_ref().unwrap_err().to_string();
    assert!(err.contains(&unknown.to_string()), "{err}");
}

#[test]
fn a_damaged_chunk_fails_its_reads_until_it_reads_again() {
    let dir = tempfile::tempdir().unwrap();
    let pieces = vec![noise(100_000, 9)];
    let (repo, index, node) = stored(dir.path(), &pieces);
    let pack = index.packs().next().unwrap().0;
    let path = dir.path().join(pack_path(&pack));
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    bad[50_000] ^= 0x55;
    std::fs::write(&path, &bad).unwrap();
    let file = reader(&repo, index).open(&node).unwrap();
    let mut buf = vec![0; 1000];
    let err = file.read_at(0, &mut buf).unwrap_err().to_string();
    assert!(err.contains("data blob") && err.contains("damaged"), "{err}");
    assert!(file.chunks().next().unwrap().is_err());
    // The failure was not kept.
    std::fs::write(&path, &good).unwrap();
    assert_eq!(file.read_at(0, &mut buf).unwrap(), 1000);
    assert!(buf[..] == pieces[0][..1000]);
}

#[test]
fn a_file_reads_on_after_its_chunks_moved_to_another_pack() {
    let dir = tempfile::tempdir().unwrap();
    let pieces = pieces();
    let whole = pieces.concat();
    let (repo, stale, node) = stored(dir.path(), &pieces);
    // What a prune does: the chunks copied into a new pack with a new index file, then the
    // old pack and its index file deleted. (With one more blob: the repository does not
    // encrypt, and the sink places blobs by their keyed id, so the same blobs in any order can
    // make the same pack.)
    let old_files = repo.list_index_files().unwrap();
    let old_pack = stale.packs().next().unwrap().0;
    let sink = BlobSink::new(&repo, Index::new(), false);
    for piece in pieces.iter().rev() {
        sink.store(BlobKind::Data, piece).unwrap();
    }
    sink.store(BlobKind::Data, &noise(1000, 99)).unwrap();
    let (moved, _) = sink.finish().unwrap();
    assert!(!moved.has_pack(&old_pack));
    for file in old_files {
        repo.backend().delete(&format!("index/{file}")).unwrap();
    }
    repo.backend().delete(&pack_path(&old_pack)).unwrap();

    let file = reader(&repo, stale).open(&node).unwrap();
    let mut buf = vec![0; whole.len()];
    assert_eq!(file.read_at(0, &mut buf).unwrap(), whole.len());
    assert!(buf == whole);
    let chunks: Vec<u8> = file.chunks().flat_map(|c| c.unwrap().bytes.to_vec()).collect();
    assert!(chunks == whole);
}
