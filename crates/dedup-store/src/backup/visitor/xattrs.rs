//! The extended attributes of a backed-up entry: the parent snapshot's when the entry's status
//! proves them unchanged, else read from the file system, and a read that fails named.

use std::io;
use std::path::PathBuf;

use super::parent::RACY_NS;
use super::BackupVisitor;
use crate::backup::problems;
use crate::format::Node;

impl BackupVisitor<'_, '_> {
    /// The extended attributes of the entry at `path`: the parent snapshot's when the entry's
    /// status proves them unchanged (setting an attribute changes the ctime, which cannot be set
    /// back; the same racily-clean margin as for contents), else read from the file system. An
    /// unchanged backup then costs no `listxattr` per entry.
    pub(super) fn xattrs(
        &self,
        node: &Node,
        before: Option<&Node>,
        known: bool,
        read: impl FnOnce() -> io::Result<Vec<dedup_scan::Xattr>>,
        path: impl FnOnce() -> PathBuf,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        match self.kept_xattrs(node, before, known) {
            Some(kept) => kept,
            None => self.read_xattrs(read, path),
        }
    }

    /// The parent snapshot's attributes of `node`, when its status (`known`) proves them
    /// unchanged.
    pub(super) fn kept_xattrs(
        &self,
        node: &Node,
        before: Option<&Node>,
        known: bool,
    ) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
        let (before, parent_time) = (before.filter(|_| known)?, self.parent_time?);
        let same = before.kind == node.kind
            && before.ctime == node.ctime
            && before.ino == node.ino
            && node.ctime + RACY_NS <= parent_time;
        same.then(|| before.xattrs.clone())
    }

    /// The attributes `read` finds; none, with an error naming `path`, if it fails (the
    /// snapshot is then incomplete: it would claim the entry has none). An entry gone meanwhile
    /// is not reported here: whatever comes next for it (its open, its listing) says so.
    pub(super) fn read_xattrs(
        &self,
        read: impl FnOnce() -> io::Result<Vec<dedup_scan::Xattr>>,
        path: impl FnOnce() -> PathBuf,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        match read() {
            Ok(found) => found.into_iter().map(|x| (x.name, x.value)).collect(),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(err) => {
                self.report(problems::xattrs_unread(path(), &err));
                Vec::new()
            }
        }
    }
}
