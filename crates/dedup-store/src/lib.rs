//! The chunk-deduplicated, encrypted snapshot store behind `dedup store`.
//!
//! The front door is [`repo::Repository`] (backend, keys, the index loaded on first use), and
//! the commands are in [`commands`], one file each, returning data for the binary to show. The
//! rest are building blocks: the format's codecs (`format`), secrets (`crypto`), the keyed
//! chunker, blobs and packs, the in-memory index, backup, restore, check, forget's policy,
//! prune and repair. Where files are kept is the `dedup-backend` crate, re-exported as
//! [`backend`]. Libraries never print: results and problems are returned.

#[cfg(feature = "clap")]
pub mod args;
pub mod backup;
pub mod blob;
mod check;
pub mod chunker;
pub mod client;
pub mod commands;
// Building blocks the examples and tests reach; not part of the store's surface.
#[doc(hidden)]
pub mod compress;
pub mod crypto;
mod deep_stack;
pub mod error;
pub mod file_reader;
pub mod forget;
pub mod format;
pub mod id;
#[doc(hidden)]
pub mod index;
pub mod live_index;
#[doc(hidden)]
pub mod pack;
pub mod prune;
mod repair;
pub mod repo;
pub mod restore;
pub mod text;
pub mod tree_walk;
pub mod volume_lock;

/// Where the repository's files are kept (the `dedup-backend` crate).
pub use dedup_backend as backend;
/// This machine, as writers record it.
pub use dedup_backend::host;
pub use error::Error;
pub use id::Id;
