//! The sample stage's sizes from the environment, for benchmarks that measure which defaults are
//! best (bench/, docs/benchmarks/find.md). Users never need them: the defaults are the measured
//! choice.
//!
//! `DEDUP_WHOLE_READ_MAX=SIZE`: files up to SIZE are read whole instead of sampled, on every
//! device (no measured switch to larger whole reads on slow devices).
//! `DEDUP_SAMPLE_LEN=SIZE`: bytes read at each end of a sampled file.
//! `DEDUP_DIRECT_READS=0`: devices measured slow read through the page cache like the others.
//! `DEDUP_PHYSICAL_ORDER=1` or `0`: candidates are read in the order of the disk on every device,
//! or on none (by default: on devices that say they rotate and measure slow).

use dedup_core::env_setting::{size, switch, SettingError};

use crate::{PhysicalOrder, Tuning};

impl Tuning {
    /// The tuning in force: the defaults, overridden by the environment variables above.
    pub fn from_env() -> Result<Tuning, SettingError> {
        let mut tuning = Tuning::default();
        if let Some(v) = size("DEDUP_WHOLE_READ_MAX")? {
            tuning.whole_read_max = v;
            // A benchmark of a fixed size must not have it raised by measurement.
            tuning.measure_whole_read = false;
        }
        if let Some(v) = size("DEDUP_SAMPLE_LEN")? {
            tuning.sample_len = v;
        }
        if switch("DEDUP_DIRECT_READS")? == Some(false) {
            tuning.direct_reads = false;
        }
        tuning.physical_order = match switch("DEDUP_PHYSICAL_ORDER")? {
            Some(true) => PhysicalOrder::Always,
            Some(false) => PhysicalOrder::Never,
            None => PhysicalOrder::Measured,
        };
        Ok(tuning)
    }
}
