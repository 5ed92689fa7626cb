//! Which entries of SRC and DST a run looks at, decided for each listed entry before the walk
//! examines it ([`dedup_scan::EntryFilter`]): the include and exclude rules ([`crate::filter`]),
//! applied to both trees alike.

use dedup_scan::{EntryFilter, EntryKind};

use crate::filter::{Filter, FilterRule, PatternError};

/// The entries a run leaves out.
#[derive(Debug)]
pub struct Selection {
    rules: Filter,
}

impl Selection {
    /// The selection of `rules`; `None` when it leaves nothing out (the walk then asks nothing).
    pub fn new(rules: &[FilterRule]) -> Result<Option<Selection>, PatternError> {
        let rules = Filter::new(rules)?;
        Ok((!rules.is_empty()).then_some(Selection { rules }))
    }
}

impl EntryFilter for Selection {
    fn leaves_out(&self, _root: u32, rel: &[u8], _name: &[u8], kind: Option<EntryKind>) -> bool {
        match kind {
            Some(kind) => self.rules.excludes(rel, kind == EntryKind::Dir),
            // Could not be examined: left out (its problem unreported) if it would be as
            // either, as rsync does.
            None => self.rules.excludes(rel, true) || self.rules.excludes(rel, false),
        }
    }
}
