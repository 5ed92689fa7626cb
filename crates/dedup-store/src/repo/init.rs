//! `init`: a new repository with a fresh master key, its first key slot and its config.

use std::sync::Arc;

use super::{now_ns, seal_file, Repository, CONFIG};
use crate::backend::{Backend, PutOutcome};
use crate::crypto::keys::{self, MasterKey};
use crate::crypto::Sealer;
use crate::error::{Error, Result};
use crate::format::{
    ChunkerParams, CompressionMode, Config, Kdf, KdfParams, Magic, FORMAT_VERSION, PACK_SIZE_RANGE,
};
use crate::id::Id;
use zeroize::Zeroize;

/// The choices made once, at init (not `Clone`: it may hold a password).
pub struct InitOptions {
    /// The password of the first key; `None` makes an unencrypted repository. Zeroed by
    /// [`Repository::init`] once the key is made.
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

impl std::fmt::Debug for InitOptions {
    /// Everything but the password, of which only whether there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InitOptions")
            .field("password", &self.password.as_ref().map(|_| "(hidden)"))
            .field("chunker", &self.chunker)
            .field("pack_size", &self.pack_size)
            .field("compression", &self.compression)
            .field("kdf", &self.kdf)
            .field("label", &self.label)
            .field("format_version", &self.format_version)
            .finish()
    }
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
    pub fn init(backend: Arc<dyn Backend>, mut options: InitOptions) -> Result<Repository> {
        let made = Repository::init_with(backend, &options);
        if let Some(password) = options.password.as_mut() {
            password.zeroize();
        }
        made
    }

    fn init_with(backend: Arc<dyn Backend>, options: &InitOptions) -> Result<Repository> {
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
        refuse_remains(backend.as_ref(), &location)?;
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
        let config = Config {
            id: Id::random(),
            created: now_ns(),
            chunker: options.chunker,
            pack_size: options.pack_size,
            compression: options.compression,
            version: options.format_version,
        };
        let keys = master.derive();
        let sealer = Sealer::from_secret(&keys.data, options.password.is_some());
        let bytes = seal_file(&sealer, Magic::Config, &config.encode());
        // The config first, write-once: of two inits racing for the location only one writes
        // it, and the other leaves nothing behind. A key slot is written only for the config
        // that stands, so no slot whose master key does not open the config is ever left
        // (opening treats such a slot as tampering: docs/store-format.md §4). An init stopped
        // between the two leaves a config without keys, which opens for no one and is named
        // as such; nothing else is stored there yet.
        let written = backend.put(CONFIG, &bytes).map_err(|e| Error::io(CONFIG, e))?;
        if written == PutOutcome::AlreadyExisted {
            return Err(Error::AlreadyExists(location));
        }
        if let Err(err) = backend.put(&key_name, &slot_bytes) {
            // Without its key the config opens for no one: take it back, so that init can be
            // run again.
            let _ = backend.delete(CONFIG);
            return Err(Error::io(&key_name, err));
        }
        Repository::from_config(backend, &bytes, master, key_id, options.password.is_some())
    }
}

/// The folders of a repository (docs/store-format.md §1), in the order `init` looks into them:
/// the small ones first, `data/` last (listing it costs one request per 1,000 packs).
const FOLDERS: [&str; 6] = ["keys", "snapshots", "index", "writers", "deletions", "data"];

/// Refuses a location that holds any file of a repository, though no config: a new master key
/// there would not open the packs, index files and snapshots already in it, and a later `repair
/// index` under the new key would take every old pack for damaged.
fn refuse_remains(backend: &dyn Backend, location: &str) -> Result<()> {
    let mut found = Vec::new();
    for folder in FOLDERS {
        let count =
            backend.list(folder).map_err(|e| Error::io(format!("{location}/{folder}"), e))?.len();
        if count > 0 {
            found.push(format!("{folder}/ ({count} file(s))"));
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "{location}: holds part of a repository ({}) but no config: nothing was written. If the \
         config was lost, put back a copy of it (the password opens the repository again); to \
         start anew, choose an empty location or move these files away first",
        found.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LocalBackend;

    #[test]
    fn init_options_never_print_the_password() {
        let options = InitOptions { password: Some(b"hunter2".to_vec()), ..InitOptions::default() };
        let shown = format!("{options:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("104, 117"), "{shown}");
        assert!(shown.contains("password: Some(\"(hidden)\")"), "{shown}");
    }

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
            // Refused either for the winner's config or, seen before it, for its key slot.
            assert!(
                matches!(results[loser], Err(Error::AlreadyExists(_) | Error::Invalid(_))),
                "round {round}"
            );
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

    #[test]
    fn a_location_holding_any_file_of_a_repository_is_refused_and_left_as_it_was() {
        let options = || InitOptions {
            password: Some(b"pw".to_vec()),
            kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
            ..InitOptions::default()
        };
        for folder in FOLDERS {
            let dir = tempfile::tempdir().unwrap();
            let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(dir.path()));
            let name = format!("{folder}/ab/{}", "ab".repeat(32));
            backend.put(&name, b"old").unwrap();
            let err = Repository::init(Arc::clone(&backend), options()).err().unwrap();
            assert!(err.to_string().contains(&format!("{folder}/ (1 file(s))")), "{err}");
            assert!(!backend.exists(CONFIG).unwrap(), "{folder}: a config was written");
            for other in FOLDERS {
                let count = backend.list(other).unwrap().len();
                assert_eq!(count, usize::from(other == folder), "{folder}: {other} changed");
            }
        }
        // Files of no repository (or a writer's leftover temporaries) are no reason to refuse.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/.tmp-x"), b"partial").unwrap();
        assert!(Repository::init(Arc::new(LocalBackend::new(dir.path())), options()).is_ok());
    }
}
