//! `dedup store key list|add|remove|passwd`.

use anyhow::Result;
use dedup_store::format::KdfParams;
use dedup_store::key_cache::KeyCache;
use dedup_store::repo::Repository;

use super::args::{CommonArgs, KeyAction, KeyArgs};
use super::password::new_password;
use super::show_time;

/// Run `dedup store key`.
pub fn run(common: &CommonArgs, args: KeyArgs) -> Result<bool> {
    let mut repo = super::open(common)?;
    let label = format!("{}@{}", super::username(), super::hostname());
    match args.action {
        KeyAction::List => {
            for slot in repo.key_slots()? {
                let mark = if slot.current { "*" } else { " " };
                // A label is read before anything authenticates it: shown escaped, so that a
                // planted key file cannot write control sequences to the terminal.
                let label = slot.label.escape_debug();
                match &slot.damaged {
                    None if slot.passwordless && repo.encrypted() => println!(
                        "{mark}{}  {}  {label}  (no password: never used here; remove it)",
                        slot.id.short(8),
                        show_time(slot.created),
                    ),
                    None => {
                        println!("{mark}{}  {}  {label}", slot.id.short(8), show_time(slot.created))
                    }
                    Some(why) => println!("{mark}{}  {}", slot.id.short(8), why.escape_debug()),
                }
            }
        }
        KeyAction::Add(a) => {
            let password = new_password(None, Some(&a))?;
            let id = repo.add_key(&password, KdfParams::default(), label)?;
            println!("added key {}", id.short(8));
        }
        KeyAction::Remove { id } => {
            let id = repo.remove_key(&id)?;
            forget_cached_key(&repo);
            println!("removed key {}", id.short(8));
        }
        KeyAction::Passwd(a) => {
            let password = new_password(None, Some(&a))?;
            let id = repo.change_password(&password, KdfParams::default(), label)?;
            forget_cached_key(&repo);
            println!("password changed; the key is now {}", id.short(8));
        }
    }
    Ok(true)
}

/// Removes this client's cached key of the repository, so that the old password (or a removed
/// slot) opens nothing here any more; the next open keeps the key anew.
fn forget_cached_key(repo: &Repository) {
    // Whatever --no-key-cache says: a key cached by an earlier run must not outlive its slot.
    let Some(cache) = KeyCache::default_dir().map(KeyCache::new) else { return };
    if let Err(err) = cache.forget(&repo.backend().location()) {
        eprintln!("dedup: warning: key cache: {err}");
    }
}
