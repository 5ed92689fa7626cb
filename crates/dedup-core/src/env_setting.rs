//! Settings read from the environment, for benchmarks that measure which defaults are best
//! (`DEDUP_WHOLE_READ_MAX=64K`, `DEDUP_PHYSICAL_ORDER=1`): users never need them. A variable that
//! is unset (or not UTF-8) leaves the default; one set to nonsense is refused, named.

use crate::size::parse_size;

/// A variable set to a value it cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// Not `0` or `1`.
    #[error("{name}: want 0 or 1, not {value:?}")]
    NotSwitch {
        /// The variable.
        name: &'static str,
        /// What it holds.
        value: String,
    },
    /// Not a size.
    #[error("{name}: {reason}")]
    NotSize {
        /// The variable.
        name: &'static str,
        /// Why the size cannot be read.
        reason: String,
    },
}

/// The switch `name`: `Some(true)` for `1`, `Some(false)` for `0`, `None` when unset.
pub fn switch(name: &'static str) -> Result<Option<bool>, SettingError> {
    switch_of(name, std::env::var(name).ok().as_deref())
}

/// The size `name` holds (`64K`), `None` when unset.
pub fn size(name: &'static str) -> Result<Option<u64>, SettingError> {
    size_of(name, std::env::var(name).ok().as_deref())
}

fn switch_of(name: &'static str, value: Option<&str>) -> Result<Option<bool>, SettingError> {
    match value {
        None => Ok(None),
        Some("1") => Ok(Some(true)),
        Some("0") => Ok(Some(false)),
        Some(other) => Err(SettingError::NotSwitch { name, value: other.to_owned() }),
    }
}

fn size_of(name: &'static str, value: Option<&str>) -> Result<Option<u64>, SettingError> {
    value
        .map(|text| parse_size(text).map_err(|reason| SettingError::NotSize { name, reason }))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_and_sizes_refuse_nonsense_by_name() {
        assert_eq!(switch_of("S", None), Ok(None));
        assert_eq!(switch_of("S", Some("1")), Ok(Some(true)));
        assert_eq!(switch_of("S", Some("0")), Ok(Some(false)));
        let err = switch_of("S", Some("yes")).unwrap_err();
        assert_eq!(err.to_string(), "S: want 0 or 1, not \"yes\"");
        assert_eq!(size_of("Z", Some("64K")), Ok(Some(65536)));
        assert_eq!(size_of("Z", None), Ok(None));
        assert!(size_of("Z", Some("12Q")).unwrap_err().to_string().starts_with("Z: unknown unit"));
    }
}
