//! The read path every job shares: opening a recorded file and checking it is still the one the
//! walk saw, reads governed by the per-device I/O scheduler with failures turned into problems,
//! page-aligned and pooled buffers, direct reads around the page cache for slow devices, and the
//! BLAKE3 digest of a whole file; and reading ahead in an order of the caller's choosing
//! (`ahead`), many files' ranges asked for in one call (`together`).

pub mod ahead;
mod buf;
mod digest;
pub mod direct;
mod pool;
mod reader;
pub mod together;

pub use buf::ReadBuf;
pub use digest::{digest_file, digest_opened, DIGEST_CHUNK};
pub use pool::BufferPool;
pub use reader::Reader;
