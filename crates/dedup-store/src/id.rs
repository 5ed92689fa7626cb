//! 32-byte identifiers: of blobs (keyed BLAKE3 of the plaintext) and of files (BLAKE3 of the
//! bytes as stored). The type lives with the backends, which name objects by it.

pub use dedup_backend::Id;
