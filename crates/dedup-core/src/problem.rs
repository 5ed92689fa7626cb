//! Problems met on the way (unreadable paths, files changing under us) that do not stop a run.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// How a problem is labelled for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Something could not be done (a path could not be listed or read).
    Error,
    /// Something was noticed and handled (a file changed while read and was left out).
    Warning,
    /// Only shown on request (`-v`): things skipped by design, such as symlink loops.
    Note,
}

/// What went wrong with a path.
#[derive(Debug)]
pub enum ProblemKind {
    /// An operating-system error while listing, statting, opening or reading.
    Io(io::Error),
    /// The file's size or timestamps changed between the scan and the end of reading it.
    Changed,
    /// A different file now stands at the path than the one the scan saw.
    Replaced,
    /// A directory that leads back into one of its own ancestors (through a symlink or a bind
    /// mount); it is not walked again.
    Loop,
    /// A root argument that is neither a regular file nor a directory.
    NotFileOrDir,
    /// Something about the persistent content cache (busy, damaged, unwritable); the path is
    /// the cache's. The run goes on, without the cache if need be.
    Cache(String),
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::Io(e) => write!(f, "{e}"),
            ProblemKind::Changed => f.write_str("file changed while it was being read; left out"),
            ProblemKind::Replaced => f.write_str("file was replaced during the scan; left out"),
            ProblemKind::Loop => f.write_str("directory loop; not entered again"),
            ProblemKind::NotFileOrDir => f.write_str("not a regular file or directory; skipped"),
            ProblemKind::Cache(what) => f.write_str(what),
        }
    }
}

/// One problem with one path.
#[derive(Debug)]
pub struct Problem {
    /// The path as the user would recognise it (root as given joined with the relative path).
    pub path: PathBuf,
    /// What happened.
    pub kind: ProblemKind,
    /// How it is labelled.
    pub severity: Severity,
    /// True when files may be missing from the result because of it (the exit status says so).
    pub incomplete: bool,
}

impl Problem {
    /// Something could not be done; files may be missing from the result.
    pub fn error(path: impl Into<PathBuf>, kind: ProblemKind) -> Self {
        Problem { path: path.into(), kind, severity: Severity::Error, incomplete: true }
    }

    /// A file was deliberately left out of the result (it changed, or was replaced, while the run
    /// looked at it): a warning, but the result is incomplete.
    pub fn left_out(path: impl Into<PathBuf>, kind: ProblemKind) -> Self {
        Problem { path: path.into(), kind, severity: Severity::Warning, incomplete: true }
    }

    /// Worth telling, but the result is complete.
    pub fn warning(path: impl Into<PathBuf>, kind: ProblemKind) -> Self {
        Problem { path: path.into(), kind, severity: Severity::Warning, incomplete: false }
    }

    /// A note shown only when the user asks for detail.
    pub fn note(path: impl Into<PathBuf>, kind: ProblemKind) -> Self {
        Problem { path: path.into(), kind, severity: Severity::Note, incomplete: false }
    }
}
