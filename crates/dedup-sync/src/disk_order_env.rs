//! `DEDUP_PHYSICAL_ORDER=1` or `0`, for benchmarks: file contents are copied in the order of the
//! source's disk always, or never (by default: where the source device rotates and measures
//! slow), as the finder reads its candidates.

use dedup_core::env_setting::{switch, SettingError};

use crate::DiskOrder;

impl DiskOrder {
    /// The order the environment asks for; measured without it.
    pub fn from_env() -> Result<DiskOrder, SettingError> {
        Ok(match switch("DEDUP_PHYSICAL_ORDER")? {
            Some(true) => DiskOrder::Always,
            Some(false) => DiskOrder::Never,
            None => DiskOrder::Measured,
        })
    }
}
