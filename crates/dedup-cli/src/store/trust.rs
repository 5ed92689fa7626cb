//! Opening a repository this client can vouch for: the storage is not trusted, so what the
//! client remembers of the location (dedup_store::trust) decides whether a password is to be
//! asked for, which key slot is tried first, and whether the repository found is the one used
//! there before. A change of repository, key or encryption is refused (exit 2) unless
//! `--accept-repository-change` says it is the user's own; snapshots gone or back since last
//! time are warned about. docs/store-format.md, "Threat model", says why each check is there.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use dedup_store::backend::{is_remote, plain_http_warning, Backend, CachedBackend};
use dedup_store::id::Id;
use dedup_store::key_cache::KeyCache;
use dedup_store::repo::{presence, KeySlots, OpenOptions, Presence, Repository};
use dedup_store::trust::{
    changes, Change, ClientState, Identity, Record, SnapshotNews, SnapshotWatch,
};

use super::args::CommonArgs;
use super::password;

/// The option that accepts a change, as messages name it.
const ACCEPT: &str = "--accept-repository-change";

/// The client's state, or None (after a warning) where it has no place.
fn client_state() -> Option<ClientState> {
    let state = ClientState::default_dir().map(ClientState::new);
    if state.is_none() {
        eprintln!(
            "dedup: warning: neither XDG_STATE_HOME nor HOME is set: this client cannot remember \
             the repositories it uses, so a repository replaced on the storage would go unnoticed"
        );
    }
    state
}

/// Warns about an `s3:http://` location off this machine, unless `--insecure-http` says so.
pub fn warn_of_plain_http(common: &CommonArgs, location: &Path) {
    if common.insecure_http {
        return;
    }
    if let Some(warning) = location.to_str().and_then(plain_http_warning) {
        eprintln!("dedup: warning: {warning} (--insecure-http: no warning)");
    }
}

/// The identity of an open repository.
fn identity(repo: &Repository) -> Identity {
    Identity {
        repository: repo.config().id,
        encrypted: repo.encrypted(),
        key: repo.key_fingerprint(),
    }
}

/// Opens the repository of `common`, asking for the password where one is needed, and checks
/// it against what this client remembers of its location.
pub fn open(common: &CommonArgs) -> Result<Repository> {
    open_with(common, &|| password::password(common))
}

/// [`open`], with the password taken from `password` where one is needed (the source
/// repository of `copy` has sources of its own).
pub fn open_with(
    common: &CommonArgs,
    password: &dyn Fn() -> Result<password::Password>,
) -> Result<Repository> {
    let location = super::location(common)?;
    warn_of_plain_http(common, &location);
    let remote = super::backend(common, &location)?;
    let cache = (is_remote(&location) && !common.no_cache)
        .then(|| Arc::new(CachedBackend::new(Arc::clone(&remote))));
    let below: Arc<dyn Backend> = match &cache {
        Some(cache) => Arc::clone(cache) as Arc<dyn Backend>,
        None => remote,
    };
    let watch = Arc::new(SnapshotWatch::new(below));
    let backend: Arc<dyn Backend> = Arc::clone(&watch) as Arc<dyn Backend>;
    let shown = location.display();
    let found = presence(backend.as_ref())
        .with_context(|| format!("cannot open the repository at {shown}"))?;
    match found {
        Presence::Repository => {}
        // Key files without a config are a repository that lost its config, not none at all.
        Presence::KeysWithoutConfig(keys) => bail!(
            "{shown}/config: missing, though the repository's {keys} key file(s) are there: \
             without its config (chunker, encryption) the repository cannot be read; put \
             back a copy of the config"
        ),
        Presence::Nothing => bail!(
            "{shown}: no repository here (no config file); create one with `dedup store init`"
        ),
    }
    let place = backend.location();
    let state = client_state();
    let known = match &state {
        Some(state) => state.load(&place).context("cannot read what this client remembers")?,
        None => None,
    };
    let accept = common.accept_repository_change;
    let slots = KeySlots::load(backend.as_ref())
        .with_context(|| format!("cannot open the repository at {shown}"))?;
    let census = slots.census();
    let password = if census.with_password > 0 {
        Some(password()?)
    } else {
        if census.passwordless > 0 {
            refuse_passwordless(common, known.as_ref(), &shown.to_string(), accept)?;
        }
        // Without a readable key file at all, opening names what is missing or damaged.
        None
    };
    let options = OpenOptions {
        password: password.as_deref().map(Vec::as_slice),
        first_slot: known.as_ref().and_then(|record| record.last_key),
    };
    let key_cache = key_cache(common);
    let opened = Repository::open_slots(backend, slots, &options, key_cache.as_ref())
        .with_context(|| format!("cannot open the repository at {shown}"))?;
    for note in &opened.notes {
        eprintln!("dedup: warning: {note}");
    }
    if common.verbose > 0 && password.is_some() {
        let key = opened.repository.key_id().short(8);
        if opened.key_from_cache {
            eprintln!("dedup: key {key}: from this client's key cache");
        } else {
            eprintln!("dedup: key {key}: derived from the password");
        }
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
        for other in state.elsewhere(&now.repository, &place)? {
            found.extend(changes(&other.identity, &now));
        }
        if !now.encrypted {
            eprintln!(
                "dedup: warning: {shown}: the repository is not encrypted: anyone who can read \
                 the storage reads what it holds"
            );
        }
    }
    found.dedup();
    if !found.is_empty() {
        let record = state.as_ref().map(|s| s.path_of(&place).display().to_string());
        let what: Vec<String> = found.iter().map(Change::to_string).collect();
        if !accept {
            bail!(
                "{shown}: refused: this is not the repository this client used there before: \
                 {}. Someone who can write to the storage may have replaced it. If the change is \
                 yours (you re-created the repository, or put back a copy of it), run the \
                 command again with {ACCEPT} (this client's record: {})",
                what.join("; "),
                record.unwrap_or_default()
            );
        }
        eprintln!("dedup: warning: {shown}: accepted as asked: {}", what.join("; "));
    }
    if let Some(state) = state {
        let present = repo.list_snapshot_ids()?;
        match state.remember(&place, now, repo.key_id(), &present, !found.is_empty()) {
            Ok(news) => warn_of_snapshot_news(&shown.to_string(), &news),
            Err(err) => eprintln!(
                "dedup: warning: cannot keep what this client remembers of the repository: {err}"
            ),
        }
        watch.attach(state, place);
    }
    if let (Some(cache), Some(dir)) = (&cache, CachedBackend::default_dir(&repo.config().id)) {
        cache.attach(dir);
    }
    Ok(repo)
}

/// This client's key cache, unless `--no-key-cache` says not to use it (or there is no home to
/// keep it in).
pub fn key_cache(common: &CommonArgs) -> Option<KeyCache> {
    if common.no_key_cache {
        return None;
    }
    KeyCache::default_dir().map(KeyCache::new)
}

/// Refuses to open a repository whose keys take no password where this client expects one:
/// it encrypted when last used, or a password was given and the client does not know it.
fn refuse_passwordless(
    common: &CommonArgs,
    known: Option<&Record>,
    shown: &str,
    accept: bool,
) -> Result<()> {
    if accept {
        return Ok(());
    }
    if known.is_some_and(|record| record.identity.encrypted) {
        bail!(
            "{shown}: refused: the repository was encrypted when this client last used it, and \
             now no key of it takes a password (its key files were replaced, by someone who can \
             write to the storage or by yourself). If the change is yours, run the command again \
             with {ACCEPT}"
        );
    }
    if known.is_none() && password::given(common) {
        bail!(
            "{shown}: refused: a password was given, but the repository takes none (it is \
             unencrypted, or its key files were replaced by someone who can write to the \
             storage), and this client has not used it before. If it is meant to be \
             unencrypted, run the command again with {ACCEPT}, or without a password"
        );
    }
    Ok(())
}

fn short_ids(ids: &[Id]) -> String {
    let mut shown: Vec<String> = ids.iter().take(5).map(|id| id.short(8)).collect();
    if ids.len() > 5 {
        shown.push(format!("and {} more", ids.len() - 5));
    }
    shown.join(", ")
}

fn warn_of_snapshot_news(shown: &str, news: &SnapshotNews) {
    if !news.vanished.is_empty() {
        eprintln!(
            "dedup: warning: {shown}: {} snapshot(s) present when this client last looked are \
             gone ({}): forgotten by another client, or deleted by someone who can write to the \
             storage",
            news.vanished.len(),
            short_ids(&news.vanished)
        );
    }
    if !news.returned.is_empty() {
        eprintln!(
            "dedup: warning: {shown}: {} snapshot(s) deleted earlier are back ({}): an older \
             copy of the repository, or of part of it, may have been put back",
            news.returned.len(),
            short_ids(&news.returned)
        );
    }
}

/// Remembers the repository `init` just made at its location (a record of an older
/// repository there is replaced: making a new one is the user's own change).
pub fn remember_new(repo: &Repository) {
    let Some(state) = client_state() else { return };
    let place = repo.backend().location();
    if let Err(err) = state.remember(&place, identity(repo), repo.key_id(), &[], true) {
        eprintln!(
            "dedup: warning: cannot keep what this client remembers of the repository: {err}"
        );
    }
}
