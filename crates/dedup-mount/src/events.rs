//! What a mounted file system tells its caller while it serves, without printing: a directory or
//! a file that could not be read (the reader got EIO; the caller says why, to whom it likes).

use std::fmt;

use dedup_store::Error;

/// What was being done when a problem came up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doing {
    /// Listing a directory (reading its tree).
    Listing,
    /// Reading a file's content.
    Reading,
    /// Opening a file (one the backup could not read whole opens as an error).
    Opening,
    /// Storing what was written to a volume's file.
    Writing,
    /// Committing a volume.
    Committing,
}

/// A request that failed for a reason worth telling: the repository could not give what it
/// asked for (missing, damaged, unreachable).
#[derive(Debug)]
pub struct MountProblem {
    /// What was being done.
    pub doing: Doing,
    /// The inode it was done to.
    pub ino: u64,
    /// Where that inode is, when the mount can tell (e.g. `/home/u/f in snapshot NAME`).
    pub place: Option<String>,
    /// Why it failed.
    pub error: Error,
}

impl fmt::Display for MountProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let doing = match self.doing {
            Doing::Listing => "listing",
            Doing::Reading => "reading",
            Doing::Opening => "opening",
            Doing::Writing => "storing what was written",
            Doing::Committing => "committing the volume",
        };
        // Inode 0 is none: a problem of the whole volume.
        match (&self.place, self.ino) {
            (_, 0) => write!(f, "{doing}: {}", self.error),
            (Some(place), ino) => write!(f, "{doing} {place} (inode {ino}): {}", self.error),
            (None, ino) => write!(f, "{doing} inode {ino}: {}", self.error),
        }
    }
}

/// Receives a mount's problems as they happen, from the threads that serve it.
pub trait MountEvents: Send + Sync {
    /// Called once per problem.
    fn problem(&self, problem: MountProblem);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_names_what_was_done_to_which_inode_and_why() {
        let error = Error::Missing { object: "data blob ab12".into() };
        let problem = MountProblem { doing: Doing::Reading, ino: 42, place: None, error };
        assert_eq!(problem.to_string(), "reading inode 42: data blob ab12: missing");
        let error = Error::Missing { object: "data blob ab12".into() };
        let place = Some("/home/u/f in snapshot 2026-11-28T10:00:00".to_string());
        let problem = MountProblem { doing: Doing::Reading, ino: 42, place, error };
        assert_eq!(
            problem.to_string(),
            "reading /home/u/f in snapshot 2026-11-28T10:00:00 (inode 42): data blob ab12: missing"
        );
    }
}
