//! One include or exclude pattern, matched against an entry's path below the root of the
//! transfer as rsync matches it: a pattern with no `/` (a trailing one aside) and no `**` is
//! matched against the last name only; one with a `/` inside against as many trailing names as
//! it has parts; a leading `/` anchors it at the root; one with `**` and no leading `/` or `**`
//! is tried at the start and after every `/`; a trailing `/` limits it to directories, and a
//! trailing `/***` matches the directory as well as everything in it. A pattern with none of
//! `*?[` is compared as it is (a backslash is then literal).

use super::wildcard::{Wildcard, WildcardError};

/// How the pattern is compared.
#[derive(Debug, Clone)]
enum Body {
    /// Byte for byte.
    Literal(Vec<u8>),
    /// As a wildcard.
    Wild(Wildcard),
}

/// Where in the path a pattern is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    /// Against the whole text.
    Whole,
    /// Against the last N names.
    Last(usize),
    /// At the start and after every `/`.
    AnySlash,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    body: Body,
    /// Matched against the last name only.
    name_only: bool,
    /// Directories only (a trailing `/`).
    dirs_only: bool,
    /// Starts with `**`: the path is matched as if it began with a `/`.
    leading_any: bool,
    /// Ends with `***`: a directory is matched as if its path ended with a `/`.
    trailing_all: bool,
    at: Where,
}

impl Pattern {
    /// Compile `pattern` as rsync reads an include or exclude rule.
    pub fn new(pattern: &[u8]) -> Result<Pattern, WildcardError> {
        let mut p = pattern;
        let dirs_only = p.len() > 1 && p.ends_with(b"/");
        if dirs_only {
            p = &p[..p.len() - 1];
        }
        let slashes = p.iter().filter(|&&b| b == b'/').count();
        let wild = p.iter().any(|b| b"*?[".contains(b));
        let any_run = wild && p.windows(2).any(|w| w == b"**");
        let leading_any = any_run && p.starts_with(b"**");
        let trailing_all = any_run && p.ends_with(b"***");
        let anchored = p.starts_with(b"/");
        let body_bytes = if anchored { &p[1..] } else { p };
        let at = if !anchored && slashes > 0 && !any_run {
            Where::Last(slashes + 1)
        } else if !anchored && any_run && !leading_any {
            Where::AnySlash
        } else {
            Where::Whole
        };
        let body = if wild {
            Body::Wild(Wildcard::new(body_bytes)?)
        } else {
            Body::Literal(body_bytes.to_vec())
        };
        Ok(Pattern {
            body,
            name_only: slashes == 0 && !any_run,
            dirs_only,
            leading_any,
            trailing_all,
            at,
        })
    }

    /// True when the entry at `rel` (its path below the root, never empty) matches; `is_dir`
    /// says whether it is a directory.
    pub fn matches(&self, rel: &[u8], is_dir: bool) -> bool {
        if rel.is_empty() || (self.dirs_only && !is_dir) {
            return false;
        }
        let name =
            if self.name_only { rel.rsplit(|&b| b == b'/').next().unwrap_or(rel) } else { rel };
        let extra = self.leading_any || (is_dir && self.trailing_all);
        if !extra {
            return self.matches_text(name);
        }
        let mut text = Vec::with_capacity(name.len() + 2);
        if self.leading_any {
            text.push(b'/');
        }
        text.extend_from_slice(name);
        if is_dir && self.trailing_all {
            text.push(b'/');
        }
        self.matches_text(&text)
    }

    fn matches_text(&self, text: &[u8]) -> bool {
        match self.at {
            Where::Whole => self.body_matches(text),
            Where::Last(n) => last_names(text, n).is_some_and(|t| self.body_matches(t)),
            Where::AnySlash => {
                self.body_matches(text)
                    || text
                        .iter()
                        .enumerate()
                        .any(|(i, &b)| b == b'/' && self.body_matches(&text[i + 1..]))
            }
        }
    }

    fn body_matches(&self, text: &[u8]) -> bool {
        match &self.body {
            Body::Wild(w) => w.matches(text),
            Body::Literal(l) => l == text,
        }
    }
}

/// The last `n` slash-separated names of `text`, when it has that many.
fn last_names(text: &[u8], n: usize) -> Option<&[u8]> {
    let mut seen = 0;
    for (i, &b) in text.iter().enumerate().rev() {
        if b == b'/' {
            seen += 1;
            if seen == n {
                return Some(&text[i + 1..]);
            }
        }
    }
    (seen + 1 == n).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(p: &str, rel: &str, is_dir: bool) -> bool {
        Pattern::new(p.as_bytes()).unwrap().matches(rel.as_bytes(), is_dir)
    }

    #[test]
    fn a_pattern_without_a_slash_matches_the_last_name_at_any_depth() {
        assert!(hit("*.o", "a/b/x.o", false));
        assert!(hit("core", "a/core", false));
        assert!(!hit("core", "a/core.1", false));
        assert!(!hit("a", "a/b", false), "a name, not a prefix");
    }

    #[test]
    fn a_pattern_with_slashes_matches_as_many_trailing_names() {
        assert!(hit("a/b", "a/b", false));
        assert!(hit("a/b", "x/a/b", false));
        assert!(!hit("a/b", "xa/b", false));
        assert!(hit("foo/*/bar", "z/foo/q/bar", true));
        assert!(!hit("foo/*/bar", "foo/q/r/bar", true));
    }

    #[test]
    fn a_leading_slash_anchors_at_the_root() {
        assert!(hit("/a", "a", false));
        assert!(!hit("/a", "x/a", false));
        assert!(hit("/b/*.tmp", "b/x.tmp", false));
        assert!(!hit("/b/*.tmp", "b/c/x.tmp", false));
        assert!(hit("/foo/**/bar", "foo/x/y/bar", false));
        assert!(!hit("/foo/**/bar", "foo/bar", false));
    }

    #[test]
    fn double_stars_and_the_trailing_triple_star() {
        assert!(hit("**/x", "x", false), "a leading ** also matches at the root");
        assert!(hit("**/x", "a/b/x", false));
        assert!(hit("a/**", "z/a/b/c", false), "tried after every slash");
        assert!(!hit("a/**", "z/a", true));
        assert!(hit("a/***", "z/a", true), "the directory itself");
        assert!(hit("a/***", "a/b/c", false));
        assert!(!hit("a/***", "a", false), "only a directory of that name");
    }

    #[test]
    fn a_trailing_slash_matches_directories_only() {
        assert!(hit("cache/", "x/cache", true));
        assert!(!hit("cache/", "x/cache", false));
        assert!(hit("*/", "a/b", true));
        assert!(hit("/", "a", false) == hit("/", "a", true), "a lone slash stays a pattern");
    }

    #[test]
    fn a_backslash_is_literal_without_wildcards() {
        assert!(hit("a\\b", "a\\b", false));
        assert!(hit("a\\b*", "ab", false));
    }
}
