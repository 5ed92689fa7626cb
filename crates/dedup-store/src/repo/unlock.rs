//! Opening a repository's master key: which key slots are tried, in which order, and what it
//! means when one opens but does not fit the config (docs/store-format.md §4 and "Threat
//! model").
//!
//! The storage is not trusted, and a key slot is read before anything in the repository is
//! authenticated. So a password-less slot (KDF 0, which anyone can write) is used only where
//! no slot takes a password and the config's header says the repository is unencrypted, and
//! never when the caller has a password; the first slot the password opens decides, and a
//! master key that does not open the config is tampering or damage, reported as such rather
//! than a reason to try another slot; slots are tried cheapest first (after the one that
//! worked last time), so that a planted slot with costly parameters is seldom tried at all.

use std::fmt;
use std::sync::Arc;

use super::key_slots::{load_slots, LoadedSlot};
use super::{Repository, CONFIG};
use crate::backend::Backend;
use crate::client::key_cache::KeyCache;
use crate::crypto::keys::{self, MasterKey};
use crate::error::{Error, Result};
use crate::format::{Header, Kdf, KdfParams, KeyFile, Magic};
use crate::id::Id;

/// How to open a repository.
#[derive(Clone, Copy, Default)]
pub struct OpenOptions<'a> {
    /// The user's password. `None` opens an unencrypted repository (whose key slot takes no
    /// password), and only that.
    pub password: Option<&'a [u8]>,
    /// The key slot to try first: the one that opened the repository last time.
    pub first_slot: Option<Id>,
}

impl fmt::Debug for OpenOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenOptions")
            .field("password", &self.password.map(|_| "(hidden)"))
            .field("first_slot", &self.first_slot)
            .finish()
    }
}

/// Something about the key slots worth telling the user, found while opening.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenNote {
    /// A slot whose argon2 parameters make each try slow was tried, and did not open with the
    /// password.
    SlowSlot {
        /// The slot.
        id: Id,
        /// Its parameters.
        params: KdfParams,
    },
    /// A password-less slot in a repository whose other slots take passwords: never used (it
    /// opens without the password, so anyone could have written it).
    PasswordlessIgnored {
        /// The slot.
        id: Id,
    },
    /// The client's key cache was not read or not written (why, naming the file); the key came
    /// from the repository's slots.
    KeyCache(String),
}

impl fmt::Display for OpenNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenNote::SlowSlot { id, params } => write!(
                f,
                "keys/{id}: its argon2 parameters (m = {} KiB, t = {}, p = {}) make every try \
                 {}x as slow as the default; if it is not yours, remove it (`key remove {}`)",
                params.memory_kib,
                params.iterations,
                params.lanes,
                params.work_kib().div_ceil(KdfParams::default().work_kib()),
                id.short(8)
            ),
            OpenNote::PasswordlessIgnored { id } => write!(
                f,
                "keys/{id}: a key without a password (KDF 0) in an encrypted repository: never \
                 used, since anyone who can write to the storage can make one; remove it (`key \
                 remove {}`)",
                id.short(8)
            ),
            OpenNote::KeyCache(why) => write!(f, "key cache: {why}"),
        }
    }
}

/// An open repository and what was noticed on the way.
pub struct Opened {
    /// The repository.
    pub repository: Repository,
    /// Notes on its key slots.
    pub notes: Vec<OpenNote>,
    /// Whether the master key came from the client's key cache (no password KDF was run).
    pub key_from_cache: bool,
}

/// The key slots of a repository by kind, as read before any is opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlotCensus {
    /// Slots that take a password (argon2id).
    pub with_password: usize,
    /// Slots that take none (KDF 0: unencrypted repositories).
    pub passwordless: usize,
    /// Key files that do not read.
    pub damaged: usize,
}

/// Counts the key slots of the repository in `backend` by kind.
pub fn slot_census(backend: &dyn Backend) -> Result<SlotCensus> {
    Ok(KeySlots::load(backend)?.census())
}

/// The key files of a repository, read once: counted to know whether a password is needed
/// ([`KeySlots::census`]), then tried ([`Repository::open_slots`]) without reading them again.
pub struct KeySlots {
    loaded: Vec<LoadedSlot>,
}

impl KeySlots {
    /// Reads every key file of the repository in `backend`, each verified against its name.
    pub fn load(backend: &dyn Backend) -> Result<KeySlots> {
        Ok(KeySlots { loaded: load_slots(backend)? })
    }

    /// The slots by kind.
    pub fn census(&self) -> SlotCensus {
        let mut census = SlotCensus::default();
        for slot in &self.loaded {
            match &slot.file {
                Ok(file) if file.kdf == Kdf::Argon2id => census.with_password += 1,
                Ok(_) => census.passwordless += 1,
                Err(_) => census.damaged += 1,
            }
        }
        census
    }
}

/// A readable slot.
struct Slot {
    id: Id,
    file: KeyFile,
}

/// The slots of one kind, `first` first, then the cheapest to try, then by id.
fn in_order(mut slots: Vec<Slot>, first: Option<Id>) -> Vec<Slot> {
    slots.sort_by_key(|slot| (Some(slot.id) != first, slot.file.params.work_kib(), slot.id));
    slots
}

impl Repository {
    /// Opens the repository in `backend` as `options` say (module documentation).
    pub fn open_with(backend: Arc<dyn Backend>, options: &OpenOptions<'_>) -> Result<Opened> {
        Repository::open_with_cache(backend, options, None)
    }

    /// Opens the repository in `backend` as `options` say, trying first the master key that
    /// `cache` keeps for this location under the password, and keeping there the key a slot
    /// opened (crate::client::key_cache). A cached key is only taken while the slot it mirrors is in
    /// the repository, and like a slot's it must open the config.
    pub fn open_with_cache(
        backend: Arc<dyn Backend>,
        options: &OpenOptions<'_>,
        cache: Option<&KeyCache>,
    ) -> Result<Opened> {
        let slots = KeySlots::load(backend.as_ref())?;
        Repository::open_slots(backend, slots, options, cache)
    }

    /// [`Repository::open_with_cache`] with the key files already read (`slots`, of this
    /// repository: the config is read now, and must open with a key they hold).
    pub fn open_slots(
        backend: Arc<dyn Backend>,
        slots: KeySlots,
        options: &OpenOptions<'_>,
        cache: Option<&KeyCache>,
    ) -> Result<Opened> {
        let location = backend.location();
        let config = match backend.get(CONFIG) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NoRepository(location))
            }
            Err(err) => return Err(Error::io(format!("{location}/{CONFIG}"), err)),
        };
        let header =
            Header::decode(&config, Magic::Config).map_err(|e| Error::decode(CONFIG, e))?;
        let loaded = slots.loaded;
        if loaded.is_empty() {
            return Err(Error::Invalid(format!(
                "{location}/keys: no key file is there, so no password can open the repository \
                 (an init interrupted between writing the config and its key leaves this; if \
                 nothing else is stored there, remove the config and run init again)"
            )));
        }
        let mut damaged = Vec::new();
        let (mut with_password, mut passwordless) = (Vec::new(), Vec::new());
        for LoadedSlot { id, file } in loaded {
            match file {
                Ok(file) if file.kdf == Kdf::Argon2id => with_password.push(Slot { id, file }),
                Ok(file) => passwordless.push(Slot { id, file }),
                Err(err) => damaged.push(err.to_string()),
            }
        }
        let mut notes = Vec::new();
        let Some(password) = options.password else {
            if !with_password.is_empty() {
                return Err(Error::Invalid(format!(
                    "{location}: the repository is encrypted: a password is needed"
                )));
            }
            let Some(slot) = in_order(passwordless, options.first_slot).into_iter().next() else {
                return Err(Error::Invalid(format!(
                    "no key file of the repository reads: {}",
                    damaged.join("; ")
                )));
            };
            if header.encrypted {
                return Err(Error::damaged(
                    CONFIG,
                    "its header says the repository is encrypted, but every key file that reads takes no \
                     password (KDF 0): refused, as the key files of an encrypted repository \
                     replaced by someone who can write to the storage would look",
                ));
            }
            let master = keys::unwrap(&slot.file, b"")
                .map_err(|e| Error::damaged(format!("keys/{}", slot.id), e))?;
            let repository = Repository::from_config(backend, &config, master, slot.id, false)?;
            return Ok(Opened { repository, notes, key_from_cache: false });
        };
        if with_password.is_empty() {
            return Err(Error::Invalid(format!(
                "{location}: a password was given, but no key of the repository takes one \
                 (every key file is password-less, KDF 0, as in an unencrypted repository): \
                 refused, since opening it would ignore the password; the key files of an \
                 encrypted repository replaced by someone who can write to the storage would \
                 look like this"
            )));
        }
        notes.extend(passwordless.iter().map(|slot| OpenNote::PasswordlessIgnored { id: slot.id }));
        if let Some(cache) = cache {
            let slots: Vec<Id> = with_password.iter().map(|slot| slot.id).collect();
            if let Some((slot, master)) = cached_key(cache, &location, &slots, password, &mut notes)
            {
                let repository = Repository::from_config(backend, &config, master, slot, true)
                    .map_err(|err| mismatch(slot, err))?;
                return Ok(Opened { repository, notes, key_from_cache: true });
            }
        }
        let mut slow = Vec::new();
        for slot in in_order(with_password, options.first_slot) {
            match keys::unwrap(&slot.file, password) {
                Ok(master) => {
                    let repository =
                        Repository::from_config(backend, &config, master, slot.id, true)
                            .map_err(|err| mismatch(slot.id, err))?;
                    notes.extend(slow);
                    if let Some(cache) = cache {
                        if let Err(err) =
                            cache.keep(&location, slot.id, &repository.master, password)
                        {
                            notes.push(OpenNote::KeyCache(err.to_string()));
                        }
                    }
                    return Ok(Opened { repository, notes, key_from_cache: false });
                }
                Err(keys::UnwrapError::WrongPassword) => {}
                Err(err) => damaged.push(format!("keys/{}: {err}", slot.id)),
            }
            // Slow, and not the user's (it did not open with the password): worth naming.
            if slot.file.params.is_slow() {
                slow.push(OpenNote::SlowSlot { id: slot.id, params: slot.file.params });
            }
        }
        if !damaged.is_empty() {
            return Err(Error::Invalid(format!(
                "no key of the repository opens with this password, and some key files are damaged: {}",
                damaged.join("; ")
            )));
        }
        if !slow.is_empty() {
            let named: Vec<String> = slow.iter().map(ToString::to_string).collect();
            return Err(Error::Invalid(format!("{}; {}", Error::WrongPassword, named.join("; "))));
        }
        Err(Error::WrongPassword)
    }

    /// Opens the repository in `backend` with `password` (a repository that takes none is
    /// refused: see [`Repository::open_with`]).
    pub fn open(backend: Arc<dyn Backend>, password: &[u8]) -> Result<Repository> {
        let options = OpenOptions { password: Some(password), first_slot: None };
        Ok(Repository::open_with(backend, &options)?.repository)
    }
}

/// The master key `cache` keeps for `location`, with the slot it mirrors, if that slot is one of
/// `slots` and `password` opens it. A cache of a slot no longer there is removed; one that does
/// not read is noted and left to be replaced.
fn cached_key(
    cache: &KeyCache,
    location: &str,
    slots: &[Id],
    password: &[u8],
    notes: &mut Vec<OpenNote>,
) -> Option<(Id, MasterKey)> {
    let cached = match cache.load(location) {
        Ok(cached) => cached?,
        Err(err) => {
            notes.push(OpenNote::KeyCache(err.to_string()));
            return None;
        }
    };
    if !slots.contains(&cached.slot) {
        // The slot was removed or its password changed: the cached key is retired with it.
        let _ = cache.forget(location);
        return None;
    }
    Some((cached.slot, cached.open(password)?))
}

/// The error of a config that the master key of `slot`, opened by the user's password, does
/// not open: only a holder of the password can write such a slot, so either the config was
/// replaced (by someone who can write to the storage but has no password) or it is damaged.
/// No other slot is tried: one that opened the replaced config would be the replacer's.
fn mismatch(slot: Id, err: Error) -> Error {
    match err {
        Error::Damaged { object, reason } if object == CONFIG => Error::damaged(
            CONFIG,
            format!(
                "it does not open with the master key of keys/{slot}, which this password \
                 opens ({reason}): the config was replaced (tampering with the storage) or is \
                 damaged; no other key is tried. Put back a copy of the repository's own config"
            ),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LocalBackend;
    use crate::crypto::keys::MasterKey;
    use crate::repo::InitOptions;

    const CHEAP: KdfParams = KdfParams { memory_kib: 64, iterations: 1, lanes: 1 };

    fn init(dir: &std::path::Path, password: Option<&[u8]>) -> Arc<dyn Backend> {
        let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(dir));
        let options = InitOptions {
            password: password.map(<[u8]>::to_vec),
            kdf: CHEAP,
            ..InitOptions::default()
        };
        Repository::init(Arc::clone(&backend), options).unwrap();
        backend
    }

    /// Writes a key slot holding a new master key; returns its id.
    fn plant_slot(backend: &dyn Backend, kdf: Kdf, params: KdfParams, password: &[u8]) -> Id {
        let file =
            keys::wrap(&MasterKey::generate(), kdf, params, password, "x@y".into(), 1).unwrap();
        let bytes = file.encode();
        let id = Id::of_file(&bytes);
        backend.put(&format!("keys/{id}"), &bytes).unwrap();
        id
    }

    fn open(backend: &Arc<dyn Backend>, password: Option<&[u8]>) -> Result<Opened> {
        Repository::open_with(Arc::clone(backend), &OpenOptions { password, first_slot: None })
    }

    fn message(result: Result<Opened>) -> String {
        match result {
            Ok(_) => panic!("opened"),
            Err(err) => err.to_string(),
        }
    }

    /// The reproduction, in the library: an unencrypted repository's config and key
    /// file copied into an encrypted one. The user's password opens the user's slot, whose key
    /// does not open the new config: refused as tampering, the planted slot never used.
    #[test]
    fn a_substituted_config_with_a_planted_passwordless_slot_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let victim = init(&dir.path().join("victim"), Some(b"pw"));
        let attacker = init(&dir.path().join("attacker"), None);
        victim.delete(CONFIG).unwrap();
        victim.put(CONFIG, &attacker.get(CONFIG).unwrap()).unwrap();
        for object in attacker.list("keys").unwrap() {
            victim.put(&object.name, &attacker.get(&object.name).unwrap()).unwrap();
        }
        let err = message(open(&victim, Some(b"pw")));
        assert!(err.contains("does not open with the master key of keys/"), "{err}");
        assert!(err.contains("replaced"), "{err}");
        // Without the user's slot the password is not ignored either.
        for object in victim.list("keys").unwrap() {
            if attacker.get(&object.name).is_err() {
                victim.delete(&object.name).unwrap();
            }
        }
        let err = message(open(&victim, Some(b"pw")));
        assert!(err.contains("a password was given, but no key of the repository takes one"));
    }

    /// A cached key is taken only with its password and while its slot is there, and like a
    /// slot's it must open the config: a config replaced behind the cache is refused.
    #[test]
    fn a_cached_key_needs_its_password_its_slot_and_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KeyCache::new(dir.path().join("cache"));
        let backend = init(&dir.path().join("victim"), Some(b"pw"));
        let open_cached = |password: &[u8]| {
            let options = OpenOptions { password: Some(password), first_slot: None };
            Repository::open_with_cache(Arc::clone(&backend), &options, Some(&cache))
        };
        assert!(!open_cached(b"pw").unwrap().key_from_cache);
        assert!(open_cached(b"pw").unwrap().key_from_cache);
        assert!(matches!(open_cached(b"other"), Err(Error::WrongPassword)));
        let attacker = init(&dir.path().join("attacker"), Some(b"theirs"));
        backend.delete(CONFIG).unwrap();
        backend.put(CONFIG, &attacker.get(CONFIG).unwrap()).unwrap();
        let err = message(open_cached(b"pw"));
        assert!(err.contains("does not open with the master key of keys/"), "{err}");
        // The slot gone, the cached key goes with it.
        for object in backend.list("keys").unwrap() {
            backend.delete(&object.name).unwrap();
        }
        plant_slot(backend.as_ref(), Kdf::Argon2id, CHEAP, b"other");
        assert!(matches!(open_cached(b"pw"), Err(Error::WrongPassword)));
        assert!(cache.load(&backend.location()).unwrap().is_none());
    }

    /// A planted password-less slot wrapping a key that seals an encrypted config: refused
    /// with a password (the user's slot decides) and without one (the header says encrypted).
    #[test]
    fn a_passwordless_slot_never_opens_an_encrypted_config() {
        let dir = tempfile::tempdir().unwrap();
        let backend = init(&dir.path().join("repo"), Some(b"pw"));
        let planted = plant_slot(backend.as_ref(), Kdf::None, CHEAP, b"");
        let opened = open(&backend, Some(b"pw")).unwrap();
        assert_eq!(opened.notes, [OpenNote::PasswordlessIgnored { id: planted }]);
        assert_ne!(opened.repository.key_id(), planted);
        let err = message(open(&backend, None));
        assert!(err.contains("the repository is encrypted: a password is needed"), "{err}");
        for object in backend.list("keys").unwrap() {
            if object.name != format!("keys/{planted}") {
                backend.delete(&object.name).unwrap();
            }
        }
        let err = message(open(&backend, None));
        assert!(err.contains("header says the repository is encrypted"), "{err}");
    }

    #[test]
    fn an_unencrypted_repository_opens_without_a_password_only() {
        let dir = tempfile::tempdir().unwrap();
        let backend = init(&dir.path().join("repo"), None);
        let opened = open(&backend, None).unwrap();
        assert!(!opened.repository.encrypted() && opened.notes.is_empty());
        assert!(message(open(&backend, Some(b"pw"))).contains("no key of the repository takes"));
    }

    /// The slot that worked last time is tried first; else the cheapest. A slot that another
    /// password opens is never taken for the user's.
    #[test]
    fn the_slot_that_worked_last_is_tried_first() {
        let dir = tempfile::tempdir().unwrap();
        let backend = init(&dir.path().join("repo"), Some(b"pw"));
        let repo = open(&backend, Some(b"pw")).unwrap().repository;
        let first = repo.key_id();
        let costlier = KdfParams { memory_kib: 128, ..CHEAP };
        let second = repo.add_key(b"pw", costlier, "again".into()).unwrap();
        assert_eq!(open(&backend, Some(b"pw")).unwrap().repository.key_id(), first, "cheapest");
        let options = OpenOptions { password: Some(b"pw"), first_slot: Some(second) };
        let opened = Repository::open_with(Arc::clone(&backend), &options).unwrap();
        assert_eq!(opened.repository.key_id(), second);
    }

    /// A planted slot with costly parameters is not tried when the user's opens first (it is
    /// cheaper), and is named when it is tried in vain.
    #[test]
    fn a_slow_slot_is_tried_last_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let backend = init(&dir.path().join("repo"), Some(b"pw"));
        // 256 MiB, 4 passes: over four times the default's work, within the caps.
        let slow = KdfParams { memory_kib: 256 << 10, iterations: 4, lanes: 4 };
        let planted = plant_slot(backend.as_ref(), Kdf::Argon2id, slow, b"other");
        let opened = open(&backend, Some(b"pw")).unwrap();
        assert!(opened.notes.is_empty(), "{:?}", opened.notes);
        let err = message(open(&backend, Some(b"wrong")));
        assert!(err.starts_with("wrong password"), "{err}");
        assert!(err.contains(&format!("keys/{planted}: its argon2 parameters")), "{err}");
    }
}
