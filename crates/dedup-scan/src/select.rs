//! Which files a walk keeps: size bounds, exclusion globs, depth, file-system boundaries, links.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};

/// A bad selection setting.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    /// An `--exclude` pattern that is not a valid glob.
    #[error("invalid exclude pattern {pattern:?}: {source}")]
    BadGlob {
        /// The pattern as given.
        pattern: String,
        /// Why globset rejected it.
        source: globset::Error,
    },
}

/// The user's choice of files.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Smallest size kept, in bytes.
    pub min_size: u64,
    /// Largest size kept, in bytes.
    pub max_size: u64,
    /// Keep empty files (they are never duplicates otherwise).
    pub include_empty: bool,
    /// Levels below a root directory to descend; 0 keeps only the roots themselves.
    pub max_depth: Option<u32>,
    /// Do not enter directories on another device than their root.
    pub one_file_system: bool,
    /// Follow symbolic links below the roots.
    pub follow_links: bool,
    excludes: GlobSet,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            min_size: 0,
            max_size: u64::MAX,
            include_empty: false,
            max_depth: None,
            one_file_system: false,
            follow_links: false,
            excludes: GlobSet::empty(),
        }
    }
}

impl Selection {
    /// Set the exclusion globs; each is matched against the path below the root and the name.
    pub fn with_excludes<I, S>(mut self, patterns: I) -> Result<Self, SelectionError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut builder = GlobSetBuilder::new();
        for p in patterns {
            let p = p.as_ref();
            let glob = Glob::new(p)
                .map_err(|source| SelectionError::BadGlob { pattern: p.to_owned(), source })?;
            builder.add(glob);
        }
        self.excludes = builder
            .build()
            .map_err(|source| SelectionError::BadGlob { pattern: String::from("<set>"), source })?;
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

    /// True when a regular file of this size is kept.
    pub fn size_wanted(&self, size: u64) -> bool {
        (size > 0 || self.include_empty) && size >= self.min_size && size <= self.max_size
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
    fn empty_files_only_on_request() {
        let s = Selection::default();
        assert!(!s.size_wanted(0));
        assert!(s.size_wanted(1));
        let s = Selection { include_empty: true, ..Selection::default() };
        assert!(s.size_wanted(0));
    }

    #[test]
    fn size_bounds_are_inclusive() {
        let s = Selection { min_size: 10, max_size: 20, ..Selection::default() };
        assert!(!s.size_wanted(9));
        assert!(s.size_wanted(10));
        assert!(s.size_wanted(20));
        assert!(!s.size_wanted(21));
    }

    #[test]
    fn globs_match_name_or_relative_path() {
        let s = Selection::default().with_excludes(["*.tmp", "build/cache"]).unwrap();
        assert!(s.excluded(b"a/b/x.tmp", b"x.tmp"));
        assert!(s.excluded(b"build/cache", b"cache"));
        assert!(!s.excluded(b"other/cache", b"cache"));
        assert!(!s.excluded(b"a/x.txt", b"x.txt"));
    }

    #[test]
    fn bad_glob_is_reported_with_its_pattern() {
        let err = Selection::default().with_excludes(["a[b"]).unwrap_err();
        assert!(err.to_string().contains("a[b"), "{err}");
    }

    #[test]
    fn depth_limit() {
        let s = Selection { max_depth: Some(1), ..Selection::default() };
        assert!(s.depth_wanted(1));
        assert!(!s.depth_wanted(2));
        assert!(Selection::default().depth_wanted(1000));
    }
}
