//! The stages a size class passes through, each costing more I/O than the last and so seeing
//! fewer files: size and identity ([`candidates`]: hard links are one file), head and tail
//! samples ([`sample`], or a whole read where the device answers slowly: [`whole_read`]), then
//! the byte-for-byte comparison that reads every remaining candidate once ([`exact`]). What
//! they share: the read path with its problems ([`reading`]) and hash-keyed buckets ([`keyed`]).

pub(crate) mod candidates;
pub(crate) mod exact;
pub(crate) mod keyed;
pub(crate) mod physical;
pub(crate) mod reading;
pub(crate) mod sample;
pub(crate) mod whole_read;
