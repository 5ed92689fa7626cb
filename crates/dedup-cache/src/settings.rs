//! Where the cache is and whether a scan uses it: the command line first, then the
//! configuration file, then the XDG defaults. The file is `dedup.toml` in
//! `$XDG_CONFIG_HOME/dedup/` (else `~/.config/dedup/`; a file that is missing or cannot be
//! reached is no file):
//!
//! ```toml
//! [cache]
//! enabled = true                  # as if every find and action had --cache
//! dir = "/srv/dedup-cache"        # instead of $XDG_CACHE_HOME/dedup or ~/.cache/dedup
//! ```

use std::io;
use std::path::{Path, PathBuf};

use dedup_core::text::quote_path;
use dedup_core::xdg::xdg_dir;
use serde::Deserialize;

/// The settings `dedup.toml` may hold.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[cache]`.
    #[serde(default)]
    pub cache: CacheConfig,
}

/// `[cache]` in `dedup.toml`.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Use the cache without `--cache`.
    #[serde(default)]
    pub enabled: bool,
    /// The cache directory.
    pub dir: Option<PathBuf>,
}

/// What the command line says about the cache.
#[derive(Debug, Default, Clone)]
pub struct CacheFlags {
    /// `--cache`.
    pub cache: bool,
    /// `--no-cache`: off, whatever the file says.
    pub no_cache: bool,
    /// `--cache-dir DIR`.
    pub dir: Option<PathBuf>,
}

/// The settings could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// `dedup.toml` is not what it may hold.
    #[error("bad configuration file {}", quote_path(.0))]
    Bad(PathBuf, #[source] toml::de::Error),
    /// `dedup.toml` exists but cannot be read.
    #[error("cannot read {}", quote_path(.0))]
    Read(PathBuf, #[source] io::Error),
    /// Nowhere to put the cache.
    #[error("no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir")]
    NoDir,
}

/// Where `dedup.toml` is looked for.
pub fn config_path() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("dedup").join("dedup.toml"))
}

/// Read `dedup.toml`; a missing file is an empty configuration, a malformed one an error.
pub fn load() -> Result<Config, SettingsError> {
    use std::io::ErrorKind::{NotADirectory, NotFound, PermissionDenied};
    let Some(path) = config_path() else { return Ok(Config::default()) };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text).map_err(|e| SettingsError::Bad(path, e)),
        // Missing, or out of reach (another user's HOME, as when run through sudo -u): none.
        Err(e) if matches!(e.kind(), NotFound | PermissionDenied | NotADirectory) => {
            Ok(Config::default())
        }
        Err(e) => Err(SettingsError::Read(path, e)),
    }
}

fn parse(text: &str) -> Result<Config, toml::de::Error> {
    toml::from_str(text)
}

/// The cache directory: `--cache-dir`, else the file's, else the XDG default.
pub fn cache_dir(flag: Option<&Path>, config: &Config) -> Result<PathBuf, SettingsError> {
    if let Some(dir) = flag.or(config.cache.dir.as_deref()) {
        return Ok(dir.to_owned());
    }
    xdg_dir("XDG_CACHE_HOME", ".cache").map(|d| d.join("dedup")).ok_or(SettingsError::NoDir)
}

/// The cache directory a scan uses, or `None` when it runs without the cache.
pub fn scan_cache_dir(flags: &CacheFlags) -> Result<Option<PathBuf>, SettingsError> {
    if flags.no_cache {
        return Ok(None);
    }
    let config = load()?;
    if !(flags.cache || flags.dir.is_some() || config.cache.enabled) {
        return Ok(None);
    }
    cache_dir(flags.dir.as_deref(), &config).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_settings_and_refuses_unknown_ones() {
        let c = parse("[cache]\nenabled = true\ndir = \"/x/y\"\n").unwrap();
        assert_eq!(c.cache, CacheConfig { enabled: true, dir: Some("/x/y".into()) });
        assert_eq!(parse("").unwrap(), Config::default());
        assert!(parse("[cache]\nenable = true\n").is_err());
        assert!(parse("[cache]\nenabled = \"yes\"\n").is_err());
    }

    #[test]
    fn the_flag_wins_over_the_file() {
        let c = parse("[cache]\ndir = \"/from/file\"\n").unwrap();
        assert_eq!(cache_dir(Some(Path::new("/flag")), &c).unwrap(), Path::new("/flag"));
        assert_eq!(cache_dir(None, &c).unwrap(), Path::new("/from/file"));
    }
}
