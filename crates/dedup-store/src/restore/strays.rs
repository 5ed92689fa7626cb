//! A restore killed before it finished (`kill -9`, a power cut) leaves its files in flight under
//! our temporary names (`.dedup-new.<hex>`, `.dedup-tmp.<hex>`). The next restore into the same
//! directory removes them, as the next sync does, whether or not it was asked to `--delete`:
//! only names of exactly our form that hold what we would have left there (see
//! `dedup_fs::check_stray`), and never a name the snapshot itself has.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use super::levels::State;
use super::walk::Restorer;
use crate::format::Node;

impl Restorer<'_> {
    /// Removes our temporary names from the directory at the top of the stack, when it existed
    /// before this run (a directory it created holds none).
    pub(super) fn remove_strays(&mut self, nodes: &[Node]) {
        if self.options.dry_run {
            return;
        }
        let Some(level) = self.levels.last().filter(|l| !l.created) else { return };
        let State::Open(dir) = &level.state else { return };
        let dir = Arc::clone(dir);
        // An unlistable directory was already named by whatever failed in it; its strays wait.
        let Ok(names) = dedup_fs::entry_names(&dir) else { return };
        for name in names {
            let name = OsStr::from_bytes(&name);
            if !dedup_fs::is_temp_name(name)
                || nodes.binary_search_by(|n| n.name.as_slice().cmp(name.as_bytes())).is_ok()
            {
                continue;
            }
            let Ok(dir) = dir.try_clone() else { continue };
            let entry = dedup_fs::Entry { dir, name: name.to_owned() };
            let removed = dedup_fs::check_stray_at(&entry)
                .and_then(|()| dedup_fs::remove_stray(&entry).map(drop));
            // A name of our form holding something we never leave there is not ours: it stays.
            let Err(err) = removed else { continue };
            if !err.is_not_found() && !matches!(err, dedup_fs::FsError::NotOurs(_)) {
                let mut rel = self.rel.clone();
                if !rel.is_empty() {
                    rel.push(b'/');
                }
                rel.extend_from_slice(name.as_bytes());
                let path = self.path_of(&rel);
                let why = format!("cannot remove this temporary file of an interrupted run: {err}");
                self.problem(&path, why);
            }
        }
    }
}
