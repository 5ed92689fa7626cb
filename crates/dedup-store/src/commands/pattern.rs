//! The patterns of `find` and `rewrite --exclude`: globs matched against an entry's name or its
//! whole path in the snapshot (with its leading `/`, as `ls` shows it), as restic's `find` and
//! `backup --exclude` match. `*` and `?` match any characters, `/` included; `[…]` classes;
//! `**` any number of directories. A pattern that is not valid UTF-8 is compared byte for byte.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

/// A set of patterns.
#[derive(Debug, Clone)]
pub struct Patterns {
    globs: GlobSet,
    /// Patterns that are not UTF-8: equal to the name or the path.
    literal: Vec<Vec<u8>>,
    ignore_case: bool,
}

impl Patterns {
    /// The patterns `given`; with `ignore_case` letters match in either case.
    pub fn new(given: &[Vec<u8>], ignore_case: bool) -> Result<Patterns> {
        let mut globs = GlobSetBuilder::new();
        let mut literal = Vec::new();
        for raw in given {
            match std::str::from_utf8(raw) {
                Ok(text) => {
                    let glob = GlobBuilder::new(text)
                        .case_insensitive(ignore_case)
                        .backslash_escape(true)
                        .build()
                        .map_err(|e| Error::Invalid(format!("invalid pattern {text:?}: {e}")))?;
                    globs.add(glob);
                }
                Err(_) if ignore_case => literal.push(raw.to_ascii_lowercase()),
                Err(_) => literal.push(raw.clone()),
            }
        }
        let globs = globs.build().map_err(|e| Error::Invalid(format!("invalid patterns: {e}")))?;
        Ok(Patterns { globs, literal, ignore_case })
    }

    /// Whether there is no pattern at all.
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty() && self.literal.is_empty()
    }

    /// Whether the entry named `name` at `path` (from the snapshot's root, with a leading `/`)
    /// matches a pattern.
    pub fn matches(&self, path: &[u8], name: &[u8]) -> bool {
        let as_path = |b: &[u8]| Path::new(OsStr::from_bytes(b)).to_path_buf();
        if self.globs.is_match(as_path(name)) || self.globs.is_match(as_path(path)) {
            return true;
        }
        let fold = |b: &[u8]| if self.ignore_case { b.to_ascii_lowercase() } else { b.to_vec() };
        let (name, path) = (fold(name), fold(path));
        self.literal.iter().any(|l| *l == name || *l == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(given: &[&[u8]], ignore_case: bool) -> Patterns {
        Patterns::new(&given.iter().map(|p| p.to_vec()).collect::<Vec<_>>(), ignore_case).unwrap()
    }

    #[test]
    fn a_pattern_matches_the_name_or_the_whole_path() {
        let p = patterns(&[b"*.key", b"/home/me/notes.txt", b"/srv/**/secret"], false);
        assert!(p.matches(b"/a/b/id.key", b"id.key"));
        assert!(p.matches(b"/home/me/notes.txt", b"notes.txt"));
        assert!(!p.matches(b"/home/you/notes.txt", b"notes.txt"));
        assert!(p.matches(b"/srv/x/y/secret", b"secret"));
        assert!(!p.matches(b"/a/ID.KEY", b"ID.KEY"));
        assert!(patterns(&[b"*.key"], true).matches(b"/a/ID.KEY", b"ID.KEY"));
    }

    #[test]
    fn a_pattern_that_is_not_utf8_is_compared_as_bytes() {
        let p = patterns(&[b"caf\xe9"], false);
        assert!(p.matches(b"/x/caf\xe9", b"caf\xe9"));
        assert!(!p.matches(b"/x/cafe", b"cafe"));
        assert!(patterns(&[b"CAF\xe9"], true).matches(b"/x/caf\xe9", b"caf\xe9"));
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let err = Patterns::new(&[b"a[b".to_vec()], false).unwrap_err().to_string();
        assert!(err.contains("a[b"), "{err}");
    }
}
