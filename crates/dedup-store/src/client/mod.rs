//! The store's client: what a client remembers and decides before and while it opens a
//! repository. Its profiles (`profile`), the sources of a password (`password`), what it
//! remembers of each location (`trust`) and its cache of keys (`key_cache`); the one entry
//! point that opens a repository it can vouch for (`open`), and the commands that make a
//! repository or change its keys (`init`, `keys`). Nothing here prompts or prints: the caller
//! supplies the prompt and is told each [`Warning`].

pub mod init;
pub mod key_cache;
pub mod keys;
pub mod open;
pub mod password;
pub mod profile;
pub mod trust;
pub mod user_name;
mod warning;

pub use open::{open, OpenError, OpenRequest, Reach};
pub use warning::Warning;
