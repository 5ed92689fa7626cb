//! Opening a repository this client can vouch for: the storage is not trusted, so what the
//! client remembers of the location ([`super::trust`]) decides whether a password is to be
//! asked for, which key slot is tried first, and whether the repository found is the one used
//! there before. A change of repository, key or encryption is refused unless the caller says
//! it is the user's own; snapshots gone or back since last time are warned about.
//! docs/store-format.md, "Threat model", says why each check is there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::key_cache::KeyCache;
use super::password::{Password, PasswordError};
use super::trust::{changes, ClientState, Identity, Record, SnapshotWatch, StateError};
use super::warning::{joined, Warning};
use crate::backend::S3Options;
use crate::backend::{is_remote, open_backend, plain_http_warning, Backend, CachedBackend};
use crate::repo::{presence, KeySlots, OpenOptions, Presence, Repository};

/// The option that accepts a change, as messages name it.
const ACCEPT: &str = "--accept-repository-change";

/// How the storage of a location is reached.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reach {
    /// `--connections`: requests in flight at most (8 when not given).
    pub connections: Option<usize>,
    /// `--s3-virtual-host`.
    pub s3_virtual_host: bool,
    /// `--accept-new-host-key` (SFTP).
    pub accept_new_host_key: bool,
    /// `--insecure-http`: no warning about plain HTTP.
    pub insecure_http: bool,
}

/// What the caller asks of [`open`].
pub struct OpenRequest<'a> {
    /// The location: a directory, `s3:…` or `sftp:…`.
    pub location: &'a Path,
    /// How its storage is reached.
    pub reach: Reach,
    /// `--no-cache`: no local cache of a remote repository's immutable files.
    pub no_cache: bool,
    /// `--no-key-cache`.
    pub no_key_cache: bool,
    /// `--accept-repository-change`.
    pub accept_change: bool,
    /// Whether a source of the password is given (a password for a repository that takes none
    /// is then suspicious).
    pub password_given: bool,
    /// The password, asked for only where one is needed.
    pub password: &'a dyn Fn() -> Result<Password, PasswordError>,
    /// Told each warning (and where the key came from) as it is met.
    pub warn: &'a dyn Fn(Warning),
}

/// Why a repository was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Neither a location nor DEDUP_REPO.
    #[error("no repository given: use -r/--repo REPO or set DEDUP_REPO")]
    NoLocation,
    /// The location names storage that cannot be used.
    #[error("cannot use the repository location {}", location.display())]
    Location {
        /// The location.
        location: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The storage did not answer.
    #[error("cannot open the repository at {shown}")]
    Storage {
        /// The location, as shown.
        shown: String,
        /// Why.
        source: std::io::Error,
    },
    /// The repository did not open.
    #[error("cannot open the repository at {shown}")]
    Repository {
        /// The location, as shown.
        shown: String,
        /// Why.
        source: crate::Error,
    },
    /// Key files but no config.
    #[error(
        "{shown}/config: missing, though the repository's {keys} key file(s) are there: \
         without its config (chunker, encryption) the repository cannot be read; put back a \
         copy of the config"
    )]
    ConfigMissing {
        /// The location, as shown.
        shown: String,
        /// How many key files there are.
        keys: usize,
    },
    /// Nothing at the location.
    #[error("{0}: no repository here (no config file); create one with `dedup store init`")]
    Nothing(String),
    /// The client's state does not read.
    #[error("cannot read what this client remembers")]
    State(#[source] StateError),
    /// The client's state of another location does not read.
    #[error(transparent)]
    Elsewhere(StateError),
    /// No password.
    #[error(transparent)]
    Password(#[from] PasswordError),
    /// A refusal: the repository is not the one this client expects there.
    #[error("{0}")]
    Refused(String),
    /// The snapshots could not be listed.
    #[error(transparent)]
    Snapshots(crate::Error),
}

/// The repository location: `given`, else DEDUP_REPO.
pub fn location(given: Option<&Path>) -> Result<PathBuf, OpenError> {
    if let Some(repo) = given {
        return Ok(repo.to_path_buf());
    }
    match std::env::var_os("DEDUP_REPO") {
        Some(repo) if !repo.is_empty() => Ok(PathBuf::from(repo)),
        _ => Err(OpenError::NoLocation),
    }
}

/// Warns of an `s3:http://` location off this machine, unless `reach.insecure_http` says not
/// to.
pub fn warn_of_plain_http(location: &Path, reach: Reach, warn: &dyn Fn(Warning)) {
    if reach.insecure_http {
        return;
    }
    if let Some(warning) = location.to_str().and_then(plain_http_warning) {
        warn(Warning::PlainHttp(warning));
    }
}

/// The storage behind `location` (a directory, `s3:…` or `sftp:…`).
pub fn backend(location: &Path, reach: Reach) -> Result<Arc<dyn Backend>, OpenError> {
    let options = S3Options {
        connections: reach.connections.unwrap_or(8).max(1),
        virtual_host: reach.s3_virtual_host,
        accept_new_host_key: reach.accept_new_host_key,
        ..S3Options::default()
    };
    open_backend(location, &options)
        .map_err(|source| OpenError::Location { location: location.to_path_buf(), source })
}

/// This client's key cache, unless `off` (or there is no home to keep it in).
pub fn key_cache(off: bool) -> Option<KeyCache> {
    if off {
        return None;
    }
    KeyCache::default_dir().map(KeyCache::new)
}

/// The client's state, or None (after a warning) where it has no place.
fn client_state(warn: &dyn Fn(Warning)) -> Option<ClientState> {
    let state = ClientState::default_dir().map(ClientState::new);
    if state.is_none() {
        warn(Warning::NoClientState);
    }
    state
}

/// The identity of an open repository.
fn identity(repo: &Repository) -> Identity {
    Identity {
        repository: repo.config().id,
        encrypted: repo.encrypted(),
        key: repo.key_fingerprint(),
    }
}

/// Opens the repository at `request.location`, asking for the password where one is needed,
/// and checks it against what this client remembers of the location.
pub fn open(request: &OpenRequest<'_>) -> Result<Repository, OpenError> {
    let warn = request.warn;
    let location = request.location;
    warn_of_plain_http(location, request.reach, warn);
    let remote = backend(location, request.reach)?;
    let cache = (is_remote(location) && !request.no_cache)
        .then(|| Arc::new(CachedBackend::new(Arc::clone(&remote))));
    let below: Arc<dyn Backend> = match &cache {
        Some(cache) => Arc::clone(cache) as Arc<dyn Backend>,
        None => remote,
    };
    let watch = Arc::new(SnapshotWatch::new(below));
    let backend: Arc<dyn Backend> = Arc::clone(&watch) as Arc<dyn Backend>;
    let shown = location.display().to_string();
    let found = presence(backend.as_ref())
        .map_err(|source| OpenError::Storage { shown: shown.clone(), source })?;
    match found {
        Presence::Repository => {}
        // Key files without a config are a repository that lost its config, not none at all.
        Presence::KeysWithoutConfig(keys) => return Err(OpenError::ConfigMissing { shown, keys }),
        Presence::Nothing => return Err(OpenError::Nothing(shown)),
    }
    let unopened = |source| OpenError::Repository { shown: shown.clone(), source };
    let place = backend.location();
    let state = client_state(warn);
    let known = match &state {
        Some(state) => state.load(&place).map_err(OpenError::State)?,
        None => None,
    };
    let accept = request.accept_change;
    let slots = KeySlots::load(backend.as_ref()).map_err(unopened)?;
    let census = slots.census();
    let password = if census.with_password > 0 {
        Some((request.password)()?)
    } else {
        if census.passwordless > 0 && !accept {
            refuse_passwordless(request.password_given, known.as_ref(), &shown)?;
        }
        // Without a readable key file at all, opening names what is missing or damaged.
        None
    };
    let options = OpenOptions {
        password: password.as_deref().map(Vec::as_slice),
        first_slot: known.as_ref().and_then(|record| record.last_key),
    };
    let key_cache = key_cache(request.no_key_cache);
    let opened =
        Repository::open_slots(backend, slots, &options, key_cache.as_ref()).map_err(unopened)?;
    for note in opened.notes {
        warn(Warning::Slots(note));
    }
    if password.is_some() {
        let key = opened.repository.key_id().short(8);
        warn(Warning::KeyOrigin(match opened.key_from_cache {
            true => format!("key {key}: from this client's key cache"),
            false => format!("key {key}: derived from the password"),
        }));
    }
    drop(password);
    let repo = opened.repository;
    let now = identity(&repo);
    let mut found = match &known {
        Some(record) => changes(&record.identity, &now),
        None => Vec::new(),
    };
    if let (None, Some(state)) = (&known, &state) {
        // A copy of a repository this client knows elsewhere: the same id must come with the
        // same key and encryption.
        for other in state.elsewhere(&now.repository, &place).map_err(OpenError::Elsewhere)? {
            found.extend(changes(&other.identity, &now));
        }
        if !now.encrypted {
            warn(Warning::Unencrypted { shown: shown.clone() });
        }
    }
    found.dedup();
    if !found.is_empty() {
        if !accept {
            let record = state.as_ref().map(|s| s.path_of(&place).display().to_string());
            return Err(OpenError::Refused(format!(
                "{shown}: refused: this is not the repository this client used there before: \
                 {}. Someone who can write to the storage may have replaced it. If the change is \
                 yours (you re-created the repository, or put back a copy of it), run the \
                 command again with {ACCEPT} (this client's record: {})",
                joined(&found),
                record.unwrap_or_default()
            )));
        }
        warn(Warning::Accepted { shown: shown.clone(), changes: found.clone() });
    }
    if let Some(state) = state {
        let present = repo.list_snapshot_ids().map_err(OpenError::Snapshots)?;
        match state.remember(&place, now, repo.key_id(), &present, !found.is_empty()) {
            Ok(news) if news.is_empty() => {}
            Ok(news) => warn(Warning::Snapshots { shown, news }),
            Err(err) => warn(Warning::NotKept(err)),
        }
        watch.attach(state, place);
    }
    if let (Some(cache), Some(dir)) = (&cache, CachedBackend::default_dir(&repo.config().id)) {
        cache.attach(dir);
    }
    Ok(repo)
}

/// Refuses to open a repository whose keys take no password where this client expects one:
/// it encrypted when last used, or a password was given and the client does not know it.
fn refuse_passwordless(
    password_given: bool,
    known: Option<&Record>,
    shown: &str,
) -> Result<(), OpenError> {
    if known.is_some_and(|record| record.identity.encrypted) {
        return Err(OpenError::Refused(format!(
            "{shown}: refused: the repository was encrypted when this client last used it, and \
             now no key of it takes a password (its key files were replaced, by someone who can \
             write to the storage or by yourself). If the change is yours, run the command again \
             with {ACCEPT}"
        )));
    }
    if known.is_none() && password_given {
        return Err(OpenError::Refused(format!(
            "{shown}: refused: a password was given, but the repository takes none (it is \
             unencrypted, or its key files were replaced by someone who can write to the \
             storage), and this client has not used it before. If it is meant to be \
             unencrypted, run the command again with {ACCEPT}, or without a password"
        )));
    }
    Ok(())
}

/// Remembers the repository `init` just made at its location (a record of an older
/// repository there is replaced: making a new one is the user's own change).
pub fn remember_new(repo: &Repository, warn: &dyn Fn(Warning)) {
    let Some(state) = client_state(warn) else { return };
    let place = repo.backend().location();
    if let Err(err) = state.remember(&place, identity(repo), repo.key_id(), &[], true) {
        warn(Warning::NotKept(err));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Id;

    fn record(encrypted: bool) -> Record {
        Record::new("/r", Identity { repository: Id([7; 32]), encrypted, key: [1; 32] })
    }

    #[test]
    fn a_repository_without_passwords_is_refused_where_one_was_expected() {
        let refused = |given, known: Option<&Record>| refuse_passwordless(given, known, "/r");
        let was_encrypted = refused(false, Some(&record(true))).unwrap_err().to_string();
        assert!(was_encrypted.contains("was encrypted when this client last used it"));
        let unknown_with_password = refused(true, None).unwrap_err().to_string();
        assert!(unknown_with_password.contains("a password was given"));
        assert!(refused(false, None).is_ok());
        assert!(refused(true, Some(&record(false))).is_ok());
    }

    #[test]
    fn a_location_given_comes_before_dedup_repo() {
        assert_eq!(location(Some(Path::new("/given"))).unwrap(), Path::new("/given"));
    }
}
