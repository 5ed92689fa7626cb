//! What a directory holds besides what the finder keeps as nodes. Two directories that hold the
//! same files but differ in an empty file, a symlink or an excluded entry are not duplicates of
//! each other. The walk recorded those entries ([`crate::tree::Other`]); for the directories that
//! look duplicated they are compared too: empty files and symlinks (by target, read now) take
//! part, anything else (special files, files outside the size bounds, excluded non-empty
//! entries) makes the directory's contents unknown.

use std::os::unix::ffi::{OsStrExt, OsStringExt};

use dedup_scan::NodeId;

use crate::tree::{Other, Tree};

/// An entry the walk did not keep.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Extra {
    /// An empty regular file.
    EmptyFile,
    /// A symbolic link with this target.
    Symlink(Vec<u8>),
}

/// The entries of `dir` that the tree does not keep, sorted by name; `None` when the directory
/// holds something whose content is unknown, or a symlink's target cannot be read.
pub(crate) fn extras(tree: &Tree, dir: NodeId) -> Option<Vec<(Vec<u8>, Extra)>> {
    let Some(others) = tree.others(dir) else { return Some(Vec::new()) };
    let others = others.as_ref()?;
    let path = tree.arena.path(dir);
    let mut out = Vec::with_capacity(others.len());
    for (name, other) in others {
        let extra = match other {
            Other::EmptyFile => Extra::EmptyFile,
            Other::Symlink => {
                let target = std::fs::read_link(path.join(std::ffi::OsStr::from_bytes(name)));
                Extra::Symlink(target.ok()?.into_os_string().into_vec())
            }
        };
        out.push((name.clone(), extra));
    }
    out.sort();
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use dedup_core::Progress;
    use dedup_scan::io::{Concurrency, IoScheduler};

    use super::*;
    use crate::selection::Selection;
    use crate::tree::walk_tree;
    use crate::tuning::PhysicalOrder;

    fn walked(root: &std::path::Path) -> Tree {
        let io = IoScheduler::new(Concurrency::Fixed(2));
        let (roots, order) = ([root.to_path_buf()], PhysicalOrder::Measured);
        walk_tree(&roots, &Selection::default(), order, &io, &(), &Progress::default())
    }

    fn dir_node(tree: &Tree, path: &std::path::Path) -> NodeId {
        (0..tree.arena.len())
            .map(NodeId::from_index)
            .find(|&n| tree.arena.path(n) == path)
            .expect("the directory was walked")
    }

    #[test]
    fn empty_files_and_symlinks_are_extras_others_make_it_unknown() {
        let d = tempfile::tempdir().unwrap();
        let sub: PathBuf = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("kept"), b"x").unwrap();
        std::fs::write(sub.join("empty"), b"").unwrap();
        std::os::unix::fs::symlink("kept", sub.join("link")).unwrap();
        let tree = walked(d.path());
        assert_eq!(
            extras(&tree, dir_node(&tree, &sub)).unwrap(),
            [
                (b"empty".to_vec(), Extra::EmptyFile),
                (b"link".to_vec(), Extra::Symlink(b"kept".to_vec()))
            ]
        );
        // A directory holding nothing but kept entries has no extras.
        assert_eq!(extras(&tree, dir_node(&tree, d.path())), Some(Vec::new()));
        // A special file's content is unknown, and so is the directory's.
        rustix::fs::mknodat(
            rustix::fs::CWD,
            sub.join("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let tree = walked(d.path());
        assert_eq!(extras(&tree, dir_node(&tree, &sub)), None);
    }
}
