//! The chunk-deduplicated, encrypted snapshot store behind `dedup store`: the repository format
//! of docs/store-format.md (codecs in `format`), keys and encryption, the keyed chunker, packs,
//! the in-memory index, storage backends, and the operations built on them (init, open, write a
//! snapshot, restore, check). Libraries never print: results and problems are returned.

pub mod backend;
pub mod backup;
pub mod blob;
pub mod check;
pub mod chunker;
pub mod compress;
pub mod crypto;
pub mod error;
pub mod file_reader;
pub mod forget;
pub mod format;
pub mod host;
pub mod id;
pub mod index;
mod kdf_memory;
pub mod keys;
pub mod live_index;
pub mod pack;
pub mod prune;
pub mod repair;
pub mod repo;
pub mod restore;
pub mod secret;
pub mod tree;
pub mod trust;
pub mod volume_lock;

pub use error::Error;
pub use id::Id;
