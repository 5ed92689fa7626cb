//! Everything secret in the store: the sealed box every file and blob is kept in
//! (`sealed_box.rs`), the master key, its key slots and the keys derived from it (`keys.rs`), the
//! memory the password KDF may take (`kdf_memory.rs`), and secrets zeroed when dropped
//! (`secret.rs`).

pub(crate) mod kdf_memory;
pub mod keys;
mod sealed_box;
pub mod secret;

pub use sealed_box::*;
