//! Which entries of SRC and DST a run looks at, decided for each listed entry before the walk
//! examines it ([`dedup_scan::EntryFilter`]): the include and exclude rules ([`crate::filter`]),
//! applied to both trees alike, a `--backup-dir` below DST, left out on both sides (as rsync's
//! documentation tells its users to exclude it) so that it is neither mirrored into nor deleted,
//! and so are the `--log` file and the `--link-dest` directory there; and the `--files-from`
//! list, which limits SRC's side; and which directories the walk enters.

use dedup_scan::{EntryFilter, EntryKind};

use crate::files_from::FileList;
use crate::filter::{Filter, FilterRule, PatternError};

/// The entries a run leaves out.
#[derive(Debug)]
pub struct Selection {
    rules: Filter,
    /// The backup directory's path below DST.
    backup_dir: Option<Vec<u8>>,
    /// Other paths below DST that are no part of the mirror: the `--log` file and the
    /// `--link-dest` directory, where they lie in DST.
    kept: Vec<Vec<u8>>,
    /// The `--files-from` list.
    files: Option<FileList>,
}

impl Selection {
    /// The selection of `rules`, of the backup directory at `backup_dir` below DST and of the
    /// list `files`; `None` when it leaves nothing out (the walk then asks nothing).
    pub fn new(
        rules: &[FilterRule],
        backup_dir: Option<&[u8]>,
        kept: Vec<Vec<u8>>,
        files: Option<FileList>,
    ) -> Result<Option<Selection>, PatternError> {
        let rules = Filter::new(rules)?;
        let backup_dir = backup_dir.map(<[u8]>::to_vec);
        let any = !rules.is_empty() || backup_dir.is_some() || !kept.is_empty() || files.is_some();
        Ok(any.then_some(Selection { rules, backup_dir, kept, files }))
    }

    /// The `--files-from` list.
    pub fn files(&self) -> Option<&FileList> {
        self.files.as_ref()
    }

    /// True when the walk enters the directory at `rel` (below SRC, or below DST with
    /// `dst_side`).
    pub fn enters(&self, dst_side: bool, rel: &[u8]) -> bool {
        self.files.as_ref().is_none_or(|f| f.enters(dst_side, rel))
    }
}

impl EntryFilter for Selection {
    fn leaves_out(&self, root: u32, rel: &[u8], _name: &[u8], kind: Option<EntryKind>) -> bool {
        if self.backup_dir.as_deref() == Some(rel) || self.kept.iter().any(|k| k == rel) {
            return true;
        }
        if let (0, Some(files)) = (root, &self.files) {
            let listed = match kind {
                Some(kind) => files.keeps(rel, kind == EntryKind::Dir),
                None => files.keeps(rel, true) || files.keeps(rel, false),
            };
            if !listed {
                return true;
            }
        }
        match kind {
            Some(kind) => self.rules.excludes(rel, kind == EntryKind::Dir),
            // Could not be examined: left out (its problem unreported) if it would be as
            // either, as rsync does.
            None => self.rules.excludes(rel, true) || self.rules.excludes(rel, false),
        }
    }
}
