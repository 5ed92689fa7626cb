//! The plan: every change the run will make, decided from the two walked trees before anything
//! is touched, so that `--dry-run` prints what a real run does and `--max-delete` can refuse
//! before the first change. Planning is a merge of each source directory with its destination
//! counterpart (the same path, or the directory it was renamed from), then three global steps:
//! renamed directories ([`dir_renames`]), moved files ([`moves`]) and what is deleted
//! ([`deletions`]).

mod deletions;
mod dir_renames;
pub mod link_dest;
mod links;
mod merge;
mod moves;

use std::path::Path;

use dedup_core::Observer;
use dedup_scan::{Entry, EntryKind};

use crate::backup::Backup;
use crate::compare::Rules;
use crate::files_from::FileList;
use crate::options::SyncOptions;
use crate::tree::Walked;

pub use link_dest::LinkDest;

/// What stands in the destination at a name before the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Nothing.
    Nothing,
    /// An entry of another kind than a directory: replaced by a rename over it, or removed.
    Entry(EntryKind),
    /// An empty directory: removed first.
    EmptyDir,
    /// A directory deleted for it (with `--delete`): the entry is made after the deletions.
    DeletedDir,
}

/// How a destination entry is made right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Write the content (a regular file) or make the entry anew (symlink, FIFO, device).
    Create,
    /// Set the metadata of an entry whose content is right.
    Meta,
    /// Rename the destination file at `from` (a path below DST, where it stands once the
    /// directory renames are done) to this name: the source file moved.
    Rename {
        /// Its path below DST.
        from: Vec<u8>,
    },
    /// Write the content by cloning the destination file at `from` (the moved file's old copy,
    /// kept since deletions were not asked for); copied from the source where cloning fails.
    CloneFrom {
        /// Its path below DST.
        from: Vec<u8>,
    },
    /// Hard-link the `--link-dest` copy at `from` (below that directory) here.
    LinkDest {
        /// Its path below the link-dest directory.
        from: Vec<u8>,
    },
}

/// One change to one entry of a directory.
#[derive(Debug, Clone)]
pub struct Action {
    /// The source entry (its name is the action's name in the directory), with the metadata to give the destination.
    pub src: Entry,
    /// The destination entry as walked, when one stands at the name.
    pub old: Option<Entry>,
    /// What is done.
    pub op: Op,
    /// What stands at the name before.
    pub before: Before,
}

impl Action {
    /// The entry's name in its directory.
    pub fn name(&self) -> &[u8] {
        &self.src.name
    }

    /// The kind of the destination entry the action puts another in place of, when it does
    /// (an empty directory aside): what a backup keeps.
    pub fn replaces(&self) -> Option<EntryKind> {
        match (self.before, &self.op) {
            (_, Op::Meta) => None,
            (Before::Entry(kind), _) => Some(kind),
            _ => None,
        }
    }
}

/// How a source directory's destination counterpart comes to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirState {
    /// It exists at the same path.
    Exists,
    /// It is created.
    Create,
    /// The destination directory at `from` (below DST) is renamed to it.
    Renamed {
        /// The old path below DST.
        from: Vec<u8>,
    },
}

/// Everything done in one directory.
#[derive(Debug, Clone)]
pub struct DirPlan {
    /// Its path below SRC and DST.
    pub rel: Vec<u8>,
    /// The source directory (name, metadata and extended attributes).
    pub src: Entry,
    /// The destination directory as walked (for a renamed one, at its old path).
    pub old: Option<Entry>,
    /// How it comes to exist.
    pub state: DirState,
    /// What stands at its path before (for a created one).
    pub before: Before,
    /// Its metadata must be set (created, or it differs).
    pub set_meta: bool,
    /// The source directory was listed; when not (unreadable, or another file system with
    /// `-x`), nothing below it is planned and its destination contents are left alone.
    pub listed: bool,
    /// Changes to its entries.
    pub actions: Vec<Action>,
}

/// A hard link within the source, made in the destination once every file is in place.
#[derive(Debug, Clone)]
pub struct HardLink {
    /// The path below DST to link.
    pub rel: Vec<u8>,
    /// The path below DST of the group's first file, copied or kept.
    pub leader: Vec<u8>,
    /// What stands at `rel` before.
    pub before: Before,
    /// The kind of the entries linked.
    pub kind: EntryKind,
}

/// An entry removed from the destination, with everything below it.
#[derive(Debug, Clone)]
pub struct Deletion {
    /// Its path below DST when deletions run.
    pub rel: Vec<u8>,
    /// Its kind, where known.
    pub kind: Option<EntryKind>,
    /// Entries removed, itself and everything below it counted.
    pub entries: u64,
}

/// An entry that cannot be made right, with the reason.
#[derive(Debug, Clone)]
pub struct Refused {
    /// Its path below DST.
    pub rel: Vec<u8>,
    /// Why.
    pub reason: &'static str,
}

/// Every change of a run, in the order of its phases.
#[derive(Debug, Default)]
pub struct Plan {
    /// Directories in path order (parents first) with the changes inside them.
    pub dirs: Vec<DirPlan>,
    /// Hard links within the source, made after every file is in place.
    pub links: Vec<HardLink>,
    /// Deletions (with `--delete`), after everything else.
    pub deletions: Vec<Deletion>,
    /// Our own temporary names left by an interrupted run, below DST.
    pub strays: Vec<Vec<u8>>,
    /// Entries that cannot be made right.
    pub refused: Vec<Refused>,
    /// Source entries examined (the root not counted).
    pub checked: u64,
    /// `--delete` was asked for but some source part could not be read: nothing is deleted or
    /// renamed away.
    pub deletions_skipped: bool,
    /// The deletions run before the copies, which need the room they free.
    pub delete_first: bool,
    /// What the run replaces or deletes is kept (`--backup`): each is moved there first.
    pub backup: bool,
}

impl Plan {
    /// Entries the deletions remove.
    pub fn deletion_count(&self) -> u64 {
        self.deletions.iter().map(|d| d.entries).sum()
    }

    /// True when the run has nothing to do.
    pub fn is_empty(&self) -> bool {
        self.dirs.iter().all(|d| d.state == DirState::Exists && !d.set_meta && d.actions.is_empty())
            && self.links.is_empty()
            && self.deletions.is_empty()
            && self.strays.is_empty()
    }
}

/// What planning works from.
pub struct Context<'a> {
    /// SRC as given.
    pub src_root: &'a Path,
    /// DST as given.
    pub dst_root: &'a Path,
    /// The settings.
    pub options: &'a SyncOptions,
    /// Entries the source no longer has are deleted or renamed away: `--delete`, and every
    /// source part was read (otherwise the plan is made as without it, and says so).
    pub deleting: bool,
    /// The up-to-date test.
    pub rules: &'a Rules<'a>,
    /// Where problems go.
    pub observer: &'a dyn Observer,
    /// The `--link-dest` directory, open.
    pub link_dest: Option<&'a LinkDest>,
    /// Where what the run replaces or deletes is kept (`--backup`).
    pub backup: Option<&'a Backup>,
    /// The `--files-from` list: only directories mirrored whole lose what SRC lacks.
    pub files: Option<&'a FileList>,
}

impl Context<'_> {
    /// True when the DST entry `name` at `rel` is a backup, never deleted.
    pub fn is_backup(&self, rel: &[u8], name: &[u8]) -> bool {
        self.backup.is_some_and(|b| b.protects(rel, name))
    }
}

/// Plan the run from the walked trees.
pub fn plan(cx: &Context<'_>, walked: &Walked) -> Plan {
    let kept = deletions::holding_excluded(cx, walked);
    let mut merged = merge::merge(cx, walked, kept);
    let mut found = deletions::settle(cx, walked, &mut merged);
    moves::settle(cx, &mut merged, &mut found);
    link_dest::settle(cx, &mut merged);
    let mut plan = merged.plan;
    found.finish(&mut plan);
    let mut dropped = merged.drop;
    dropped.sort_unstable();
    for (i, d) in plan.dirs.iter_mut().enumerate() {
        let mut a = 0;
        d.actions.retain(|_| {
            a += 1;
            dropped.binary_search(&(i, a - 1)).is_err()
        });
    }
    let mut strays: Vec<Vec<u8>> = walked
        .dst
        .dirs
        .iter()
        .flat_map(|(rel, d)| d.strays.iter().map(move |s| crate::rel_path::join(rel, s)))
        .collect();
    strays.sort();
    plan.strays = strays;
    plan.checked = walked.src.entry_count();
    plan.deletions_skipped = cx.options.delete && !cx.deleting;
    plan.backup = cx.backup.is_some();
    plan
}
