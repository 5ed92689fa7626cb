//! How far and how deep a walk looks: exclusion globs, depth, file-system boundaries, links,
//! and how much it finds out about each entry. What a job then keeps of the entries (the finder's
//! size bounds, for one) is the job's own policy.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::entry::EntryKind;

/// A bad walk setting.
#[derive(Debug, thiserror::Error)]
pub enum WalkOptionsError {
    /// An `--exclude` pattern that is not a valid glob.
    #[error("invalid exclude pattern {pattern:?}: {source}")]
    BadGlob {
        /// The pattern as given.
        pattern: String,
        /// Why globset rejected it.
        source: globset::Error,
    },
}

/// How much the walk finds out about each entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// The metadata of regular files (and of what followed links lead to); other entries are
    /// known by kind and name only. What the finder needs, at one `stat` per file.
    #[default]
    Files,
    /// The metadata of every entry and every symlink's target: what a backup or a mirror needs.
    Everything,
}

/// A job's own rule for the entries a walk leaves out (a mirror's ordered include and exclude
/// patterns, say), asked for each listed entry before it is examined: a left-out entry costs no
/// `stat`, is never entered, and nothing it could not be examined for is reported.
pub trait EntryFilter: Send + Sync + std::fmt::Debug {
    /// True when the entry `name` at `relative` (its path below root number `root`, in the order
    /// the roots were given) is left out. `kind` is the listing's; where the file system does not
    /// give it the walk asks after examining the entry, and with `None` when that failed (the
    /// entry is then left out, its problem unreported, if it would be as any kind).
    fn leaves_out(&self, root: u32, relative: &[u8], name: &[u8], kind: Option<EntryKind>) -> bool;
}

/// The user's choice of where a walk goes and what it finds out.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Levels below a root directory to descend; 0 keeps only the roots themselves.
    pub max_depth: Option<u32>,
    /// Do not enter directories on another device than their root.
    pub one_file_system: bool,
    /// Follow symbolic links below the roots.
    pub follow_links: bool,
    /// How much to find out about each entry.
    pub detail: Detail,
    /// Read every entry's extended attributes (with [`Detail::Everything`]).
    pub xattrs: bool,
    /// Walk in the order of the disk as far as inode numbers tell it: each directory's
    /// subdirectories are listed lowest inode first, so that on a spinning disk the walk moves
    /// the way the file system laid the directories out (in the order they were made, on most
    /// file systems) instead of in the order of names' hashes.
    pub inode_order: bool,
    /// The job's own filter, asked after the exclusion globs.
    pub filter: Option<Arc<dyn EntryFilter>>,
    pub(crate) excludes: GlobSet,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_depth: None,
            one_file_system: false,
            follow_links: false,
            detail: Detail::Files,
            xattrs: false,
            inode_order: false,
            filter: None,
            excludes: GlobSet::empty(),
        }
    }
}

impl WalkOptions {
    /// Set the exclusion globs; each is matched against the path below the root and the name.
    pub fn with_excludes<I, S>(mut self, patterns: I) -> Result<Self, WalkOptionsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut builder = GlobSetBuilder::new();
        for p in patterns {
            let p = p.as_ref();
            let glob = Glob::new(p)
                .map_err(|source| WalkOptionsError::BadGlob { pattern: p.to_owned(), source })?;
            builder.add(glob);
        }
        self.excludes = builder.build().map_err(|source| WalkOptionsError::BadGlob {
            pattern: String::from("<set>"),
            source,
        })?;
        Ok(self)
    }

    /// True when some exclusion glob is set (so the walk must build relative paths).
    pub fn has_excludes(&self) -> bool {
        !self.excludes.is_empty()
    }

    /// True when the entry named `name` at `relative` (path below its root) is excluded.
    pub fn excluded(&self, relative: &[u8], name: &[u8]) -> bool {
        !self.excludes.is_empty()
            && (self.excludes.is_match(Path::new(OsStr::from_bytes(name)))
                || self.excludes.is_match(Path::new(OsStr::from_bytes(relative))))
    }

    /// True when entries at `depth` below a root (1 = directly inside it) are kept.
    pub fn depth_wanted(&self, depth: u32) -> bool {
        self.max_depth.is_none_or(|max| depth <= max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_name_or_relative_path() {
        let s = WalkOptions::default().with_excludes(["*.tmp", "build/cache"]).unwrap();
        assert!(s.excluded(b"a/b/x.tmp", b"x.tmp"));
        assert!(s.excluded(b"build/cache", b"cache"));
        assert!(!s.excluded(b"other/cache", b"cache"));
        assert!(!s.excluded(b"a/x.txt", b"x.txt"));
    }

    #[test]
    fn bad_glob_is_reported_with_its_pattern() {
        let err = WalkOptions::default().with_excludes(["a[b"]).unwrap_err();
        assert!(err.to_string().contains("a[b"), "{err}");
    }

    #[test]
    fn depth_limit() {
        let s = WalkOptions { max_depth: Some(1), ..WalkOptions::default() };
        assert!(s.depth_wanted(1));
        assert!(!s.depth_wanted(2));
        assert!(WalkOptions::default().depth_wanted(1000));
    }
}
