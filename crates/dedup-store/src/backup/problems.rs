//! What a backup tells about an entry it could not take whole. Each message names the path, gives
//! the reason and says what the snapshot holds of the entry, so that the words match what was
//! stored: "not in the snapshot", "without its content, marked incomplete", or the content of a
//! second, consistent read.

use std::fmt;
use std::io;
use std::path::PathBuf;

use dedup_core::{Problem, ProblemKind};

/// What the snapshot holds of an entry that is only partly there.
const NO_CONTENT: &str = "in the snapshot without its content, marked incomplete";

/// A reason with what the snapshot holds, carried as the message of an I/O error so that it
/// renders like every other problem (`path: reason; what was stored`) and keeps the error's kind.
#[derive(Debug)]
struct Told {
    reason: String,
    stored: &'static str,
}

impl fmt::Display for Told {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.reason, self.stored)
    }
}

impl std::error::Error for Told {}

fn told(kind: io::ErrorKind, reason: String, stored: &'static str) -> ProblemKind {
    ProblemKind::Io(io::Error::new(kind, Told { reason, stored }))
}

/// A file that could not be opened or read: stored flagged incomplete, without content.
pub fn unreadable(path: PathBuf, err: &io::Error) -> Problem {
    Problem::error(path, told(err.kind(), err.to_string(), NO_CONTENT))
}

/// A file whose read failed after `read` bytes.
pub fn unreadable_after(path: PathBuf, err: &io::Error, read: u64) -> Problem {
    if read == 0 {
        return unreadable(path, err);
    }
    Problem::error(path, told(err.kind(), format!("{err} after {read} bytes"), NO_CONTENT))
}

/// A file that changed during its read and again during a second read.
pub fn changed_twice(path: PathBuf) -> Problem {
    let reason = "changed while it was read, and again while it was read a second time".into();
    Problem::error(path, told(io::ErrorKind::Other, reason, NO_CONTENT))
}

/// A file that changed during its read and was read again, consistently.
pub fn changed_once(path: PathBuf) -> Problem {
    let reason = "changed while it was read".into();
    Problem::warning(
        path,
        told(io::ErrorKind::Other, reason, "read again: the snapshot holds it as it was then"),
    )
}

/// A file of a pseudo file system (`/proc`, `/sys`…) longer than the backup reads of one.
pub fn pseudo_too_long(path: PathBuf, limit: u64) -> Problem {
    let reason = format!(
        "longer than {} MiB on a pseudo file system, whose files are made up as they are read",
        limit >> 20
    );
    Problem::error(path, told(io::ErrorKind::Other, reason, NO_CONTENT))
}

/// A file that was listed but gone when the backup came to open it.
pub fn vanished(path: PathBuf) -> Problem {
    let reason = "vanished before it could be read".into();
    Problem::warning(path, told(io::ErrorKind::NotFound, reason, "not in the snapshot"))
}

/// A path given to back up that cannot be examined.
pub fn missing_root(path: PathBuf, err: &io::Error) -> Problem {
    Problem::error(path, told(err.kind(), err.to_string(), "not in the snapshot"))
}

/// An entry whose extended attributes could not be read.
pub fn xattrs_unread(path: PathBuf, err: &io::Error) -> Problem {
    let reason = format!("its extended attributes could not be read: {err}");
    Problem::error(path, told(err.kind(), reason, "in the snapshot without them"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_message_says_what_the_snapshot_holds() {
        let denied = io::Error::from_raw_os_error(13);
        let shown = |p: Problem| format!("{}: {}", p.path.display(), p.kind);
        assert_eq!(
            shown(unreadable("/a".into(), &denied)),
            "/a: Permission denied (os error 13); in the snapshot without its content, marked \
             incomplete"
        );
        assert!(shown(unreadable_after("/a".into(), &denied, 4096)).contains("after 4096 bytes"));
        assert!(shown(changed_twice("/a".into())).ends_with("marked incomplete"));
        let once = changed_once("/a".into());
        assert!(!once.incomplete, "a consistent second read leaves the snapshot complete");
        assert!(shown(once).contains("read again"));
        assert!(shown(pseudo_too_long("/proc/x".into(), 16 << 20)).contains("16 MiB"));
        let gone = vanished("/a".into());
        assert!(!gone.incomplete);
        assert!(shown(gone).ends_with("not in the snapshot"));
        assert!(missing_root("/m".into(), &io::Error::from_raw_os_error(2)).incomplete);
        assert!(shown(xattrs_unread("/a".into(), &denied)).ends_with("without them"));
    }
}
