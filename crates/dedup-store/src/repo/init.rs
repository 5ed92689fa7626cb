//! `init`: a new repository with a fresh master key, its first key slot and its config.

use std::sync::Arc;

use super::{now_ns, seal_file, Repository, CONFIG};
use crate::backend::{Backend, PutOutcome};
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{
    ChunkerParams, CompressionMode, Config, Kdf, KdfParams, Magic, FORMAT_VERSION, PACK_SIZE_RANGE,
};
use crate::id::Id;
use crate::keys::{self, MasterKey};

/// The choices made once, at init.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The password of the first key; `None` makes an unencrypted repository.
    pub password: Option<Vec<u8>>,
    /// The chunker.
    pub chunker: ChunkerParams,
    /// Target pack size in bytes.
    pub pack_size: u32,
    /// Compression.
    pub compression: CompressionMode,
    /// argon2 cost of the first key.
    pub kdf: KdfParams,
    /// Label of the first key (`user@host`).
    pub label: String,
    /// The format version (4, the default: padded packs; 3: trees of version 2 with status
    /// trees; 1 or 2 keep trees of version 1, which older programs read and write). At least
    /// what the chunker needs (kind 3: version 2; kind 4: version 4).
    pub format_version: u8,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            password: None,
            chunker: ChunkerParams::default(),
            pack_size: 16 << 20,
            compression: CompressionMode::Auto,
            kdf: KdfParams::default(),
            label: String::new(),
            format_version: FORMAT_VERSION,
        }
    }
}

impl Repository {
    /// Creates a repository in `backend`, which must hold none, and opens it.
    pub fn init(backend: Arc<dyn Backend>, options: InitOptions) -> Result<Repository> {
        options.chunker.validate().map_err(Error::Invalid)?;
        let needed = options.chunker.format_version();
        if !(needed..=FORMAT_VERSION).contains(&options.format_version) {
            return Err(Error::Invalid(format!(
                "format version {}: expected {needed} to {FORMAT_VERSION} with this chunker",
                options.format_version
            )));
        }
        if !(PACK_SIZE_RANGE.0..=PACK_SIZE_RANGE.1).contains(&options.pack_size) {
            return Err(Error::Invalid(format!(
                "pack size {} out of range ({} to {} bytes)",
                options.pack_size, PACK_SIZE_RANGE.0, PACK_SIZE_RANGE.1
            )));
        }
        let location = backend.location();
        if backend.exists(CONFIG).map_err(|e| Error::io(&location, e))? {
            return Err(Error::AlreadyExists(location));
        }
        let master = MasterKey::generate();
        let (kdf, password) = match &options.password {
            Some(password) => (Kdf::Argon2id, password.as_slice()),
            None => (Kdf::None, &b""[..]),
        };
        let slot = keys::wrap(&master, kdf, options.kdf, password, options.label.clone(), now_ns())
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let slot_bytes = slot.encode();
        let key_id = Id::of_file(&slot_bytes);
        let key_name = format!("keys/{key_id}");
        backend.put(&key_name, &slot_bytes).map_err(|e| Error::io(&key_name, e))?;
        let config = Config {
            id: Id::random(),
            created: now_ns(),
            chunker: options.chunker,
            pack_size: options.pack_size,
            compression: options.compression,
            version: options.format_version,
        };
        let sealer = Sealer::new(master.derive().data, options.password.is_some());
        // The config last: until it exists the location holds no repository, so an interrupted
        // init leaves nothing that opens half-made.
        let bytes = seal_file(&sealer, Magic::Config, &config.encode());
        let written = backend.put(CONFIG, &bytes).map_err(|e| Error::io(CONFIG, e))?;
        if written == PutOutcome::AlreadyExisted {
            // Another init won the race: its config stands, and this key slot, whose master key
            // does not open that config, goes.
            let _ = backend.delete(&key_name);
            return Err(Error::AlreadyExists(location));
        }
        Repository::with_master(backend, master, key_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LocalBackend;

    #[test]
    fn of_two_inits_racing_for_one_location_one_wins_and_the_other_is_refused() {
        for round in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let location = dir.path().join("repo");
            let barrier = std::sync::Barrier::new(2);
            let results: Vec<Result<Repository>> = std::thread::scope(|scope| {
                let racers: Vec<_> = [b"first".as_slice(), b"second"]
                    .into_iter()
                    .map(|password| {
                        let (location, barrier) = (&location, &barrier);
                        scope.spawn(move || {
                            let options = InitOptions {
                                password: Some(password.to_vec()),
                                kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
                                ..InitOptions::default()
                            };
                            barrier.wait();
                            Repository::init(Arc::new(LocalBackend::new(location)), options)
                        })
                    })
                    .collect();
                racers.into_iter().map(|r| r.join().unwrap()).collect()
            });
            let winners: Vec<usize> = (0..2).filter(|&i| results[i].is_ok()).collect();
            assert_eq!(winners.len(), 1, "round {round}: both inits claimed the location");
            let loser = 1 - winners[0];
            assert!(matches!(results[loser], Err(Error::AlreadyExists(_))), "round {round}");
            let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(&location));
            assert_eq!(backend.list("keys").unwrap().len(), 1, "round {round}: a stray key slot");
            let passwords = [b"first".as_slice(), b"second"];
            assert!(Repository::open(Arc::clone(&backend), passwords[winners[0]]).is_ok());
            assert!(matches!(
                Repository::open(backend, passwords[loser]),
                Err(Error::WrongPassword)
            ));
        }
    }
}
