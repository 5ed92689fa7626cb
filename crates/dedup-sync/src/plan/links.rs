//! Hard links within the source: the first path of each inode (in plan order) is its group's
//! leader and is copied like any file; every other path becomes a hard link to the leader's
//! destination. A follower is up to date when its destination is the leader's destination inode
//! and the leader itself stays.

use std::collections::HashMap;

use dedup_core::FileId;
use dedup_scan::Metadata;

/// The group's first path, and the destination inode it keeps (`None` when it is written anew
/// or not there yet).
#[derive(Debug, Clone)]
pub struct Leader {
    /// Its path below SRC and DST.
    pub rel: Vec<u8>,
    /// The destination inode at its path once the run is done, when that is the one walked.
    pub dst: Option<FileId>,
}

/// Leaders of the source's hard-link groups, by source inode.
#[derive(Debug, Default)]
pub struct Leaders {
    by_inode: HashMap<FileId, Leader>,
}

impl Leaders {
    /// The leader of the group of a source file with more than one link, when `rel` is not the
    /// first path of its group; `None` for the first path (which becomes the leader, with
    /// `dst` the destination inode it keeps) and for files with one link.
    pub fn follow(&mut self, src: &Metadata, rel: &[u8], dst: Option<FileId>) -> Option<Leader> {
        if src.nlink < 2 {
            return None;
        }
        match self.by_inode.get(&src.id()) {
            Some(leader) => Some(leader.clone()),
            None => {
                self.by_inode.insert(src.id(), Leader { rel: rel.to_vec(), dst });
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_scan::EntryKind;

    fn meta(ino: u64, nlink: u64) -> Metadata {
        Metadata {
            kind: EntryKind::File,
            mode: 0o644,
            uid: 0,
            gid: 0,
            size: 1,
            blocks: 0,
            nlink,
            dev: 1,
            ino,
            rdev: 0,
            atime_ns: 0,
            mtime_ns: 0,
            ctime_ns: 0,
        }
    }

    #[test]
    fn the_first_path_of_an_inode_leads_and_the_others_follow_it() {
        let mut l = Leaders::default();
        let kept = Some(FileId { dev: 9, ino: 90 });
        assert!(l.follow(&meta(5, 2), b"a", kept).is_none());
        let f = l.follow(&meta(5, 2), b"b", None).unwrap();
        assert_eq!((f.rel.as_slice(), f.dst), (&b"a"[..], kept));
        assert!(l.follow(&meta(6, 1), b"c", None).is_none());
        assert!(l.follow(&meta(6, 1), b"d", None).is_none(), "one link: never a follower");
    }
}
