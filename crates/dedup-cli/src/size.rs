//! Sizes as users write them (`64K`, `1.5M`): dedup-core's words, which profiles and `init`
//! in the store library read too.

pub use dedup_core::size::parse_size;
