//! Where the XDG base directory specification puts a user's files: the configuration
//! (`$XDG_CONFIG_HOME`) that the cache settings and the store's profiles read, and the cache
//! (`$XDG_CACHE_HOME`).

use std::env;
use std::path::{Path, PathBuf};

/// The XDG base directory `var` names, else `$HOME/fallback`.
pub fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    match env::var_os(var) {
        // The XDG spec: relative paths are invalid and to be ignored.
        Some(dir) if Path::new(&dir).is_absolute() => Some(PathBuf::from(dir)),
        _ => env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| Path::new(&h).join(fallback)),
    }
}
