//! What the library's integration tests share: a small, fast repository and reproducible data.

use std::path::Path;
use std::sync::Arc;

use dedup_store::backend::LocalBackend;
use dedup_store::format::{ChunkerParams, KdfParams};
use dedup_store::repo::{InitOptions, Repository};

/// A new repository in `dir` with small chunks and packs and a key derivation cheap enough for
/// tests; encrypted unless asked otherwise.
pub fn small_repo(dir: &Path, encrypted: bool) -> Repository {
    let options = InitOptions {
        password: encrypted.then(|| b"pw".to_vec()),
        chunker: ChunkerParams::FastCdc { min: 1024, avg: 4096, max: 16384 },
        pack_size: 1 << 20,
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    Repository::init(Arc::new(LocalBackend::new(dir)), options).unwrap()
}

/// `len` bytes that do not compress, the same for the same `seed`.
pub fn noise(len: usize, seed: u8) -> Vec<u8> {
    let mut out = vec![0u8; len];
    blake3::Hasher::new_keyed(&[seed; 32]).finalize_xof().fill(&mut out);
    out
}
