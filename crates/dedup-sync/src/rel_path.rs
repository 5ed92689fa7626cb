//! Paths below a tree's root as the sync job carries them: bytes, `/`-separated, the root
//! being the empty path. Both trees, the plan and the execution speak in these, so they sit
//! below all of them.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `parent/name`, or `name` at the root.
pub fn join(parent: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(parent.len() + 1 + name.len());
    if !parent.is_empty() {
        p.extend_from_slice(parent);
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// True when `a` is `b` or lies below it (`b` empty: the root, which holds everything).
pub fn within(a: &[u8], b: &[u8]) -> bool {
    a.starts_with(b) && (a.len() == b.len() || b.is_empty() || a[b.len()] == b'/')
}

/// `root/rel` as a path.
pub fn under(root: &Path, rel: &[u8]) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(OsStr::from_bytes(rel))
    }
}

/// The parent part and the last name of a relative path.
pub fn split(rel: &[u8]) -> (&[u8], &[u8]) {
    match rel.iter().rposition(|&b| b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (&[], rel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_split() {
        assert_eq!(join(b"", b"a"), b"a");
        assert_eq!(join(b"a/b", b"c"), b"a/b/c");
        assert_eq!(split(b"a/b/c"), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(split(b"c"), (&b""[..], &b"c"[..]));
    }

    #[test]
    fn within_respects_component_boundaries() {
        assert!(within(b"a/b", b"a"));
        assert!(within(b"a", b"a"));
        assert!(!within(b"ab", b"a"));
        assert!(within(b"a", b""));
    }
}
