//! `--link-dest DIR`: a file the run would copy that DIR holds unchanged (same kind, size,
//! modification time and metadata, by the same test as an up-to-date destination) becomes a
//! hard link to DIR's copy: rsync's idiom for snapshots that share unchanged files.

use dedup_scan::{Entry, EntryKind, Metadata};
use rustix::fs::{lstat, FileType};

use super::merge::Merged;
use super::{Context, Op};
use crate::compare::Verdict;
use crate::tree::{join, under};

/// Turn copies into links where DIR's copy is unchanged.
pub fn settle(cx: &Context<'_>, m: &mut Merged) {
    let Some(base) = cx.options.link_dest.as_deref() else { return };
    for dir in &mut m.plan.dirs {
        for action in &mut dir.actions {
            let Some(meta) = action.src.meta else { continue };
            if action.op != Op::Create || meta.kind != EntryKind::File || meta.nlink > 1 {
                continue;
            }
            let rel = join(&dir.rel, action.name());
            let Ok(st) = lstat(under(base, &rel)) else { continue };
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                continue;
            }
            let Some(theirs) = Metadata::from_stat(&st) else { continue };
            let entry = Entry {
                name: action.name().to_vec(),
                kind: EntryKind::File,
                followed: false,
                meta: Some(theirs),
                target: None,
                xattrs: Vec::new(),
            };
            // Its extended attributes are not read: a source file with some is copied.
            if cx.rules.compare(&action.src, &entry) == Verdict::Same {
                action.op = Op::LinkDest { from: rel };
            }
        }
    }
}
