//! The parts of SRC a run could not read: an entry that could not be examined, a directory that
//! could not be opened or listed to its end (everything below it). What SRC holds there is
//! unknown, so the destination's entries at or below those paths are neither deleted nor
//! renamed away, and the run's exit status says that something was not read. The walk's
//! problems name the paths; [`Unread`] answers "is this path, or something below it, unknown?".

use crate::rel_path::within;

/// Source paths (below SRC, `b""` for SRC itself) that could not be read, sorted, none lying
/// below another.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Unread {
    paths: Vec<Vec<u8>>,
}

impl Unread {
    /// The set of `paths` (in any order, repeated or nested).
    pub fn new(mut paths: Vec<Vec<u8>>) -> Unread {
        paths.sort();
        paths.dedup();
        // Sorted, a path's ancestors come before it: keep those not below one already kept.
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(paths.len());
        for p in paths {
            if !kept.last().is_some_and(|k| within(&p, k)) {
                kept.push(p);
            }
        }
        Unread { paths: kept }
    }

    /// True when every source part was read.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The paths, sorted.
    pub fn paths(&self) -> &[Vec<u8>] {
        &self.paths
    }

    /// True when `rel` is an unread path or lies below one.
    pub fn covers(&self, rel: &[u8]) -> bool {
        if self.paths.is_empty() {
            return false;
        }
        let mut at = 0;
        loop {
            // `rel` itself and each of its ancestors, shortest first.
            let end = rel[at..].iter().position(|&b| b == b'/').map_or(rel.len(), |i| at + i);
            if self.paths.binary_search_by(|p| p.as_slice().cmp(&rel[..end])).is_ok()
                || self.paths.first().is_some_and(Vec::is_empty)
            {
                return true;
            }
            if end == rel.len() {
                return false;
            }
            at = end + 1;
        }
    }

    /// True when `rel` is an unread path, lies below one, or holds one below it.
    pub fn touches(&self, rel: &[u8]) -> bool {
        if self.covers(rel) {
            return true;
        }
        let start = self.paths.partition_point(|p| p.as_slice() < rel);
        self.paths[start..].iter().take_while(|p| p.starts_with(rel)).any(|p| within(p, rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> Unread {
        Unread::new(paths.iter().map(|p| p.as_bytes().to_vec()).collect())
    }

    #[test]
    fn a_path_is_covered_by_itself_and_its_ancestors_only() {
        let u = set(&["a/b", "c", "a/b/deeper", "c"]);
        assert_eq!(u.paths().len(), 2, "nested and repeated paths are kept once");
        for yes in ["a/b", "a/b/x", "a/b/x/y", "c", "c/z"] {
            assert!(u.covers(yes.as_bytes()), "{yes}");
        }
        for no in ["a", "a/bc", "a/b-x", "b", "cc", ""] {
            assert!(!u.covers(no.as_bytes()), "{no}");
        }
        assert!(set(&[""]).covers(b"anything/at/all"), "SRC itself unread covers everything");
        assert!(!Unread::default().covers(b""));
    }

    #[test]
    fn a_directory_touches_what_lies_below_it_on_a_component_boundary() {
        let u = set(&["a/b-x", "a/b/c", "d"]);
        assert!(u.touches(b"a"));
        assert!(u.touches(b"a/b"));
        assert!(u.touches(b""), "the root holds every unread path");
        assert!(u.touches(b"d/e"), "below an unread path");
        assert!(!u.touches(b"a/bb"));
        assert!(!u.touches(b"a/b-"));
        assert!(!Unread::default().touches(b""));
    }
}
