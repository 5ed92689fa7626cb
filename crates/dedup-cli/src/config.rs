//! The configuration file, `dedup.toml` in `$XDG_CONFIG_HOME/dedup/` (else
//! `~/.config/dedup/`; a file that is missing or cannot be reached is no file), and where the cache settings come from: the command line first, then the
//! file, then the XDG defaults.
//!
//! ```toml
//! [cache]
//! enabled = true                  # as if every find and action had --cache
//! dir = "/srv/dedup-cache"        # instead of $XDG_CACHE_HOME/dedup or ~/.cache/dedup
//! ```

use std::env;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use dedup_find::CacheOptions;
use serde::Deserialize;

use crate::find::args::SelectArgs;
use crate::messages::quote_path;

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

/// The XDG base directory `var` names, else `$HOME/fallback`.
pub fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    match env::var_os(var) {
        // The XDG spec: relative paths are invalid and to be ignored.
        Some(dir) if Path::new(&dir).is_absolute() => Some(PathBuf::from(dir)),
        _ => env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| Path::new(&h).join(fallback)),
    }
}

/// Where `dedup.toml` is looked for.
pub fn config_path() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("dedup").join("dedup.toml"))
}

/// Read `dedup.toml`; a missing file is an empty configuration, a malformed one an error.
pub fn load() -> Result<Config> {
    use std::io::ErrorKind::{NotADirectory, NotFound, PermissionDenied};
    let Some(path) = config_path() else { return Ok(Config::default()) };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            parse(&text).with_context(|| format!("bad configuration file {}", quote_path(&path)))
        }
        // Missing, or out of reach (another user's HOME, as when run through sudo -u): none.
        Err(e) if matches!(e.kind(), NotFound | PermissionDenied | NotADirectory) => {
            Ok(Config::default())
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", quote_path(&path))),
    }
}

fn parse(text: &str) -> Result<Config> {
    Ok(toml::from_str(text)?)
}

/// The cache directory: `--cache-dir`, else the file's, else the XDG default.
pub fn cache_dir(flag: Option<&Path>, config: &Config) -> Result<PathBuf> {
    if let Some(dir) = flag.or(config.cache.dir.as_deref()) {
        return Ok(dir.to_owned());
    }
    xdg_dir("XDG_CACHE_HOME", ".cache")
        .map(|d| d.join("dedup"))
        .context("no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir")
}

/// The cache settings of a scan, or `None` when it runs without the cache.
pub fn cache_options(args: &SelectArgs) -> Result<Option<CacheOptions>> {
    if args.no_cache {
        return Ok(None);
    }
    let config = load()?;
    if !(args.cache || args.cache_dir.is_some() || config.cache.enabled) {
        return Ok(None);
    }
    let dir = cache_dir(args.cache_dir.as_deref(), &config)?;
    Ok(Some(CacheOptions { dir, verify: args.verify }))
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
