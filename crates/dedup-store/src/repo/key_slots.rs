//! Key slots: list them, add one with a new password, remove one, change the password of the
//! slot in use. The config never lists keys, so none of this rewrites it.

use super::{now_ns, Repository};
use crate::backend::Backend;
use crate::crypto::keys;
use crate::error::{Error, Result};
use crate::format::{Kdf, KdfParams, KeyFile};
use crate::id::Id;

/// A key slot as read from `keys/`.
pub(crate) struct LoadedSlot {
    pub id: Id,
    pub file: Result<KeyFile>,
}

/// Reads every key file, each verified against its name.
pub(crate) fn load_slots(backend: &dyn Backend) -> Result<Vec<LoadedSlot>> {
    let listing = backend.list("keys").map_err(|e| Error::io("keys", e))?;
    let mut slots = Vec::new();
    for object in listing {
        let Some(id) = object.name.strip_prefix("keys/").and_then(Id::from_hex) else { continue };
        let file =
            backend.get(&object.name).map_err(|e| Error::io(&object.name, e)).and_then(|bytes| {
                if Id::of_file(&bytes) != id {
                    return Err(Error::damaged(
                        &object.name,
                        "content does not match its name (hash)",
                    ));
                }
                KeyFile::decode(&bytes).map_err(|e| Error::decode(&object.name, e))
            });
        slots.push(LoadedSlot { id, file });
    }
    Ok(slots)
}

/// Whether opening the repository in `backend` takes a password: false when every readable
/// key slot is of an unencrypted repository.
pub fn needs_password(backend: &dyn Backend) -> Result<bool> {
    let slots = load_slots(backend)?;
    Ok(slots.is_empty()
        || slots.iter().any(|slot| !matches!(&slot.file, Ok(file) if file.kdf == Kdf::None)))
}

/// The damaged key files, one message each, and in an encrypted repository every key file that
/// takes no password (never used: anyone who can write to the storage can make one).
pub fn key_slot_errors(repo: &Repository) -> Result<Vec<String>> {
    let encrypted = repo.encrypted();
    Ok(load_slots(repo.backend())?
        .into_iter()
        .filter_map(|slot| match slot.file {
            Err(err) => Some(err.to_string()),
            Ok(file) if encrypted && file.kdf == Kdf::None => Some(format!(
                "keys/{}: takes no password (KDF 0) in an encrypted repository: not written by \
                 dedup (planted?), never used; remove it with `key remove {}`",
                slot.id,
                slot.id.short(8)
            )),
            Ok(_) => None,
        })
        .collect())
}

/// A key slot for `key list`.
#[derive(Debug, Clone)]
pub struct KeySlot {
    /// Its id.
    pub id: Id,
    /// Its label (empty when damaged).
    pub label: String,
    /// Creation time, ns since the epoch (0 when damaged).
    pub created: i64,
    /// Whether it is the one that opened the repository.
    pub current: bool,
    /// Why the key file does not read, when it does not (it can still be removed).
    pub damaged: Option<String>,
    /// Whether it takes no password (KDF 0; in an encrypted repository never used).
    pub passwordless: bool,
}

impl Repository {
    /// Every key slot, damaged ones included (so that `key remove` can remove them), oldest
    /// first.
    pub fn key_slots(&self) -> Result<Vec<KeySlot>> {
        let mut out = Vec::new();
        for slot in load_slots(self.backend())? {
            let current = slot.id == self.key_id;
            out.push(match slot.file {
                Ok(file) => KeySlot {
                    id: slot.id,
                    label: file.label,
                    created: file.created,
                    current,
                    damaged: None,
                    passwordless: file.kdf == Kdf::None,
                },
                Err(err) => KeySlot {
                    id: slot.id,
                    label: String::new(),
                    created: 0,
                    current,
                    damaged: Some(err.to_string()),
                    passwordless: false,
                },
            });
        }
        out.sort_by_key(|slot| slot.created);
        Ok(out)
    }

    /// Adds a slot opened by `password`; returns its id.
    pub fn add_key(&self, password: &[u8], params: KdfParams, label: String) -> Result<Id> {
        if !self.encrypted() {
            return Err(Error::Invalid("an unencrypted repository has no passwords to add".into()));
        }
        let file = keys::wrap(&self.master, Kdf::Argon2id, params, password, label, now_ns())
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let bytes = file.encode();
        let id = Id::of_file(&bytes);
        let name = format!("keys/{id}");
        self.backend().put(&name, &bytes).map_err(|e| Error::io(name, e))?;
        Ok(id)
    }

    /// Removes the slot whose id starts with `prefix`; never the one in use (so never the last).
    pub fn remove_key(&self, prefix: &str) -> Result<Id> {
        let matches: Vec<Id> = self
            .key_slots()?
            .into_iter()
            .map(|slot| slot.id)
            .filter(|id| id.to_hex().starts_with(&prefix.to_ascii_lowercase()))
            .collect();
        let id = match matches.as_slice() {
            [id] => *id,
            [] => return Err(Error::Invalid(format!("no key {prefix}"))),
            _ => {
                return Err(Error::Invalid(format!("key {prefix} is ambiguous: give more digits")))
            }
        };
        if id == self.key_id {
            return Err(Error::Invalid(format!(
                "key {} is the one in use: open the repository with another key to remove it",
                id.short(8)
            )));
        }
        let name = format!("keys/{id}");
        self.backend().delete(&name).map_err(|e| Error::io(name, e))?;
        Ok(id)
    }

    /// Replaces the slot in use with one opened by `password`: the new slot is written first.
    pub fn change_password(
        &mut self,
        password: &[u8],
        params: KdfParams,
        label: String,
    ) -> Result<Id> {
        let new = self.add_key(password, params, label)?;
        let old = std::mem::replace(&mut self.key_id, new);
        let name = format!("keys/{old}");
        self.backend().delete(&name).map_err(|e| Error::io(name, e))?;
        Ok(new)
    }
}
