//! Sizes as users write them (`64K`, `1.5M`): dedup-core parses them for every job.

pub use dedup_core::size::parse_size;
