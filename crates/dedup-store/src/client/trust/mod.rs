//! What a client remembers of each repository location it used, so that a change made by
//! whoever controls the storage does not go unnoticed (docs/store-format.md, "Threat model"
//! and "Outside the repository: the client's state"). borg's security directory is the model.
//!
//! Per location (a directory, an `s3:` or `sftp:` URL) one small file under
//! `$XDG_STATE_HOME/dedup/store/` (`~/.local/state/dedup/store/` by default), private to the
//! user (directories 0700, files 0600): the repository id, whether it encrypts, a one-way
//! fingerprint of its master key (never the key), the key slot that opened it last, and the
//! snapshots seen there. The caller compares a repository it opened with the record
//! ([`changes`]) and refuses a change it was not told to accept; [`ClientState::remember`]
//! then compares the snapshots present with those seen last time ([`SnapshotNews`]) and keeps
//! the new state. [`SnapshotWatch`] keeps the record up to date with the snapshots this client
//! writes and deletes itself, so that only someone else's deletions are news.

mod record;
mod watch;

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub use record::{Identity, Record, MOST_GONE};
pub use watch::SnapshotWatch;

use crate::id::Id;

/// A failure to read or write the client's state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// A record that does not read.
    #[error(
        "{}: damaged: {reason} (remove the file to start over: the repository is then taken as \
         on first use)",
        path.display()
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StateError + '_ {
    move |source| StateError::Io { path: path.to_path_buf(), source }
}

/// How a repository differs from what the client remembers of its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Another repository: another id.
    Repository {
        /// The id remembered.
        was: Id,
        /// The id found.
        now: Id,
    },
    /// The repository encrypted and now does not, or the other way round.
    Encryption {
        /// Whether it encrypted.
        was: bool,
    },
    /// The same id under another master key.
    Key,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Repository { was, now } => {
                write!(f, "its repository id changed from {} to {}", was.short(16), now.short(16))
            }
            Change::Encryption { was: true } => write!(f, "it was encrypted and is not any more"),
            Change::Encryption { was: false } => write!(f, "it was unencrypted and now encrypts"),
            Change::Key => write!(f, "its master key changed (the same id under another key)"),
        }
    }
}

/// How `now` differs from `was`.
pub fn changes(was: &Identity, now: &Identity) -> Vec<Change> {
    let mut out = Vec::new();
    if was.repository != now.repository {
        out.push(Change::Repository { was: was.repository, now: now.repository });
    }
    if was.encrypted != now.encrypted {
        out.push(Change::Encryption { was: was.encrypted });
    }
    // A new repository has a new key anyway: the key is news only under the same id.
    if was.repository == now.repository && was.key != now.key {
        out.push(Change::Key);
    }
    out
}

/// What changed in the set of snapshots since the client last looked, that it did not do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotNews {
    /// Snapshots seen last time that are gone.
    pub vanished: Vec<Id>,
    /// Snapshots that were gone and are back (an old copy of the repository put back?).
    pub returned: Vec<Id>,
}

impl SnapshotNews {
    /// Whether nothing changed that needs saying.
    pub fn is_empty(&self) -> bool {
        self.vanished.is_empty() && self.returned.is_empty()
    }
}

/// The client's state: a directory of records.
#[derive(Debug, Clone)]
pub struct ClientState {
    dir: PathBuf,
}

impl ClientState {
    /// The state kept in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        ClientState { dir }
    }

    /// `$XDG_STATE_HOME/dedup/store` (an absolute XDG_STATE_HOME only, as the XDG base
    /// directory specification says), else `~/.local/state/dedup/store`; None without a home.
    pub fn default_dir() -> Option<PathBuf> {
        Some(dedup_core::xdg::xdg_dir("XDG_STATE_HOME", ".local/state")?.join("dedup/store"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `location`: named by a hash of it, which holds it too.
    pub fn path_of(&self, location: &str) -> PathBuf {
        self.dir.join(Id::of_file(location.as_bytes()).short(32))
    }

    /// The record of `location`, if the client has one.
    pub fn load(&self, location: &str) -> Result<Option<Record>, StateError> {
        let path = self.path_of(location);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) if err.kind() == io::ErrorKind::InvalidData => {
                return Err(StateError::Damaged { path, reason: "not UTF-8".into() })
            }
            Err(err) => return Err(StateError::Io { path, source: err }),
        };
        let record = Record::decode(&text)
            .map_err(|reason| StateError::Damaged { path: path.clone(), reason })?;
        if record.location != record::one_line(location) {
            return Err(StateError::Damaged {
                path,
                reason: format!("it is the record of another location, {}", record.location),
            });
        }
        Ok(Some(record))
    }

    /// The records of other locations that hold the repository `id` (copies of it).
    pub fn elsewhere(&self, id: &Id, location: &str) -> Result<Vec<Record>, StateError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(StateError::Io { path: self.dir.clone(), source: err }),
        };
        let own = self.path_of(location);
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path == own || name.to_str().is_none_or(|n| n.len() != 32 || n.starts_with('.')) {
                continue;
            }
            // Another location's record that does not read is that location's business.
            let Ok(text) = fs::read_to_string(&path) else { continue };
            if let Ok(record) = Record::decode(&text) {
                if record.identity.repository == *id {
                    out.push(record);
                }
            }
        }
        Ok(out)
    }

    /// Runs `change` on the record of `location` (None when there is none) with the state
    /// locked against this client's other processes, and writes what it returns (nothing is
    /// written for None).
    pub fn update<T>(
        &self,
        location: &str,
        change: impl FnOnce(Option<Record>) -> (Option<Record>, T),
    ) -> Result<T, StateError> {
        self.make_dir()?;
        let lock_path = self.dir.join(".lock");
        let lock = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(io_error(&lock_path))?;
        lock.lock().map_err(io_error(&lock_path))?;
        let (record, out) = change(self.load(location)?);
        if let Some(record) = record {
            self.write(location, &record)?;
        }
        Ok(out)
    }

    /// After opening `identity` at `location` with key slot `key`, and finding the snapshots
    /// `present` there: what changed in them since last time (nothing the first time, or when
    /// `fresh` says the record starts over, after an accepted change), and the new record kept.
    pub fn remember(
        &self,
        location: &str,
        identity: Identity,
        key: Id,
        present: &[Id],
        fresh: bool,
    ) -> Result<SnapshotNews, StateError> {
        self.update(location, |known| {
            let (mut record, news) = match known {
                Some(mut record) if !fresh && record.identity == identity => {
                    let news = observe(&mut record, present);
                    (record, news)
                }
                _ => (Record::new(location, identity), SnapshotNews::default()),
            };
            record.last_key = Some(key);
            record.snapshots = present.iter().copied().collect();
            (Some(record), news)
        })
    }

    /// Creates the directory (and its parents), private.
    fn make_dir(&self) -> Result<(), StateError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(io_error(&self.dir))
    }

    /// Writes the record of `location`: a private temporary file, flushed, renamed over.
    fn write(&self, location: &str, record: &Record) -> Result<(), StateError> {
        let path = self.path_of(location);
        let temp = self.dir.join(format!(".tmp-{}", Id::random().short(16)));
        let written = (|| {
            let mut file = File::options().write(true).create_new(true).mode(0o600).open(&temp)?;
            file.write_all(record.encode().as_bytes())?;
            file.sync_all()?;
            fs::rename(&temp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written.map_err(io_error(&path))
    }
}

/// Compares the snapshots `present` with those `record` saw, and moves those gone to its
/// list of gone ones (a snapshot back from it is news once, then present again).
fn observe(record: &mut Record, present: &[Id]) -> SnapshotNews {
    let now: std::collections::HashSet<Id> = present.iter().copied().collect();
    let vanished: Vec<Id> =
        record.snapshots.iter().filter(|id| !now.contains(id)).copied().collect();
    let returned: Vec<Id> = record.gone.iter().filter(|id| now.contains(id)).copied().collect();
    record.gone.retain(|id| !now.contains(id));
    record.mark_gone(vanished.iter().copied());
    SnapshotNews { vanished, returned }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn identity(n: u8) -> Identity {
        Identity { repository: Id([n; 32]), encrypted: true, key: [n; 32] }
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_record_is_kept_privately_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let state = ClientState::new(dir.path().join("state/dedup/store"));
        assert_eq!(state.load("/srv/repo").unwrap(), None);
        let news = state.remember("/srv/repo", identity(1), Id([5; 32]), &[Id([7; 32])], false);
        assert_eq!(news.unwrap(), SnapshotNews::default(), "the first time, nothing is news");
        let record = state.load("/srv/repo").unwrap().unwrap();
        assert_eq!((record.identity, record.last_key), (identity(1), Some(Id([5; 32]))));
        assert_eq!(mode(&state.path_of("/srv/repo")), 0o600);
        for rel in ["state", "state/dedup", "state/dedup/store"] {
            assert_eq!(mode(&dir.path().join(rel)), 0o700, "{rel}");
        }
        assert_eq!(state.load("/srv/other").unwrap(), None);
        assert_eq!(state.elsewhere(&Id([1; 32]), "/srv/other").unwrap(), [record]);
        assert!(state.elsewhere(&Id([1; 32]), "/srv/repo").unwrap().is_empty());
    }

    #[test]
    fn snapshots_gone_or_back_are_news_once() {
        let dir = tempfile::tempdir().unwrap();
        let state = ClientState::new(dir.path().to_path_buf());
        let (a, b, c) = (Id([1; 32]), Id([2; 32]), Id([3; 32]));
        let remember =
            |present: &[Id]| state.remember("r", identity(1), Id([9; 32]), present, false).unwrap();
        remember(&[a, b]);
        assert_eq!(remember(&[a, b, c]), SnapshotNews::default(), "new ones are no news");
        assert_eq!(remember(&[c]), SnapshotNews { vanished: vec![a, b], returned: vec![] });
        assert_eq!(remember(&[c]), SnapshotNews::default(), "said once");
        assert_eq!(remember(&[a, c]), SnapshotNews { vanished: vec![], returned: vec![a] });
        assert_eq!(remember(&[a, c]), SnapshotNews::default());
        // Another repository (an accepted change) starts over.
        let news = state.remember("r", identity(2), Id([9; 32]), &[], true).unwrap();
        assert_eq!(news, SnapshotNews::default());
    }

    #[test]
    fn a_damaged_record_is_named_and_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let state = ClientState::new(dir.path().to_path_buf());
        fs::write(state.path_of("r"), "dedup store client state 1\nnonsense\n").unwrap();
        let err = state.load("r").unwrap_err().to_string();
        assert!(err.contains("damaged") && err.contains("remove the file"), "{err}");
        assert!(state.remember("r", identity(1), Id([9; 32]), &[], false).is_err());
        // The record of another location under this one's name is not taken for it.
        state.remember("s", identity(1), Id([9; 32]), &[], false).unwrap();
        fs::copy(state.path_of("s"), state.path_of("r")).unwrap();
        let err = state.load("r").unwrap_err().to_string();
        assert!(err.contains("another location"), "{err}");
    }

    #[test]
    fn changes_name_what_differs() {
        assert!(changes(&identity(1), &identity(1)).is_empty());
        let other = changes(&identity(1), &identity(2));
        assert_eq!(other, [Change::Repository { was: Id([1; 32]), now: Id([2; 32]) }]);
        let rekeyed = Identity { key: [3; 32], ..identity(1) };
        assert_eq!(changes(&identity(1), &rekeyed), [Change::Key]);
        let plain = Identity { encrypted: false, ..identity(1) };
        assert_eq!(changes(&identity(1), &plain), [Change::Encryption { was: true }]);
        assert!(Change::Key.to_string().contains("master key changed"));
    }
}
