//! The walker's callbacks: a root, each directory's listing as it is read (entries left out by
//! the selection, nodes made, attributes kept or read, subdirectories handed back to the walk,
//! files routed), and the walk leaving a directory.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use dedup_scan::{EntryKind, Listing, Metadata, RootVisit, Visitor};

use super::dir_state::{DirState, Home};
use super::node::{last_name, node_of};
use super::{lock, BackupVisitor};
use crate::backup::bump;
use crate::backup::disk_order::{ListingAhead, ToRead};
use crate::backup::pipeline::FileStage;
use crate::format::{EntryView, NodeKind};

impl Visitor for BackupVisitor<'_, '_> {
    type Dir = Arc<DirState>;

    fn root(&self, root: &RootVisit<'_>) -> Option<Self::Dir> {
        let entry = root.entry?;
        let meta = entry.meta.as_ref()?;
        let index = root.index as usize;
        let mut parent = lock(&self.parent_roots).get(index).cloned().flatten();
        let (mut before, known) = match &mut parent {
            Some((node, known)) => (Some(node), *known),
            None => (None, false),
        };
        let mut node = node_of(&last_name(root.path), meta, Some(entry));
        let read = || dedup_scan::read_xattrs(root.path, true);
        node.xattrs =
            self.xattrs(&node, before.as_deref(), known, read, || root.path.to_path_buf());
        match node.kind {
            NodeKind::Dir => {
                bump(&self.dirs, 1);
                let root_dev = self.one_file_system.then_some(meta.dev);
                let state = DirState::new(node, Home::Root(index), before.as_deref(), root_dev);
                return Some(Arc::new(state));
            }
            NodeKind::File => {
                let open = || File::open(root.path);
                let shown = || root.path.to_path_buf();
                self.file(node, before.take(), known, open, shown, Home::Root(index), None);
                return None;
            }
            _ => bump(&self.others, 1),
        }
        lock(&self.found)[index] = Some(node);
        None
    }

    fn dir(&self, dir: &Self::Dir, listing: &Listing<'_>) -> Vec<(usize, Self::Dir)> {
        if self.failed() {
            return Vec::new();
        }
        dir.listed.store(true, Ordering::Release);
        // Room for every entry at once: grown by doubling as nodes arrive, a directory of tens
        // of thousands of entries would copy its nodes (about 240 bytes each) several times and
        // keep the abandoned copies' pages.
        lock(&dir.children).reserve_exact(listing.entries.len());
        {
            // The open directory's own stat is the fresher; its xattrs came with its entry.
            let mut own = lock(&dir.node);
            let old = std::mem::take(&mut *own);
            *own = node_of(&old.name, listing.meta, None);
            own.xattrs = old.xattrs;
        }
        // A parent tree of version 2 whose status tree is missing or damaged proves nothing
        // unchanged: its files are read again (safe), and the backup goes on.
        let before = dir
            .parent_tree
            .and_then(|id| self.parent_view(&id, dir.parent_status.as_ref()))
            .unwrap_or_default();
        let known = before.status_known();
        let mut subdirs = Vec::new();
        let mut nodes = Vec::new();
        let tags = self.selection.tags(listing.fd, listing.entries);
        let order = &self.stages.disk_order;
        // Only a device that may be asked in disk order pays for this pass over the listing
        // (a name search in the parent tree per file).
        let may_order = order.may_be_on(listing.meta.dev);
        let to_read = listing
            .entries
            .iter()
            .enumerate()
            .filter(|_| may_order)
            .filter(|(_, entry)| !self.selection.leaves_out(entry, &tags))
            .filter_map(|(index, entry)| {
                let meta = entry.meta.as_ref().filter(|m| m.kind == EntryKind::File)?;
                let proven = known && self.parent_time.is_some() && {
                    let found = before.find(&entry.name).and_then(|at| before.entry(at));
                    found.is_some_and(|b| looks_unchanged(&b, meta))
                };
                (meta.size > 0 && !entry.followed && !proven).then_some(ToRead {
                    index,
                    name: &entry.name,
                    size: meta.size,
                    ino: meta.ino,
                })
            })
            .collect();
        let mut ahead = ListingAhead::new(order, listing.meta.dev, listing.fd, to_read);
        for (i, entry) in listing.entries.iter().enumerate() {
            if self.selection.leaves_out(entry, &tags) {
                continue;
            }
            let Some(meta) = entry.meta.as_ref() else { continue };
            let mut node = node_of(&entry.name, meta, Some(entry));
            let mut previous = before.find(&entry.name).and_then(|at| before.node(at));
            let path = || listing.path.join(OsStr::from_bytes(&entry.name));
            let read = || match std::ffi::CString::new(entry.name.as_slice()) {
                Ok(name) => dedup_scan::read_xattrs_at(listing.fd, &name, path, entry.followed),
                Err(_) => dedup_scan::read_xattrs(&path(), entry.followed),
            };
            let kept = self.kept_xattrs(&node, previous.as_ref(), known);
            // A regular file to be read: its attributes are read through its descriptor.
            let by_fd = kept.is_none() && node.kind == NodeKind::File && !entry.followed;
            node.xattrs = match kept {
                Some(kept) => kept,
                None if by_fd => Vec::new(),
                None => self.read_xattrs(read, path),
            };
            match node.kind {
                NodeKind::Dir => {
                    bump(&self.dirs, 1);
                    let home = Home::Dir(Arc::clone(dir));
                    let state = DirState::new(node, home, previous.as_ref(), dir.root_dev);
                    subdirs.push((i, Arc::new(state)));
                    continue;
                }
                NodeKind::File => {
                    let shown = path;
                    let open = || match ahead.take(i) {
                        Some(file) => Ok(file),
                        None => {
                            dedup_scan::open_content_at(listing.fd, OsStr::from_bytes(&entry.name))
                        }
                    };
                    let home = Home::Dir(Arc::clone(dir));
                    let fallback: &dyn Fn() -> io::Result<Vec<dedup_scan::Xattr>> = &read;
                    let previous = previous.as_mut();
                    self.file(node, previous, known, open, shown, home, by_fd.then_some(fallback));
                    continue;
                }
                _ => bump(&self.others, 1),
            }
            nodes.push(self.encoded(&node));
        }
        lock(&dir.children).extend(nodes);
        subdirs
    }

    fn leave(&self, dir: Self::Dir) {
        self.release(dir);
    }
}

/// Whether the parent's `before` may prove the file `now` describes unchanged (its chunks are
/// then taken without a read, so it is not asked for ahead): the parent's own test
/// (`visitor::parent`) also checks the chunks are stored and the parent's time.
fn looks_unchanged(before: &EntryView<'_>, now: &Metadata) -> bool {
    before.kind == NodeKind::File
        && !before.incomplete
        && before.size == now.size
        && before.mtime == now.mtime_ns
        && before.ctime == now.ctime_ns
        && before.ino == now.ino
}
