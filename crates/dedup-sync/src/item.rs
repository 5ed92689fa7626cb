//! What rsync's `--itemize-changes` shows of a change, found from the plan: the kind of entry,
//! whether it is new at its name, and which of its attributes the change sets. The dry run and
//! the real run take it from the same planned entries, so both print the same lines.

use dedup_scan::{Entry, EntryKind};

use crate::compare::Rules;
use crate::plan::{Action, Before, DirPlan, DirState, HardLink, Op};

/// The attributes of an entry that differ between SRC and DST (rsync's `cstpogx` letters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Differs {
    /// Content (a regular file whose size and time agree but whose bytes do not), a symlink's
    /// target, a device's number.
    pub content: bool,
    /// A regular file's size.
    pub size: bool,
    /// The modification time.
    pub time: bool,
    /// The permission bits.
    pub perms: bool,
    /// The owner (compared as root only).
    pub owner: bool,
    /// The group (compared as root only).
    pub group: bool,
    /// The extended attributes (those this process can set).
    pub xattrs: bool,
}

/// One change as rsync itemizes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Item {
    /// The kind of the entry changed (`None` where the plan does not know it: an excluded entry
    /// deleted with `--delete-excluded`, a temporary name of ours).
    pub entry: Option<EntryKind>,
    /// Nothing of its kind stood at its name before.
    pub new: bool,
    /// What differs, for an entry that is not new.
    pub differs: Differs,
    /// A symlink's target, as made.
    pub target: Option<Vec<u8>>,
}

impl Item {
    /// An entry of kind `entry`, nothing more known (deletions, links).
    pub fn of_kind(entry: Option<EntryKind>, new: bool) -> Item {
        Item { entry, new, ..Item::default() }
    }

    /// The hard link `link` makes.
    pub fn of_link(link: &HardLink) -> Item {
        Item::of_kind(Some(link.kind), link.before == Before::Nothing)
    }

    /// The change `action` makes.
    pub fn of_action(action: &Action, rules: &Rules<'_>) -> Item {
        let src = &action.src;
        let target = (src.kind == EntryKind::Symlink).then(|| src.target.clone()).flatten();
        let old = action.old.as_ref().filter(|o| o.kind == src.kind);
        let moved = matches!(action.op, Op::Rename { .. } | Op::CloneFrom { .. });
        let new = old.is_none() || moved || action.before == Before::EmptyDir;
        let writes = action.op == Op::Create;
        let differs = match old {
            Some(old) if !new => differs(src, old, rules, writes),
            _ => Differs::default(),
        };
        Item { entry: Some(src.kind), new, differs, target }
    }

    /// A directory created, renamed to its place, or given its metadata.
    pub fn of_dir(d: &DirPlan, rules: &Rules<'_>) -> Item {
        let new = !matches!(d.state, DirState::Exists);
        let differs = match (&d.old, new) {
            (Some(old), false) => differs(&d.src, old, rules, false),
            _ => Differs::default(),
        };
        Item { entry: Some(EntryKind::Dir), new, differs, target: None }
    }
}

/// What differs between source entry `src` and destination entry `dst` of the same kind; `writes`:
/// the change writes the entry's content.
fn differs(src: &Entry, dst: &Entry, rules: &Rules<'_>, writes: bool) -> Differs {
    let (Some(s), Some(d)) = (src.meta.as_ref(), dst.meta.as_ref()) else {
        return Differs::default();
    };
    let link = s.kind == EntryKind::Symlink;
    let file = s.kind == EntryKind::File;
    let size = file && s.size != d.size;
    let time = !rules.same_time(s.mtime_ns, d.mtime_ns);
    let content = match s.kind {
        EntryKind::File => writes && !size && !time,
        EntryKind::Symlink => src.target != dst.target,
        EntryKind::CharDevice | EntryKind::BlockDevice => s.rdev != d.rdev,
        _ => false,
    };
    Differs {
        content,
        size,
        time,
        perms: !link && rules.mode_for(s) != d.mode,
        owner: rules.owner && s.uid != d.uid,
        group: rules.owner && s.gid != d.gid,
        xattrs: !link && !rules.same_xattrs(&src.xattrs, &dst.xattrs),
    }
}
