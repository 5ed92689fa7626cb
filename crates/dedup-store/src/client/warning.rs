//! What a client tells its user while it opens a repository without refusing it: the binary
//! prints each line as `dedup: warning: …`, except [`Warning::KeyOrigin`], a note for a
//! verbose run.

use std::fmt;

use super::trust::{Change, SnapshotNews, StateError};
use crate::id::Id;
use crate::repo::OpenNote;

/// One thing worth telling, in the order met.
#[derive(Debug)]
pub enum Warning {
    /// No directory to keep the client's state in.
    NoClientState,
    /// An `s3:http://` location off this machine (the backend's words).
    PlainHttp(String),
    /// Something about the key slots.
    Slots(OpenNote),
    /// A repository seen for the first time that does not encrypt.
    Unencrypted {
        /// The location, as shown.
        shown: String,
    },
    /// Changes the user accepted with `--accept-repository-change`.
    Accepted {
        /// The location, as shown.
        shown: String,
        /// What changed.
        changes: Vec<Change>,
    },
    /// Snapshots gone or back since this client last looked.
    Snapshots {
        /// The location, as shown.
        shown: String,
        /// Which.
        news: SnapshotNews,
    },
    /// The client's state, or its key cache, could not be kept.
    NotKept(StateError),
    /// The key cache could not forget a key (`key remove`, `key passwd`).
    KeyCache(String),
    /// Not a warning: where the key came from when a password opened the repository (`key
    /// 1a2b3c4d: from this client's key cache`), for a verbose run to show.
    KeyOrigin(String),
}

impl Warning {
    /// Each line the warning takes (the snapshot news can take two).
    pub fn lines(&self) -> Vec<String> {
        match self {
            Warning::Snapshots { shown, news } => snapshot_lines(shown, news),
            other => vec![other.to_string()],
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::NoClientState => f.write_str(
                "neither XDG_STATE_HOME nor HOME is set: this client cannot remember the \
                 repositories it uses, so a repository replaced on the storage would go unnoticed",
            ),
            Warning::PlainHttp(warning) => write!(f, "{warning} (--insecure-http: no warning)"),
            Warning::Slots(note) => write!(f, "{note}"),
            Warning::Unencrypted { shown } => write!(
                f,
                "{shown}: the repository is not encrypted: anyone who can read the storage reads \
                 what it holds"
            ),
            Warning::Accepted { shown, changes } => {
                write!(f, "{shown}: accepted as asked: {}", joined(changes))
            }
            Warning::Snapshots { shown, news } => {
                f.write_str(&snapshot_lines(shown, news).join("\n"))
            }
            Warning::NotKept(err) => {
                write!(f, "cannot keep what this client remembers of the repository: {err}")
            }
            Warning::KeyCache(why) => write!(f, "key cache: {why}"),
            Warning::KeyOrigin(line) => f.write_str(line),
        }
    }
}

/// The changes, as one clause.
pub(crate) fn joined(changes: &[Change]) -> String {
    changes.iter().map(Change::to_string).collect::<Vec<_>>().join("; ")
}

fn snapshot_lines(shown: &str, news: &SnapshotNews) -> Vec<String> {
    let mut lines = Vec::new();
    if !news.vanished.is_empty() {
        lines.push(format!(
            "{shown}: {} snapshot(s) present when this client last looked are gone ({}): \
             forgotten by another client, or deleted by someone who can write to the storage",
            news.vanished.len(),
            short_ids(&news.vanished)
        ));
    }
    if !news.returned.is_empty() {
        lines.push(format!(
            "{shown}: {} snapshot(s) deleted earlier are back ({}): an older copy of the \
             repository, or of part of it, may have been put back",
            news.returned.len(),
            short_ids(&news.returned)
        ));
    }
    lines
}

fn short_ids(ids: &[Id]) -> String {
    let mut shown: Vec<String> = ids.iter().take(5).map(|id| id.short(8)).collect();
    if ids.len() > 5 {
        shown.push(format!("and {} more", ids.len() - 5));
    }
    shown.join(", ")
}
