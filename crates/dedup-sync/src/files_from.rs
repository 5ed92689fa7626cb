//! `--files-from`: a run limited to a list of paths below SRC, as rsync reads one. Each listed
//! entry is mirrored with the directories leading to it (their metadata from SRC); a listed
//! directory is made but not entered, unless it is listed with a trailing `/` (then its
//! immediate entries are mirrored too) or the run is recursive (`-r`: everything below it). A
//! leading `/` is dropped and `.` and `..` resolved within SRC (`../a` is `a`); `.` names SRC
//! itself. `--delete` works only in directories whose whole contents are mirrored: a directory
//! listed with `-r` and everything below it, or one listed with a trailing `/`; an unlisted
//! sibling of a listed file is never deleted, moved or renamed away. A listed path SRC does not
//! have is an error of the run (reported, exit 1, and so no deletions), as in rsync.

use std::collections::HashSet;
use std::path::Path;

use dedup_core::{Observer, Problem, ProblemKind};

use crate::rel_path::{join, split, under};
use crate::tree::Walked;
use crate::unread::Unread;

/// What the user listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesFromOptions {
    /// The entries as read, one path each.
    pub paths: Vec<Vec<u8>>,
    /// `-r`: listed directories are mirrored with everything below them.
    pub recursive: bool,
}

/// A list of paths, resolved.
#[derive(Debug, Default)]
pub struct FileList {
    /// Listed paths below SRC (empty: SRC itself).
    listed: HashSet<Vec<u8>>,
    /// Directories above a listed path (made, and entered).
    above: HashSet<Vec<u8>>,
    /// Directories listed with a trailing `/`: their entries are mirrored.
    contents: HashSet<Vec<u8>>,
    recursive: bool,
}

/// One listed entry as a path below SRC (empty for SRC itself), and whether it ended with `/`.
pub fn resolve(entry: &[u8]) -> (Vec<u8>, bool) {
    let contents = entry.ends_with(b"/") || entry.ends_with(b"/.");
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in entry.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    (parts.join(&b'/'), contents)
}

impl FileList {
    /// The list of `options`.
    pub fn new(options: &FilesFromOptions) -> FileList {
        let mut list = FileList { recursive: options.recursive, ..FileList::default() };
        for entry in &options.paths {
            let (rel, contents) = resolve(entry);
            let mut up = rel.as_slice();
            while !up.is_empty() {
                up = split(up).0;
                list.above.insert(up.to_vec());
            }
            if contents {
                list.contents.insert(rel.clone());
            }
            list.listed.insert(rel);
        }
        list
    }

    /// True when the SRC entry at `rel` is part of the run (before the include and exclude
    /// rules).
    pub fn keeps(&self, rel: &[u8], is_dir: bool) -> bool {
        self.listed.contains(rel)
            || (is_dir && self.above.contains(rel))
            || self.contents.contains(split(rel).0)
            || (self.recursive && self.below_listed(rel))
    }

    /// True when the directory at `rel` is entered: on SRC's side when something inside it is
    /// part of the run, on DST's also when it may be deleted (its parent is mirrored whole).
    pub fn enters(&self, dst_side: bool, rel: &[u8]) -> bool {
        rel.is_empty()
            || self.above.contains(rel)
            || self.complete(rel)
            || (dst_side && self.complete(split(rel).0))
    }

    /// True when the whole contents of the directory at `rel` are mirrored, so that `--delete`
    /// removes there what SRC does not have.
    pub fn complete(&self, rel: &[u8]) -> bool {
        self.contents.contains(rel)
            || (self.recursive && (self.listed.contains(rel) || self.below_listed(rel)))
    }

    /// True when a directory above `rel` is listed.
    fn below_listed(&self, rel: &[u8]) -> bool {
        let mut up = rel;
        while !up.is_empty() {
            up = split(up).0;
            if self.listed.contains(up) {
                return true;
            }
        }
        false
    }

    /// Report each listed path SRC does not have (below `src`) as a source part not read.
    pub fn report_missing(&self, walked: &mut Walked, src: &Path, observer: &dyn Observer) {
        let missing = self.missing(walked);
        if missing.is_empty() {
            return;
        }
        let mut unread = walked.unread.paths().to_vec();
        for rel in missing {
            let why = "listed in --files-from, but not in SRC";
            let e = std::io::Error::new(std::io::ErrorKind::NotFound, why);
            observer.problem(Problem::error(under(src, &rel), ProblemKind::Io(e)));
            walked.src_errors += 1;
            unread.push(rel);
        }
        walked.unread = Unread::new(unread);
    }

    /// The listed paths (or the directories on the way to them) the walk found missing in a
    /// listed SRC directory, or standing there as something else than a directory.
    fn missing(&self, walked: &Walked) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for path in &self.listed {
            let mut at: Vec<u8> = Vec::new();
            for name in path.split(|&b| b == b'/').filter(|n| !n.is_empty()) {
                let Some(dir) = walked.src.dir(&at) else { break };
                let here = join(&at, name);
                let left_out = dir.excluded.iter().find(|(n, _)| n == name).map(|(_, kind)| *kind);
                // The list itself leaves out a non-directory where its path needs a directory
                // (a symlink to one included): that path is not in SRC, whatever the rules say.
                let not_dir = |k: Option<dedup_scan::EntryKind>| {
                    k.is_some_and(|k| k != dedup_scan::EntryKind::Dir)
                };
                match dir.entry(name) {
                    _ if here != *path && left_out.is_some_and(not_dir) => {
                        out.push(here);
                        break;
                    }
                    _ if left_out.is_some() => break,
                    None => {
                        out.push(here);
                        break;
                    }
                    Some(e) if here != *path && e.kind != dedup_scan::EntryKind::Dir => {
                        out.push(here);
                        break;
                    }
                    Some(_) => at = here,
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(paths: &[&str], recursive: bool) -> FileList {
        let paths = paths.iter().map(|p| p.as_bytes().to_vec()).collect();
        FileList::new(&FilesFromOptions { paths, recursive })
    }

    #[test]
    fn entries_resolve_within_src() {
        assert_eq!(resolve(b"/usr/bin"), (b"usr/bin".to_vec(), false));
        assert_eq!(resolve(b"../foo"), (b"foo".to_vec(), false));
        assert_eq!(resolve(b"a/./b/../c/"), (b"a/c".to_vec(), true));
        assert_eq!(resolve(b"."), (Vec::new(), false));
        assert_eq!(resolve(b"./"), (Vec::new(), true));
        assert_eq!(resolve(b"a/."), (b"a".to_vec(), true));
    }

    #[test]
    fn listed_entries_their_parents_and_what_a_slash_or_r_adds() {
        let l = list(&["a/b/file", "c/", "d"], false);
        assert!(l.keeps(b"a", true) && l.keeps(b"a/b", true) && l.keeps(b"a/b/file", false));
        assert!(!l.keeps(b"a", false), "a file where a parent directory is wanted");
        assert!(!l.keeps(b"a/other", false) && !l.keeps(b"a/b/other", false));
        assert!(l.keeps(b"c", true) && l.keeps(b"c/x", false) && l.keeps(b"c/sub", true));
        assert!(!l.keeps(b"c/sub/y", false), "a slash adds the entries, not their contents");
        assert!(l.keeps(b"d", true) && !l.keeps(b"d/x", false));
        assert!(l.enters(false, b"a/b") && l.enters(false, b"c") && !l.enters(false, b"d"));
        assert!(!l.enters(false, b"c/sub") && l.enters(true, b"c/sub"));
        assert!(l.complete(b"c") && !l.complete(b"a") && !l.complete(b"") && !l.complete(b"d"));
        let r = list(&["d", "e/f"], true);
        assert!(r.keeps(b"d/x/y", false) && r.enters(false, b"d/x") && r.complete(b"d/x"));
        assert!(!r.keeps(b"e/g", false) && !r.complete(b"e"));
        let everything = list(&["."], true);
        assert!(everything.keeps(b"a/b", false) && everything.complete(b""));
    }
}
