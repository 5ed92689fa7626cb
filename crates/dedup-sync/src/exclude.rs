//! `--exclude` patterns as rsync users write them. A plain glob is matched by the walker against
//! an entry's name and its path below the root. Two forms of rsync's are matched here, on the
//! walk's listings: a pattern starting with `/` is anchored at the root of the transfer
//! (matched against the path below SRC or DST only, `*` not crossing a `/`, `**` crossing
//! them), and a pattern ending with `/` matches directories only. Both sides are filtered by the
//! same patterns, so an excluded path is left out of SRC and kept as it is in DST.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_scan::{EntryKind, WalkOptionsError};
use globset::{GlobBuilder, GlobMatcher};

/// One pattern of rsync's forms.
#[derive(Debug, Clone)]
struct Rule {
    glob: GlobMatcher,
    /// Matched against the path below the root only (a leading `/`).
    anchored: bool,
    /// Matches directories only (a trailing `/`).
    dirs_only: bool,
}

/// The exclusion patterns of a run, split between the walker's and ours.
#[derive(Debug, Clone, Default)]
pub struct Excludes {
    plain: Vec<String>,
    rules: Vec<Rule>,
}

impl Excludes {
    /// Sort `patterns` into the walker's plain globs and the anchored or directory-only ones.
    pub fn parse(patterns: &[String]) -> Result<Excludes, WalkOptionsError> {
        let mut out = Excludes::default();
        for p in patterns {
            let anchored = p.starts_with('/');
            let dirs_only = p.len() > 1 && p.ends_with('/');
            if !anchored && !dirs_only {
                out.plain.push(p.clone());
                continue;
            }
            let body = p.trim_start_matches('/').trim_end_matches('/');
            let glob = GlobBuilder::new(body)
                .literal_separator(anchored)
                .build()
                .map_err(|source| WalkOptionsError::BadGlob { pattern: p.clone(), source })?;
            out.rules.push(Rule { glob: glob.compile_matcher(), anchored, dirs_only });
        }
        Ok(out)
    }

    /// The plain globs, for the walker.
    pub fn plain(&self) -> &[String] {
        &self.plain
    }

    /// True when some pattern is matched here rather than by the walker.
    pub fn has_rules(&self) -> bool {
        !self.rules.is_empty()
    }

    /// True when the entry `name` of kind `kind` at `rel` (its path below the root) is left out
    /// by an anchored or directory-only pattern.
    pub fn excluded(&self, rel: &[u8], name: &[u8], kind: EntryKind) -> bool {
        self.rules.iter().any(|r| {
            if r.dirs_only && kind != EntryKind::Dir {
                return false;
            }
            r.glob.is_match(Path::new(OsStr::from_bytes(rel)))
                || (!r.anchored && r.glob.is_match(Path::new(OsStr::from_bytes(name))))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &[&str]) -> Excludes {
        Excludes::parse(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_leading_slash_anchors_the_pattern_at_the_root() {
        let e = parse(&["/a", "/b/*.tmp"]);
        assert!(e.plain().is_empty());
        assert!(e.excluded(b"a", b"a", EntryKind::File));
        assert!(e.excluded(b"a", b"a", EntryKind::Dir));
        assert!(!e.excluded(b"x/a", b"a", EntryKind::File), "anchored: not below the root");
        assert!(e.excluded(b"b/x.tmp", b"x.tmp", EntryKind::File));
        assert!(!e.excluded(b"b/c/x.tmp", b"x.tmp", EntryKind::File), "* stops at a /");
        assert!(!e.excluded(b"x.tmp", b"x.tmp", EntryKind::File));
    }

    #[test]
    fn a_trailing_slash_matches_directories_only_and_plain_globs_go_to_the_walker() {
        let e = parse(&["cache/", "/build/", "*.o"]);
        assert_eq!(e.plain(), ["*.o"]);
        assert!(e.excluded(b"x/cache", b"cache", EntryKind::Dir));
        assert!(!e.excluded(b"x/cache", b"cache", EntryKind::File));
        assert!(e.excluded(b"build", b"build", EntryKind::Dir));
        assert!(!e.excluded(b"x/build", b"build", EntryKind::Dir));
        assert!(!parse(&["*.o"]).has_rules());
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let err = Excludes::parse(&["/a[b".to_string()]).unwrap_err();
        assert!(err.to_string().contains("/a[b"), "{err}");
    }
}
