//! A repository opened with a password: its config, keys and backend, and the operations on its
//! files (keys, index, snapshots, blobs, writing sessions), one module each.

mod blobs;
mod deletions;
mod index_load;
mod init;
mod key_slots;
mod marker;
mod open_pack;
mod pack_slots;
mod sink;
mod snapshots;

use std::sync::Arc;

pub use crate::host::this_host;
pub(crate) use blobs::range_error;
pub use deletions::STALE_AFTER;
pub use index_load::LoadedIndex;
pub use init::InitOptions;
pub use key_slots::{key_slot_errors, needs_password, KeySlot};
pub use marker::{WriterMarker, REFRESH_EVERY};
pub use sink::{BlobSink, SinkStats};
pub use snapshots::SnapshotFilter;

use crate::backend::Backend;
use crate::chunker::Chunker;
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{Config, DecodeError, Header, Magic, HEADER_LEN};
use crate::id::Id;
use crate::keys::{self, Keys, MasterKey};

/// Name of the config file.
pub(crate) const CONFIG: &str = "config";

/// An open repository.
pub struct Repository {
    backend: Arc<dyn Backend>,
    config: Config,
    master: MasterKey,
    keys: Keys,
    sealer: Sealer,
    chunker: Chunker,
    key_id: Id,
}

impl Repository {
    /// Opens the repository in `backend` with `password`, trying every key slot.
    pub fn open(backend: Arc<dyn Backend>, password: &[u8]) -> Result<Repository> {
        let location = backend.location();
        match backend.exists(CONFIG) {
            Ok(true) => {}
            Ok(false) => return Err(Error::NoRepository(location)),
            Err(err) => return Err(Error::io(format!("{location}/{CONFIG}"), err)),
        }
        let mut damaged = Vec::new();
        let mut config_error = None;
        let slots = key_slots::load_slots(backend.as_ref())?;
        if slots.is_empty() {
            return Err(Error::Invalid(format!(
                "{location}/keys: no key file is there, so no password can open the repository"
            )));
        }
        for slot in slots {
            let file = match slot.file {
                Ok(file) => file,
                Err(err) => {
                    damaged.push(err.to_string());
                    continue;
                }
            };
            match keys::unwrap(&file, password) {
                // A slot whose master key does not open the config is not this repository's
                // (a leftover of an init that lost a race); another slot may still open it.
                Ok(master) => {
                    match Repository::with_master(Arc::clone(&backend), master, slot.id) {
                        Ok(repo) => return Ok(repo),
                        Err(err) => config_error = config_error.or(Some(err)),
                    }
                }
                Err(keys::UnwrapError::WrongPassword) => {}
                Err(err) => damaged.push(format!("keys/{}: {err}", slot.id)),
            }
        }
        if let Some(err) = config_error {
            return Err(err);
        }
        if !damaged.is_empty() {
            return Err(Error::Invalid(format!(
                "no key of the repository opens with this password, and some key files are damaged: {}",
                damaged.join("; ")
            )));
        }
        Err(Error::WrongPassword)
    }

    fn with_master(backend: Arc<dyn Backend>, master: MasterKey, key_id: Id) -> Result<Repository> {
        let keys = master.derive();
        let bytes = backend.get(CONFIG).map_err(|e| Error::io(CONFIG, e))?;
        let header = Header::decode(&bytes, Magic::Config).map_err(|e| Error::decode(CONFIG, e))?;
        let sealer = Sealer::new(keys.data, header.encrypted);
        let plain =
            open_sealed(&sealer, &bytes, Magic::Config).map_err(|e| Error::decode(CONFIG, e))?;
        let config = Config::decode(&plain).map_err(|e| Error::decode(CONFIG, e))?;
        let chunker = Chunker::new(config.chunker, &keys.gear);
        Ok(Repository { backend, config, master, keys, sealer, chunker, key_id })
    }

    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The backend, shared (for threads that outlive a borrow).
    pub(crate) fn backend_arc(&self) -> Arc<dyn Backend> {
        Arc::clone(&self.backend)
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The working keys.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The sealer of the data key.
    pub fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    /// The chunker of the config.
    pub fn chunker(&self) -> &Chunker {
        &self.chunker
    }

    /// Whether the repository encrypts.
    pub fn encrypted(&self) -> bool {
        self.sealer.encrypted()
    }

    /// The id of the key slot that opened the repository.
    pub fn key_id(&self) -> Id {
        self.key_id
    }

    /// Reads a content-named file and checks that its bytes hash to its name.
    pub fn read_named(&self, name: &str, id: &Id) -> Result<Vec<u8>> {
        let bytes = self.backend.get(name).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Missing { object: name.to_string() },
            _ => Error::io(name, e),
        })?;
        if Id::of_file(&bytes) != *id {
            return Err(Error::damaged(name, "content does not match its name (hash)"));
        }
        Ok(bytes)
    }

    /// Writes a header-and-box file of kind `magic` under `folder/<hash>`; returns its id.
    pub(crate) fn write_sealed(&self, folder: &str, magic: Magic, plain: &[u8]) -> Result<Id> {
        let bytes = seal_file(&self.sealer, magic, plain);
        let id = Id::of_file(&bytes);
        let name = format!("{folder}/{id}");
        self.backend.put(&name, &bytes).map_err(|e| Error::io(name, e))?;
        Ok(id)
    }

    /// Reads and opens the header-and-box file `folder/<id>`.
    pub(crate) fn read_sealed(&self, folder: &str, magic: Magic, id: &Id) -> Result<Vec<u8>> {
        let name = format!("{folder}/{id}");
        let bytes = self.read_named(&name, id)?;
        open_sealed(&self.sealer, &bytes, magic).map_err(|e| Error::decode(name, e))
    }
}

/// A header of `magic` followed by the box of `plain`, the header as associated data.
pub(crate) fn seal_file(sealer: &Sealer, magic: Magic, plain: &[u8]) -> Vec<u8> {
    let header = Header { magic, encrypted: sealer.encrypted(), sub_kind: 0 }.encode();
    let mut bytes = header.to_vec();
    sealer.seal_into(&header, plain, &mut bytes);
    bytes
}

/// The payload of a header-and-box file.
pub(crate) fn open_sealed(
    sealer: &Sealer,
    bytes: &[u8],
    magic: Magic,
) -> Result<Vec<u8>, DecodeError> {
    let header = Header::decode(bytes, magic)?;
    if header.encrypted != sealer.encrypted() {
        return Err(DecodeError::Invalid("encryption flag differs from the repository's".into()));
    }
    sealer
        .open(&bytes[..HEADER_LEN], &bytes[HEADER_LEN..])
        .map_err(|e| DecodeError::Invalid(e.to_string()))
}

/// Nanoseconds since the epoch, now.
pub fn now_ns() -> i64 {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_nanos()).unwrap_or(i64::MAX)
}
