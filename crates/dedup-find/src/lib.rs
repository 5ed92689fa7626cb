//! The duplicate finder: from a walked tree to groups of byte-identical files, through stages
//! that each cost more I/O than the last and so see fewer files: size, then identity (hard links
//! are one file), then head/tail samples, then a full byte-for-byte comparison that reads every
//! remaining candidate once, into a [`dedup_report::Report`].

mod analysis;
mod cached;
mod candidates;
mod contained;
mod content;
mod dir_summary;
mod dirs;
mod exact;
mod extras;
mod fingerprint;
mod group_order;
mod keyed;
mod nodes;
mod phases;
mod pipeline;
mod reading;
mod replication;
mod sample;
mod selection;
#[cfg(test)]
mod testtree;
mod tree;
mod tuning;
mod whole_read;

/// Fewer items of computing work than this (groups to build or sort, cache entries to order)
/// are done on the calling thread: on a small tree, starting rayon's pool, a thread per core
/// that spins looking for work beside the caller, costs more than the work.
const PARALLEL_FROM: usize = 512;

pub use analysis::Analysis;
pub use cached::{CacheOptions, CacheUse};
pub use phases::PHASES;
pub use pipeline::{find, find_run, FindOptions, Funnel, Run};
pub use replication::Replication;
pub use selection::Selection;
pub use tuning::Tuning;
pub use whole_read::WholeRead;
