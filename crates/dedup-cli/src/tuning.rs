//! Sample-stage sizes from the environment, for benchmarks that measure which defaults are best
//! (bench/, docs/benchmarks/find.md). Users never need them: the defaults are the measured choice.
//!
//! `DEDUP_WHOLE_READ_MAX=SIZE`: files up to SIZE are read whole instead of sampled, on every
//! device (no measured switch to larger whole reads on slow devices).
//! `DEDUP_SAMPLE_LEN=SIZE`: bytes read at each end of a sampled file.
//! `DEDUP_DIRECT_READS=0`: devices measured slow read through the page cache like the others.
//! `DEDUP_PHYSICAL_ORDER=1` or `0`: candidates are read in the order of the disk on every device,
//! or on none (by default: on devices that say they rotate and measure slow); for `dedup sync`,
//! file contents are copied in the order of the source's disk, or never, the same way.

use anyhow::{Context, Result};
use dedup_find::{PhysicalOrder, Tuning};

use crate::size::parse_size;

/// The tuning in force: defaults, overridden by the environment variables above.
pub fn from_env() -> Result<Tuning> {
    let mut tuning = Tuning::default();
    if let Some(v) = read("DEDUP_WHOLE_READ_MAX")? {
        tuning.whole_read_max = v;
        // A benchmark of a fixed size must not have it raised by measurement.
        tuning.measure_whole_read = false;
    }
    if let Some(v) = read("DEDUP_SAMPLE_LEN")? {
        tuning.sample_len = v;
    }
    match std::env::var("DEDUP_DIRECT_READS").as_deref() {
        Ok("0") => tuning.direct_reads = false,
        Ok("1") | Err(_) => {}
        Ok(other) => anyhow::bail!("DEDUP_DIRECT_READS: want 0 or 1, not {other:?}"),
    }
    tuning.physical_order = match std::env::var("DEDUP_PHYSICAL_ORDER").as_deref() {
        Ok("1") => PhysicalOrder::Always,
        Ok("0") => PhysicalOrder::Never,
        Err(_) => PhysicalOrder::Measured,
        Ok(other) => anyhow::bail!("DEDUP_PHYSICAL_ORDER: want 0 or 1, not {other:?}"),
    };
    Ok(tuning)
}

fn read(name: &str) -> Result<Option<u64>> {
    match std::env::var(name) {
        Ok(text) => {
            parse_size(&text).map(Some).map_err(anyhow::Error::msg).context(name.to_owned())
        }
        Err(_) => Ok(None),
    }
}

/// How `dedup sync` orders its copies: `DEDUP_PHYSICAL_ORDER` as for find, measured without it.
pub fn sync_disk_order() -> Result<dedup_sync::DiskOrder> {
    use dedup_sync::DiskOrder;
    Ok(match std::env::var("DEDUP_PHYSICAL_ORDER").as_deref() {
        Ok("1") => DiskOrder::Always,
        Ok("0") => DiskOrder::Never,
        Err(_) => DiskOrder::Measured,
        Ok(other) => anyhow::bail!("DEDUP_PHYSICAL_ORDER: want 0 or 1, not {other:?}"),
    })
}
