//! Where the user's configuration lives (XDG); dedup-cache reads the cache settings from it.

pub use dedup_core::xdg::xdg_dir;
