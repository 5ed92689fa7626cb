//! Which entries of SRC and DST a run looks at, decided for each listed entry before the walk
//! examines it ([`dedup_scan::EntryFilter`]): the include and exclude rules ([`crate::filter`]),
//! applied to both trees alike, and a `--backup-dir` below DST, left out on both sides (as rsync's
//! documentation tells its users to exclude it) so that it is neither mirrored into nor deleted.

use dedup_scan::{EntryFilter, EntryKind};

use crate::filter::{Filter, FilterRule, PatternError};

/// The entries a run leaves out.
#[derive(Debug)]
pub struct Selection {
    rules: Filter,
    /// The backup directory's path below DST.
    backup_dir: Option<Vec<u8>>,
}

impl Selection {
    /// The selection of `rules` and of the backup directory at `backup_dir` below DST; `None`
    /// when it leaves nothing out (the walk then asks nothing).
    pub fn new(
        rules: &[FilterRule],
        backup_dir: Option<&[u8]>,
    ) -> Result<Option<Selection>, PatternError> {
        let rules = Filter::new(rules)?;
        let backup_dir = backup_dir.map(<[u8]>::to_vec);
        Ok((!rules.is_empty() || backup_dir.is_some()).then_some(Selection { rules, backup_dir }))
    }
}

impl EntryFilter for Selection {
    fn leaves_out(&self, _root: u32, rel: &[u8], _name: &[u8], kind: Option<EntryKind>) -> bool {
        if self.backup_dir.as_deref() == Some(rel) {
            return true;
        }
        match kind {
            Some(kind) => self.rules.excludes(rel, kind == EntryKind::Dir),
            // Could not be examined: left out (its problem unreported) if it would be as
            // either, as rsync does.
            None => self.rules.excludes(rel, true) || self.rules.excludes(rel, false),
        }
    }
}
