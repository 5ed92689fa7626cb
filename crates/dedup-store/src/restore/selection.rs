//! `restore --include/--exclude`: which entries of the snapshot to restore. A pattern with a `/`
//! is a path below the restored node (a leading `/` optional, so a path as `ls` prints it
//! works); one without is a name at any depth. `*` and `?` stay within a name, `**` crosses
//! directories. An include picks the entry and everything below it; an exclude leaves out the
//! entry and everything below it, and wins. A pattern that is not UTF-8 is taken literally, byte
//! for byte. Directories on the way to an include are walked, not restored for themselves.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{GlobBuilder, GlobMatcher};

use super::Pick;
use crate::commands::trim_slashes;
use crate::error::{Error, Result};
use crate::format::{Node, NodeKind};

/// One `--include` or `--exclude`.
struct Pattern {
    /// As given, for messages.
    given: OsString,
    /// Matched against the whole path below the restored node (else against a name).
    anchored: bool,
    matcher: Matcher,
}

enum Matcher {
    /// A glob, and one glob for each of its components (to tell whether a directory may hold
    /// a match below it).
    Glob { whole: GlobMatcher, parts: Vec<Option<GlobMatcher>> },
    /// Bytes that are not UTF-8, compared as they are.
    Literal(Vec<u8>),
}

fn glob(text: &str) -> Result<GlobMatcher> {
    let glob = GlobBuilder::new(text).literal_separator(true).backslash_escape(true).build();
    let glob = glob.map_err(|e| Error::Invalid(format!("invalid pattern {text:?}: {e}")))?;
    Ok(glob.compile_matcher())
}

impl Pattern {
    fn new(raw: &OsStr) -> Result<Pattern> {
        let bytes = raw.as_bytes();
        let trimmed = trim_slashes(bytes);
        let anchored = bytes.contains(&b'/');
        let matcher = match std::str::from_utf8(trimmed) {
            Ok(text) => {
                let parts = text
                    .split('/')
                    .map(|part| if part == "**" { Ok(None) } else { glob(part).map(Some) })
                    .collect::<Result<_>>()?;
                Matcher::Glob { whole: glob(text)?, parts }
            }
            Err(_) => Matcher::Literal(trimmed.to_vec()),
        };
        Ok(Pattern { given: raw.to_owned(), anchored, matcher })
    }

    /// Whether the entry at `rel` (below the restored node) named `name` matches.
    fn matches(&self, rel: &[u8], name: &[u8]) -> bool {
        let subject = if self.anchored { rel } else { name };
        match &self.matcher {
            Matcher::Glob { whole, .. } => whole.is_match(Path::new(OsStr::from_bytes(subject))),
            Matcher::Literal(bytes) => bytes == subject,
        }
    }

    /// Whether the directory at `rel` may hold an entry that matches.
    fn may_hold(&self, rel: &[u8]) -> bool {
        if !self.anchored {
            return true;
        }
        let dirs: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
        match &self.matcher {
            Matcher::Literal(bytes) => {
                bytes.len() > rel.len() && bytes.starts_with(rel) && bytes[rel.len()] == b'/'
            }
            Matcher::Glob { parts, .. } => {
                for (i, dir) in dirs.iter().enumerate() {
                    match parts.get(i) {
                        // `**` matches any number of directories: anything may follow.
                        Some(None) => return true,
                        Some(Some(part)) if part.is_match(Path::new(OsStr::from_bytes(dir))) => {}
                        _ => return false,
                    }
                }
                parts.len() > dirs.len()
            }
        }
    }
}

/// The includes and excludes of a restore, and which includes matched something.
pub struct Selection {
    includes: Vec<Pattern>,
    excludes: Vec<Pattern>,
    matched: Vec<AtomicBool>,
}

impl Selection {
    /// The patterns of `--include` and `--exclude`.
    pub fn new(includes: &[OsString], excludes: &[OsString]) -> Result<Selection> {
        let parse = |list: &[OsString]| list.iter().map(|p| Pattern::new(p)).collect::<Result<_>>();
        let includes: Vec<Pattern> = parse(includes)?;
        let matched = includes.iter().map(|_| AtomicBool::new(false)).collect();
        Ok(Selection { includes, excludes: parse(excludes)?, matched })
    }

    /// Whether any pattern was given.
    pub fn active(&self) -> bool {
        !(self.includes.is_empty() && self.excludes.is_empty())
    }

    /// What to do with `node` at `rel`, `within` a directory already picked.
    pub fn pick(&self, rel: &[u8], node: &Node, within: bool) -> Pick {
        if self.excludes.iter().any(|p| p.matches(rel, &node.name)) {
            return Pick::Skip;
        }
        if self.includes.is_empty() || within {
            return Pick::Restore;
        }
        let mut picked = false;
        for (pattern, matched) in self.includes.iter().zip(&self.matched) {
            if pattern.matches(rel, &node.name) {
                matched.store(true, Ordering::Relaxed);
                picked = true;
            }
        }
        if picked {
            Pick::Restore
        } else if node.kind == NodeKind::Dir && self.includes.iter().any(|p| p.may_hold(rel)) {
            Pick::Enter
        } else {
            Pick::Skip
        }
    }

    /// The includes that matched nothing, as given.
    pub fn unmatched(&self) -> Vec<&OsStr> {
        self.includes
            .iter()
            .zip(&self.matched)
            .filter(|(_, m)| !m.load(Ordering::Relaxed))
            .map(|(p, _)| p.given.as_os_str())
            .collect()
    }

    /// Whether there are includes and none matched.
    pub fn nothing_matched(&self) -> bool {
        !self.includes.is_empty() && self.unmatched().len() == self.includes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &[u8], kind: NodeKind) -> Node {
        Node { name: name.to_vec(), kind, ..Node::default() }
    }

    fn sel(includes: &[&[u8]], excludes: &[&[u8]]) -> Selection {
        let os =
            |l: &[&[u8]]| l.iter().map(|b| OsStr::from_bytes(b).to_owned()).collect::<Vec<_>>();
        Selection::new(&os(includes), &os(excludes)).unwrap()
    }

    #[test]
    fn a_path_as_ls_prints_it_picks_the_entry_and_walks_only_the_way_to_it() {
        let s = sel(&[b"/home/me/docs"], &[]);
        let dir = |n: &[u8]| node(n, NodeKind::Dir);
        assert_eq!(s.pick(b"home", &dir(b"home"), false), Pick::Enter);
        assert_eq!(s.pick(b"etc", &dir(b"etc"), false), Pick::Skip);
        assert_eq!(s.pick(b"home/me", &dir(b"me"), false), Pick::Enter);
        assert_eq!(s.pick(b"home/you", &dir(b"you"), false), Pick::Skip);
        assert_eq!(s.pick(b"home/me/music", &dir(b"music"), false), Pick::Skip);
        assert!(s.nothing_matched(), "walking the way is no match");
        assert_eq!(s.pick(b"home/me/docs", &dir(b"docs"), false), Pick::Restore);
        assert_eq!(s.pick(b"home/me/docs/a", &node(b"a", NodeKind::File), true), Pick::Restore);
        assert!(s.unmatched().is_empty());
        assert_eq!(
            sel(&[b"home/me/docs"], &[]).pick(b"home/me/docs", &dir(b"docs"), false),
            Pick::Restore
        );
    }

    #[test]
    fn names_match_at_any_depth_and_excludes_win() {
        let s = sel(&[b"*.txt"], &[b"secret*"]);
        let f = |n: &[u8]| node(n, NodeKind::File);
        assert_eq!(s.pick(b"a/b/c.txt", &f(b"c.txt"), false), Pick::Restore);
        assert_eq!(s.pick(b"a/b/c.doc", &f(b"c.doc"), false), Pick::Skip);
        assert_eq!(s.pick(b"a", &node(b"a", NodeKind::Dir), false), Pick::Enter);
        assert_eq!(s.pick(b"a/secret.txt", &f(b"secret.txt"), false), Pick::Skip);
        assert_eq!(s.pick(b"x/secrets", &node(b"secrets", NodeKind::Dir), true), Pick::Skip);
        let star = sel(&[b"/a/*"], &[]);
        assert_eq!(star.pick(b"a/b", &f(b"b"), false), Pick::Restore);
        assert_eq!(star.pick(b"a/b/c", &f(b"c"), false), Pick::Skip, "* stays in a name");
        let deep = sel(&[b"/a/**/z"], &[]);
        assert_eq!(deep.pick(b"a/b/c", &node(b"c", NodeKind::Dir), false), Pick::Enter);
        assert_eq!(deep.pick(b"a/b/c/z", &f(b"z"), false), Pick::Restore);
    }

    #[test]
    fn bytes_that_are_not_utf8_match_literally_and_unmatched_includes_are_named() {
        let s = sel(&[b"/d\xff/f\xfe"], &[]);
        assert_eq!(s.pick(b"d\xff", &node(b"d\xff", NodeKind::Dir), false), Pick::Enter);
        assert_eq!(s.pick(b"d", &node(b"d", NodeKind::Dir), false), Pick::Skip);
        assert!(s.nothing_matched());
        assert_eq!(s.unmatched(), [OsStr::from_bytes(b"/d\xff/f\xfe")]);
        let f = node(b"f\xfe", NodeKind::File);
        assert_eq!(s.pick(b"d\xff/f\xfe", &f, false), Pick::Restore);
        assert!(!s.nothing_matched());
        assert!(!sel(&[], &[]).active() && sel(&[], &[b"x"]).active());
    }
}
