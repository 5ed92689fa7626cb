//! The store's errors: each names the repository object (or path) it concerns and the reason.

use std::io;

use crate::format::DecodeError;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A repository object could not be read, written, listed or deleted.
    #[error("{object}: {cause}")]
    Io {
        /// The object or path, e.g. `data/ab/ab12…` or `/target/file`.
        object: String,
        /// What the operating system or the storage said (in the message, not a second line).
        cause: io::Error,
    },
    /// A repository object is damaged: it does not decode, verify or decrypt.
    #[error("{object}: damaged: {reason}")]
    Damaged {
        /// The object, e.g. `index/3f0a…` or `blob 9c1e… in data/9c/…`.
        object: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An object the repository needs is not there.
    #[error("{object}: missing")]
    Missing {
        /// The object, e.g. `blob 12ab…` or `data/12/12ab…`.
        object: String,
    },
    /// No repository at the location.
    #[error("{0}: no repository here (no config file)")]
    NoRepository(String),
    /// `init` on a location that already holds a repository.
    #[error("{0}: a repository already exists here")]
    AlreadyExists(String),
    /// No key slot opens with the password given.
    #[error("wrong password: no key of the repository opens with it")]
    WrongPassword,
    /// The repository or a file in it has a format version this program does not know.
    #[error("{object}: format version {found} is not supported (this program knows {known})")]
    Version {
        /// The object.
        object: String,
        /// The version found.
        found: u8,
        /// The version this program reads and writes.
        known: u8,
    },
    /// A snapshot name that matches no snapshot, or more than one.
    #[error("snapshot {0}")]
    Snapshot(String),
    /// A request the store cannot carry out as asked (bad parameter, last key...).
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// An I/O error on `object`.
    pub fn io(object: impl Into<String>, source: io::Error) -> Self {
        Error::Io { object: object.into(), cause: source }
    }

    /// `object` is damaged for `reason`.
    pub fn damaged(object: impl Into<String>, reason: impl ToString) -> Self {
        Error::Damaged { object: object.into(), reason: reason.to_string() }
    }

    /// A decoding error of `object`, with a version mismatch reported as such.
    pub fn decode(object: impl Into<String>, err: DecodeError) -> Self {
        match err {
            DecodeError::Version { found, known } => {
                Error::Version { object: object.into(), found, known }
            }
            other => Error::damaged(object, other),
        }
    }

    /// Whether the storage refused the request (permission denied): with append-only
    /// credentials, a deletion.
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Io { cause, .. } if cause.kind() == io::ErrorKind::PermissionDenied)
    }
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
