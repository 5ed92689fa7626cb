//! What a restore does at a name of the target that already holds something: restic's
//! `--overwrite always|if-changed|if-newer|never` decides whether the snapshot's entry replaces
//! it, and only `--delete` lets a directory of the user's go (with everything in it). A
//! directory meeting a directory is merged: the snapshot's entries go into it.

use rustix::fs::{FileType, Stat};

use crate::format::{Node, NodeKind};

/// When an entry of the snapshot replaces what the target holds at its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overwrite {
    /// Always replace it.
    Always,
    /// Replace it unless it looks the same: a regular file of the snapshot's size and mtime, a
    /// symlink with the same text, a FIFO, a device with the same number.
    IfChanged,
    /// Replace it only when the snapshot's entry has a later modification time.
    IfNewer,
    /// Never replace anything: only names the target lacks are restored.
    #[default]
    Never,
}

impl Overwrite {
    /// The option's value as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Overwrite::Always => "always",
            Overwrite::IfChanged => "if-changed",
            Overwrite::IfNewer => "if-newer",
            Overwrite::Never => "never",
        }
    }
}

/// What stands at a name, as `lstat` saw it (a symlink is itself, never what it points to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existing {
    /// Its kind.
    pub kind: FileType,
    /// Its length.
    pub size: u64,
    /// Its modification time, in ns since the epoch.
    pub mtime: i64,
    /// A device's number.
    pub rdev: u64,
    /// Its device and inode.
    pub id: (u64, u64),
}

impl Existing {
    /// From the `lstat` of the name.
    pub fn of(st: &Stat) -> Existing {
        Existing {
            kind: FileType::from_raw_mode(st.st_mode),
            size: st.st_size as u64,
            mtime: st
                .st_mtime
                .saturating_mul(1_000_000_000)
                .saturating_add(st.st_mtime_nsec as i64),
            rdev: st.st_rdev,
            id: (st.st_dev, st.st_ino),
        }
    }

    /// Whether it is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == FileType::Directory
    }
}

/// What to do at one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Nothing is there: create the entry.
    Create,
    /// A directory is there and the snapshot has one: restore into it.
    Merge,
    /// Something other than a directory is there: put the entry in its place.
    Replace,
    /// A directory is there and the snapshot has another kind: remove it, with everything
    /// below it, and create the entry (only with `--delete`).
    ReplaceDir,
    /// Leave what is there, as the overwrite policy says.
    Keep,
    /// A directory is there, the policy would replace it, but only `--delete` removes a
    /// directory: the entry is not restored.
    InTheWay,
}

/// The decision for `node` at a name holding `existing`; `link_text` reads the text of the
/// symlink there (asked only when `if-changed` compares two symlinks).
pub fn decide(
    policy: Overwrite,
    delete: bool,
    node: &Node,
    existing: Option<&Existing>,
    link_text: impl FnOnce() -> Option<Vec<u8>>,
) -> Decision {
    let Some(existing) = existing else { return Decision::Create };
    if node.kind == NodeKind::Dir && existing.is_dir() {
        return Decision::Merge;
    }
    let replace = match policy {
        Overwrite::Always => true,
        Overwrite::IfChanged => !looks_same(node, existing, link_text),
        Overwrite::IfNewer => node.mtime > existing.mtime,
        Overwrite::Never => false,
    };
    match (replace, existing.is_dir()) {
        (false, _) => Decision::Keep,
        (true, false) => Decision::Replace,
        (true, true) if delete => Decision::ReplaceDir,
        (true, true) => Decision::InTheWay,
    }
}

/// Whether `existing` passes for `node` without reading a file's bytes.
fn looks_same(
    node: &Node,
    existing: &Existing,
    link_text: impl FnOnce() -> Option<Vec<u8>>,
) -> bool {
    match (node.kind, existing.kind) {
        (NodeKind::File, FileType::RegularFile) => {
            existing.size == node.size && existing.mtime == node.mtime
        }
        (NodeKind::Symlink, FileType::Symlink) => link_text().is_some_and(|t| t == node.target),
        (NodeKind::Fifo, FileType::Fifo) => true,
        (NodeKind::CharDevice, FileType::CharacterDevice)
        | (NodeKind::BlockDevice, FileType::BlockDevice) => existing.rdev == node.rdev,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: NodeKind, size: u64, mtime: i64) -> Node {
        Node { name: b"n".to_vec(), kind, size, mtime, target: b"t".to_vec(), ..Node::default() }
    }

    fn there(kind: FileType, size: u64, mtime: i64) -> Existing {
        Existing { kind, size, mtime, rdev: 0, id: (0, 0) }
    }

    const ALL: [Overwrite; 4] =
        [Overwrite::Always, Overwrite::IfChanged, Overwrite::IfNewer, Overwrite::Never];

    #[test]
    fn a_free_name_is_created_and_directories_merge_whatever_the_policy() {
        let dir = node(NodeKind::Dir, 0, 5);
        for policy in ALL {
            for delete in [false, true] {
                let d = |n: &Node, e| decide(policy, delete, n, e, || None);
                assert_eq!(d(&dir, None), Decision::Create);
                let user_dir = there(FileType::Directory, 0, 99);
                assert_eq!(d(&dir, Some(&user_dir)), Decision::Merge, "{policy:?}");
            }
        }
    }

    #[test]
    fn each_policy_replaces_a_file_as_restic_does() {
        let file = node(NodeKind::File, 10, 100);
        let same = there(FileType::RegularFile, 10, 100);
        let older = there(FileType::RegularFile, 10, 50);
        let newer = there(FileType::RegularFile, 11, 200);
        let d = |p, e: &Existing| decide(p, false, &file, Some(e), || None);
        assert_eq!(d(Overwrite::Always, &same), Decision::Replace);
        assert_eq!(d(Overwrite::IfChanged, &same), Decision::Keep);
        assert_eq!(d(Overwrite::IfChanged, &older), Decision::Replace);
        assert_eq!(d(Overwrite::IfNewer, &older), Decision::Replace);
        assert_eq!(d(Overwrite::IfNewer, &same), Decision::Keep);
        assert_eq!(d(Overwrite::IfNewer, &newer), Decision::Keep);
        for e in [&same, &older, &newer] {
            assert_eq!(d(Overwrite::Never, e), Decision::Keep);
        }
    }

    #[test]
    fn a_users_directory_goes_only_with_delete() {
        let file = node(NodeKind::File, 10, 100);
        let user_dir = there(FileType::Directory, 4096, 50);
        for policy in [Overwrite::Always, Overwrite::IfChanged, Overwrite::IfNewer] {
            assert_eq!(decide(policy, false, &file, Some(&user_dir), || None), Decision::InTheWay);
            assert_eq!(decide(policy, true, &file, Some(&user_dir), || None), Decision::ReplaceDir);
        }
        for delete in [false, true] {
            let d = decide(Overwrite::Never, delete, &file, Some(&user_dir), || None);
            assert_eq!(d, Decision::Keep);
        }
    }

    #[test]
    fn a_symlink_in_the_way_of_a_directory_is_replaced_or_kept_never_entered() {
        let dir = node(NodeKind::Dir, 0, 100);
        let link = there(FileType::Symlink, 8, 10);
        assert_eq!(decide(Overwrite::Always, false, &dir, Some(&link), || None), Decision::Replace);
        assert_eq!(decide(Overwrite::Never, true, &dir, Some(&link), || None), Decision::Keep);
        let same_link = node(NodeKind::Symlink, 1, 100);
        let text = || Some(b"t".to_vec());
        let d = decide(Overwrite::IfChanged, false, &same_link, Some(&link), text);
        assert_eq!(d, Decision::Keep);
        let other = || Some(b"elsewhere".to_vec());
        let d = decide(Overwrite::IfChanged, false, &same_link, Some(&link), other);
        assert_eq!(d, Decision::Replace);
    }
}
