//! The values of a profile that are checked as they are read, so that a bad one is named with
//! its line: paths (absolute or `~/…`), repository locations, sizes and durations.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

/// A path a profile names: absolute, or `~/…` under $HOME. A relative path is refused, since
/// a profile is read from whatever directory the command runs in (cron's is `/`).
#[derive(Debug, Clone)]
pub struct AbsolutePath(pub PathBuf);

impl<'de> Deserialize<'de> for AbsolutePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        absolute(&text).map(AbsolutePath).map_err(serde::de::Error::custom)
    }
}

/// A repository location: `s3:…` and `sftp:…` as written, a directory as [`AbsolutePath`].
#[derive(Debug, Clone)]
pub struct Location(pub PathBuf);

impl<'de> Deserialize<'de> for Location {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.starts_with("s3:") || text.starts_with("sftp:") {
            return Ok(Location(PathBuf::from(text)));
        }
        absolute(&text).map(Location).map_err(serde::de::Error::custom)
    }
}

/// A size: a number of bytes, or text as `--exclude-larger-than` takes it.
#[derive(Debug, Clone, Copy)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Bytes(u64),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Bytes(bytes) => Ok(Size(bytes)),
            Written::Text(text) => {
                dedup_core::size::parse_size(&text).map(Size).map_err(serde::de::Error::custom)
            }
        }
    }
}

/// A duration as `--keep-within` takes it.
#[derive(Debug, Clone)]
pub struct Duration(pub String);

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        match crate::text::parse_keep_within(&text) {
            Ok(_) => Ok(Duration(text)),
            Err(e) => Err(serde::de::Error::custom(format!("--keep-within {text}: {e}"))),
        }
    }
}

fn absolute(text: &str) -> Result<PathBuf, String> {
    if let Some(rest) = text.strip_prefix("~/").or((text == "~").then_some("")) {
        return match std::env::var_os("HOME").filter(|home| Path::new(home).is_absolute()) {
            // Through components, so that `~/` is $HOME as `backup ~` records it, not `$HOME/`.
            Some(home) => Ok(Path::new(&home).join(rest).components().collect()),
            None => Err(format!("{text:?}: HOME is not set to an absolute path")),
        };
    }
    if Path::new(text).is_absolute() {
        Ok(PathBuf::from(text))
    } else {
        Err(format!(
            "{text:?} is a relative path: give it absolute (or as ~/…), since a profile is read \
             from any working directory"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tilde_is_home_without_a_trailing_slash() {
        let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_absolute()) else {
            return;
        };
        let home: PathBuf = Path::new(&home).components().collect();
        assert_eq!(absolute("~/").unwrap(), home);
        assert_eq!(absolute("~").unwrap(), home);
        assert_eq!(absolute("~/docs/").unwrap(), home.join("docs"));
    }
}
