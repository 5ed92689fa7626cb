//! What stands at a repository location before it is opened: a repository, the key files of one
//! that lost its config, or nothing, so that opening says which.

use crate::backend::Backend;

/// What a location holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// A config file: a repository.
    Repository,
    /// No config, but this many key files: a repository that lost its config.
    KeysWithoutConfig(usize),
    /// Neither.
    Nothing,
}

/// What `backend` holds.
pub fn presence(backend: &dyn Backend) -> std::io::Result<Presence> {
    if backend.exists(super::CONFIG)? {
        return Ok(Presence::Repository);
    }
    let keys = backend.list("keys").map(|l| l.len()).unwrap_or(0);
    Ok(if keys > 0 { Presence::KeysWithoutConfig(keys) } else { Presence::Nothing })
}
