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
mod presence;
mod prune_race;
mod sink;
mod snapshots;
mod unlock;

use std::sync::{Arc, RwLock};

pub use crate::host::this_host;
pub(crate) use blobs::range_error;
pub use deletions::STALE_AFTER;
pub use index_load::LoadedIndex;
pub use init::InitOptions;
pub use key_slots::{key_slot_errors, needs_password, KeySlot};
pub use marker::{WriterMarker, REFRESH_EVERY};
pub use presence::{presence, Presence};
pub use sink::{BlobSink, FullPack, SinkStats};
pub(crate) use snapshots::snapshot_path;
pub use snapshots::SnapshotFilter;
pub use unlock::{slot_census, KeySlots, OpenNote, OpenOptions, Opened, SlotCensus};

use crate::backend::Backend;
use crate::chunker::Chunker;
use crate::crypto::keys::{Keys, MasterKey};
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{Config, DecodeError, Header, Magic, HEADER_LEN};
use crate::id::Id;
use crate::index::Index;

/// Name of the config file.
pub(crate) const CONFIG: &str = "config";

/// An open repository: the front door of the store. It owns the backend, the keys and the
/// index, which is read the first time a command needs it ([`Repository::index`]); writers and
/// prune, which need the index less some packs or read again, load theirs explicitly
/// (`index_load.rs`).
pub struct Repository {
    backend: Arc<dyn Backend>,
    config: Config,
    master: MasterKey,
    keys: Keys,
    sealer: Sealer,
    chunker: Chunker,
    key_id: Id,
    index: RwLock<Option<Arc<Index>>>,
}

impl Repository {
    /// The repository whose config file holds `config_bytes`, opened with `master`, the key of
    /// slot `key_id`; `with_password` says whether that slot takes a password (a slot that
    /// takes none opens only a config whose header says unencrypted).
    fn from_config(
        backend: Arc<dyn Backend>,
        config_bytes: &[u8],
        master: MasterKey,
        key_id: Id,
        with_password: bool,
    ) -> Result<Repository> {
        let keys = master.derive();
        let header =
            Header::decode(config_bytes, Magic::Config).map_err(|e| Error::decode(CONFIG, e))?;
        if header.encrypted && !with_password {
            return Err(Error::damaged(
                CONFIG,
                format!("encrypted, but keys/{key_id} takes no password: refused"),
            ));
        }
        let sealer = Sealer::from_secret(&keys.data, header.encrypted);
        let plain = open_sealed(&sealer, config_bytes, Magic::Config)
            .map_err(|e| Error::decode(CONFIG, e))?;
        let config = Config::decode(&plain).map_err(|e| Error::decode(CONFIG, e))?;
        let chunker = Chunker::new(config.chunker, &keys.gear);
        Ok(Repository {
            backend,
            config,
            master,
            keys,
            sealer,
            chunker,
            key_id,
            index: RwLock::new(None),
        })
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

    /// A one-way fingerprint of the master key, which a client remembers to notice a change
    /// of key (it reveals nothing of the key).
    pub fn key_fingerprint(&self) -> [u8; 32] {
        self.master.fingerprint()
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
        open_sealed_owned(&self.sealer, bytes, magic).map_err(|e| Error::decode(name, e))
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

/// The payload of a header-and-box file, opened where it was read: a large file (the index
/// file of a large backup is megabytes) is never held twice, sealed and opened.
pub(crate) fn open_sealed_owned(
    sealer: &Sealer,
    mut bytes: Vec<u8>,
    magic: Magic,
) -> Result<Vec<u8>, DecodeError> {
    let header = Header::decode(&bytes, magic)?;
    if header.encrypted != sealer.encrypted() {
        return Err(DecodeError::Invalid("encryption flag differs from the repository's".into()));
    }
    let mut ad = [0u8; HEADER_LEN];
    ad.copy_from_slice(&bytes[..HEADER_LEN]);
    sealer
        .open_in_buffer(&ad, &mut bytes, HEADER_LEN)
        .map_err(|e| DecodeError::Invalid(e.to_string()))?;
    Ok(bytes)
}

/// Nanoseconds since the epoch, now.
pub fn now_ns() -> i64 {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_nanos()).unwrap_or(i64::MAX)
}
