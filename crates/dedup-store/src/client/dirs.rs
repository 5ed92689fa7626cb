//! Where a client keeps its files: the XDG base directories, with their `$HOME` fallbacks.

use std::path::{Path, PathBuf};

/// The XDG base directory `var` names (an absolute path only: the XDG specification says a
/// relative one is to be ignored), else `$HOME/fallback`; None without a home.
pub fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(dir) if Path::new(&dir).is_absolute() => Some(PathBuf::from(dir)),
        _ => std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| Path::new(&home).join(fallback)),
    }
}
