//! The duplicate finder: from a walked tree to groups of byte-identical files, through stages
//! that each cost more I/O than the last and so see fewer files: size, then identity (hard links
//! are one file), then head/tail samples, then a full byte-for-byte comparison that reads every
//! remaining candidate once, into a [`dedup_report::Report`].
//!
//! Its rooms: [`stages`] (size, samples, exact comparison), [`cache`] (the persistent content
//! cache in a scan), [`analysis`] (questions answered after the groups: identical directories,
//! copies per file, where the duplicated bytes are), and at the top the pipeline that runs them
//! ([`pipeline`]), the walked tree ([`tree`]), the selection, the tuning and the report's order.

mod analysis;
#[cfg(feature = "clap")]
pub mod args;
mod cache;
mod closing_lines;
mod group_order;
mod phases;
mod pipeline;
mod selection;
mod stages;
#[cfg(test)]
mod testtree;
mod tree;
mod tuning;
mod tuning_env;
mod verbose_lines;

/// Fewer items of computing work than this (groups to build or sort, cache entries to order)
/// are done on the calling thread: on a small tree, starting rayon's pool, a thread per core
/// that spins looking for work beside the caller, costs more than the work.
const PARALLEL_FROM: usize = 512;

pub use analysis::replication::Replication;
pub use analysis::Analysis;
pub use cache::{CacheOptions, CacheUse};
pub use phases::PHASES;
pub use pipeline::{find, find_run, FindOptions, Funnel, Run};
pub use selection::Selection;
pub use stages::whole_read::WholeRead;
pub use tuning::{PhysicalOrder, Tuning};
pub use verbose_lines::verbose_lines;
