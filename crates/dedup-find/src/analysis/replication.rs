//! Listing files by their number of copies (fclones' "replication factor"): `--rf-over N` keeps
//! the groups with more than N copies, `--rf-under N` those with fewer, and then files without
//! any duplicate count too (one copy): `--unique` is `--rf-under 2`, "which files have no backup".

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use dedup_report::{Group, ReportFile};

use crate::tree::Tree;

use crate::analysis::content::Contents;
use crate::group_order::sort_groups;

/// Bounds on the number of copies of the files to list. Copies are distinct files (inodes), or
/// paths when hard links count as duplicates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Replication {
    /// List only files with more than this many copies.
    pub over: Option<u64>,
    /// List only files with fewer than this many copies (files without a duplicate included).
    pub under: Option<u64>,
}

impl Replication {
    /// True when a file with `copies` copies is listed.
    pub fn wants(&self, copies: u64) -> bool {
        self.over.is_none_or(|n| copies > n) && self.under.is_none_or(|n| copies < n)
    }

    /// True when bounds are set.
    pub fn is_set(&self) -> bool {
        self.over.is_some() || self.under.is_some()
    }

    /// True when files without duplicates are listed.
    pub fn wants_unique(&self) -> bool {
        self.under.is_some() && self.wants(1)
    }
}

/// Copies in a report group.
pub(crate) fn copies(group: &Group, hardlinks: bool) -> u64 {
    if hardlinks {
        return group.files.len() as u64;
    }
    let ids: HashSet<(u64, u64)> = group.files.iter().map(|f| (f.dev, f.ino)).collect();
    ids.len() as u64
}

/// Files the run had a problem with, and the sizes of those it had walked.
#[derive(Debug, Default)]
pub(crate) struct Troubled {
    /// Their paths.
    pub paths: HashSet<PathBuf>,
    /// Sizes of those that were walked: a file of such a size may have had them as copies.
    pub sizes: HashSet<u64>,
}

/// Every walked file in no group, one group of its paths per inode, in report order. Files the
/// run had a problem with are left out, and so are files of their size: nothing is known of
/// their copies. A directory entry reached twice (overlapping roots) is listed once, under the
/// earliest root.
pub(crate) fn unique_files(tree: &Tree, contents: &Contents, troubled: &Troubled) -> Vec<Group> {
    let mut lone: Vec<usize> = (0..tree.files.len())
        .filter(|&i| !contents.grouped(i))
        .filter(|&i| !troubled.sizes.contains(&tree.files[i].meta.size))
        .collect();
    lone.sort_unstable_by_key(|&i| (tree.files[i].meta.id, tree.files[i].root));
    let mut groups = Vec::new();
    for run in lone.chunk_by(|&a, &b| tree.files[a].meta.id == tree.files[b].meta.id) {
        let mut seen = HashSet::new();
        let mut files = Vec::with_capacity(run.len());
        let mut bad = false;
        for &i in run {
            let entry = &tree.files[i];
            let key = tree.entry_key(entry.node);
            if run.len() > 1 && key.0.is_some() && !seen.insert((key.0, key.1.to_vec())) {
                continue;
            }
            let path = tree.arena.path(entry.node);
            bad |= troubled.paths.contains(&path);
            let m = entry.meta;
            let file = ReportFile {
                path,
                dev: m.id.dev,
                ino: m.id.ino,
                mtime_ns: m.mtime_ns,
                ctime_ns: Some(m.ctime_ns),
            };
            files.push((entry.root, file));
        }
        if bad {
            continue;
        }
        files.sort_by(|a, b| {
            (a.0, a.1.path.as_os_str().as_bytes()).cmp(&(b.0, b.1.path.as_os_str().as_bytes()))
        });
        let size = tree.files[run[0]].meta.size;
        groups.push(Group { size, files: files.into_iter().map(|f| f.1).collect(), cached: false });
    }
    sort_groups(&mut groups);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testtree::{build_linked, groups};

    #[test]
    fn bounds_are_strict() {
        let r = Replication { over: Some(2), under: None };
        assert!(!r.wants(2) && r.wants(3));
        let r = Replication { over: None, under: Some(2) };
        assert!(r.wants(1) && !r.wants(2) && r.wants_unique());
        assert!(!Replication { over: Some(1), under: Some(5) }.wants_unique());
    }

    #[test]
    fn unique_files_are_those_in_no_group_with_all_their_names() {
        let mut t = build_linked(&[
            ("a", Some(5), None),
            ("b", Some(5), None),
            ("c", Some(7), Some(1)),
            ("d", Some(7), Some(1)),
            ("e", Some(9), None),
            ("f", Some(11), None),
        ]);
        let classes = groups(&mut t, false);
        let contents = Contents::new(&t, &classes);
        let troubled = Troubled {
            paths: [PathBuf::from("r/f")].into_iter().collect(),
            sizes: [9].into_iter().collect(),
        };
        let got: Vec<Vec<String>> = unique_files(&t, &contents, &troubled)
            .iter()
            .map(|g| g.files.iter().map(|f| f.path.display().to_string()).collect())
            .collect();
        // f had a problem; e has the size of a troubled file.
        assert_eq!(got, vec![vec!["r/c".to_string(), "r/d".into()]]);
    }
}
