//! Where a path lives: which root argument it was found under, and whether it lies in a
//! `--reference` directory (compared after resolving symlinks and `..`, so `~/A` and `./A` match).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The roots of a report and the reference directories, resolved once.
#[derive(Debug)]
pub struct Places {
    roots: Vec<PathBuf>,
    references: Vec<PathBuf>,
    resolved: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
}

impl Places {
    /// `roots` as written in the report; `references` must exist (they are resolved now).
    pub fn new(roots: &[PathBuf], references: &[PathBuf]) -> io::Result<Places> {
        let references = references
            .iter()
            .map(|r| {
                r.canonicalize().map_err(|e| {
                    io::Error::new(e.kind(), format!("reference {}: {e}", r.display()))
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Places { roots: roots.to_vec(), references, resolved: Mutex::default() })
    }

    /// The roots, as written in the report: every path acted on lies below one of them.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// True when reference directories were given.
    pub fn has_references(&self) -> bool {
        !self.references.is_empty()
    }

    /// Index of the first root that contains `path` (the walk keeps a path under the earliest
    /// root that reaches it); `roots.len()` when none does.
    pub fn root_of(&self, path: &Path) -> usize {
        self.roots.iter().position(|r| path.starts_with(r)).unwrap_or(self.roots.len())
    }

    /// The part of `path` below its root, for the depth rules.
    pub fn depth(&self, path: &Path) -> usize {
        let root = self.roots.get(self.root_of(path));
        let below = root.and_then(|r| path.strip_prefix(r).ok()).unwrap_or(path);
        below.components().count()
    }

    /// True when `path` lies inside a reference directory (or is a reference itself).
    pub fn is_reference(&self, path: &Path) -> bool {
        if self.references.is_empty() {
            return false;
        }
        match self.resolve(path) {
            Some(real) => self.references.iter().any(|r| real.starts_with(r)),
            // Cannot be resolved: treat as a reference, so it is never changed.
            None => true,
        }
    }

    /// The absolute path of `path` with its directory resolved (the last name is kept as it is,
    /// so a symlink at the end is not followed).
    pub fn resolve(&self, path: &Path) -> Option<PathBuf> {
        let name = path.file_name()?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut cache = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        let dir = cache.entry(parent.clone()).or_insert_with(|| parent.canonicalize().ok());
        dir.as_ref().map(|d| d.join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_containing_root_wins() {
        let p = Places::new(&["a/sub".into(), "a".into()], &[]).unwrap();
        assert_eq!(p.root_of(Path::new("a/sub/x")), 0);
        assert_eq!(p.root_of(Path::new("a/x")), 1);
        assert_eq!(p.root_of(Path::new("b/x")), 2);
        assert_eq!(p.depth(Path::new("a/x/y/z")), 3);
        // "a/subway" is not below "a/sub": components are compared, not bytes.
        assert_eq!(p.root_of(Path::new("a/subway/x")), 1);
    }

    #[test]
    fn references_match_after_resolving() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("ref/d")).unwrap();
        std::fs::create_dir_all(tmp.path().join("other")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("ref"), tmp.path().join("alias")).unwrap();
        let p = Places::new(&[], &[tmp.path().join("ref")]).unwrap();
        assert!(p.is_reference(&tmp.path().join("ref/d/f")));
        assert!(p.is_reference(&tmp.path().join("alias/f")));
        assert!(!p.is_reference(&tmp.path().join("other/f")));
        assert!(!p.is_reference(&tmp.path().join("refx")));
    }
}
