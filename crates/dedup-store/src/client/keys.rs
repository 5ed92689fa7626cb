//! `dedup store key`'s work on an open repository: its key slots listed as lines to show, a
//! slot added, removed, or put in place of the one in use, and this client's cached key of the
//! repository forgotten when its slot goes.

use super::key_cache::KeyCache;
use super::warning::Warning;
use crate::error::Result;
use crate::format::KdfParams;
use crate::repo::Repository;
use crate::text::show_time;

/// One line per key slot: `*` marks the one in use.
pub fn list(repo: &Repository) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for slot in repo.key_slots()? {
        let mark = if slot.current { "*" } else { " " };
        let (id, created) = (slot.id.short(8), show_time(slot.created));
        // A label is read before anything authenticates it: shown escaped, so that a planted
        // key file cannot write control sequences to the terminal.
        let label = slot.label.escape_debug();
        lines.push(match &slot.damaged {
            None if slot.passwordless && repo.encrypted() => {
                format!("{mark}{id}  {created}  {label}  (no password: never used here; remove it)")
            }
            None => format!("{mark}{id}  {created}  {label}"),
            Some(why) => format!("{mark}{id}  {}", why.escape_debug()),
        });
    }
    Ok(lines)
}

/// Adds a slot opened by `password`; returns the line to show.
pub fn add(repo: &Repository, password: &[u8], label: String) -> Result<String> {
    let id = repo.add_key(password, KdfParams::default(), label)?;
    Ok(format!("added key {}", id.short(8)))
}

/// Removes the slot whose id starts with `prefix`; returns the line to show.
pub fn remove(repo: &Repository, prefix: &str, warn: &dyn Fn(Warning)) -> Result<String> {
    let id = repo.remove_key(prefix)?;
    forget_cached_key(repo, warn);
    Ok(format!("removed key {}", id.short(8)))
}

/// Puts a slot opened by `password` in place of the one in use; returns the line to show.
pub fn change_password(
    repo: &mut Repository,
    password: &[u8],
    label: String,
    warn: &dyn Fn(Warning),
) -> Result<String> {
    let id = repo.change_password(password, KdfParams::default(), label)?;
    forget_cached_key(repo, warn);
    Ok(format!("password changed; the key is now {}", id.short(8)))
}

/// Removes this client's cached key of the repository, so that the old password (or a removed
/// slot) opens nothing here any more; the next open keeps the key anew.
fn forget_cached_key(repo: &Repository, warn: &dyn Fn(Warning)) {
    // Whatever --no-key-cache says: a key cached by an earlier run must not outlive its slot.
    let Some(cache) = KeyCache::default_dir().map(KeyCache::new) else { return };
    if let Err(err) = cache.forget(&repo.backend().location()) {
        warn(Warning::KeyCache(err.to_string()));
    }
}
