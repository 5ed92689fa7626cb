//! The sizes the content stages share, chosen by measurement (docs/benchmarks/find.md): what the
//! sample stage samples and the first chunk of the full comparison, which the cache's
//! fingerprints, the whole-read switch and the digests are sized by too.

/// First chunk of the full comparison; chunks then double while a class stays equal (up to
/// the exact stage's largest chunk).
pub(crate) const FIRST_CHUNK: u64 = 1 << 20;

/// Sizes of the sample stage, chosen by measurement (docs/benchmarks/find.md); settable for
/// benchmarks only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Files up to this size skip sampling and are read whole, in one request.
    pub whole_read_max: u64,
    /// Bytes read at each end of a sampled file.
    pub sample_len: u64,
    /// Raise `whole_read_max` on devices measured to answer slowly (the whole-read switch).
    pub measure_whole_read: bool,
    /// Read around the page cache on devices measured to answer slowly (`dedup_scan::read::direct`).
    pub direct_reads: bool,
    /// Where candidates are read in the order of the disk (`crate::stages::physical`).
    pub physical_order: PhysicalOrder,
}

/// On which devices the content stages read their candidates in the order of the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PhysicalOrder {
    /// On devices that say they rotate and whose first reads were measured slow: the default.
    #[default]
    Measured,
    /// On every device (for benchmarks and tests).
    Always,
    /// On none.
    Never,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            whole_read_max: 64 * 1024,
            sample_len: 4096,
            measure_whole_read: true,
            direct_reads: true,
            physical_order: PhysicalOrder::Measured,
        }
    }
}

impl Tuning {
    /// A sample must fit twice into the smallest sampled file.
    pub(crate) fn sample_len(&self) -> u64 {
        self.sample_len.clamp(1, (self.whole_read_max / 2).max(1))
    }

    /// True when the members of a class of `size` are sampled before any full read.
    pub(crate) fn samples(&self, size: u64) -> bool {
        size > self.whole_read_max.max(2)
    }
}
