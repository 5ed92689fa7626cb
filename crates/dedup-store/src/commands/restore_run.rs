//! `restore` from start to end: the snapshot and path a `SNAPSHOT[:PATH]` names, the entries
//! the includes and excludes pick, the restore itself, the includes that matched nothing and,
//! when asked, the restored files read back. The binary prints what it returns.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::Node;
use crate::id::Id;
use crate::repo::{Repository, SnapshotFilter};
use crate::restore::{restore, verify, Events, Filter, Overwrite, RestoreOptions, RestoreSummary};
use crate::restore::{
    Protected, Selection, HOLDS_PASSWORD_FILE, HOLDS_REPOSITORY, IS_PASSWORD_FILE,
};
use dedup_core::text::quote_path;

/// What `dedup store restore` was asked to do.
pub struct RestoreRequest<'a> {
    /// `SNAPSHOT[:PATH]`: a snapshot (id prefix or `latest`) and, after the first `:`, the path
    /// in it to restore (any bytes; the root when absent).
    pub spec: &'a OsStr,
    /// Host and paths (`latest` is the newest they accept).
    pub filter: SnapshotFilter,
    /// `--include` patterns.
    pub includes: &'a [OsString],
    /// `--exclude` patterns.
    pub excludes: &'a [OsString],
    /// Where to restore.
    pub target: &'a Path,
    /// Whether an entry of the snapshot replaces what stands at its name.
    pub overwrite: Overwrite,
    /// Remove what the target holds that the snapshot does not.
    pub delete: bool,
    /// Decide and report every change, make none.
    pub dry_run: bool,
    /// Read the restored files back and compare them with the snapshot.
    pub verify: bool,
    /// The directory of the repository restored from, when it is on this machine: never
    /// written into, and never removed by `--delete` (nor a directory holding it).
    pub repository: Option<&'a Path>,
    /// The file the repository's password is read from, when one is named: never removed nor
    /// replaced (it may be the only copy of the key to every snapshot), nor a directory
    /// holding it.
    pub password_file: Option<&'a Path>,
}

/// What a restore did, and what went wrong after its entries were written.
#[derive(Debug)]
pub struct RestoreOutcome {
    /// The snapshot restored.
    pub id: Id,
    /// The counts of the restore.
    pub summary: RestoreSummary,
    /// Errors found once the entries were written (an include that matched nothing, files
    /// that do not read back as the snapshot holds them), each a line without `dedup: error: `.
    pub problems: Vec<String>,
}

impl RestoreOutcome {
    /// Whether every entry was restored, as asked, and read back right when verified.
    pub fn complete(&self) -> bool {
        self.summary.errors == 0 && self.problems.is_empty()
    }
}

/// Restores what `request` names from `repo`. Changes and problems go to `events` as they
/// happen; `restored` is set once the entries are written (before they are verified), for a
/// progress display to stop.
pub fn restore_snapshot(
    repo: &Arc<Repository>,
    request: &RestoreRequest<'_>,
    events: &impl Events,
    restored: &AtomicBool,
) -> Result<RestoreOutcome> {
    let (spec, path) = split_spec(request.spec)?;
    let (id, node) = super::restore_node(repo, spec, &request.filter, path)?;
    let selection = Selection::new(request.includes, request.excludes)?;
    let pick = |rel: &[u8], node: &Node, within: bool| selection.pick(rel, node, within);
    let filter = selection.active().then_some(&pick as Filter<'_>);
    let mut protected = match request.repository {
        Some(repository) => guard_repository(repository, request.target)?,
        None => Vec::new(),
    };
    // The repository's own directory comes first.
    let repository = protected.first().map(|p| p.id);
    protected.extend(request.password_file.map_or_else(Vec::new, guard_password_file));
    let options = RestoreOptions {
        overwrite: request.overwrite,
        delete: request.delete,
        dry_run: request.dry_run,
        filter,
        protected: &protected,
        repository,
    };
    raise_open_files_limit();
    let summary = restore(repo, &node, request.target, options, events);
    restored.store(true, Ordering::Relaxed);
    let summary = summary?;
    let unmatched: Vec<String> =
        selection.unmatched().iter().map(|p| quote_path(Path::new(p))).collect();
    if selection.nothing_matched() {
        return Err(Error::Invalid(format!(
            "nothing in the snapshot matches --include {}; nothing was restored",
            unmatched.join(", ")
        )));
    }
    let mut problems: Vec<String> = unmatched
        .iter()
        .map(|pattern| format!("--include {pattern}: matches nothing in the snapshot"))
        .collect();
    if request.verify {
        let found = verify(repo, &node, request.target, filter, events)?;
        if found.bad > 0 {
            problems
                .push(format!("{} restored files do not hold what the snapshot does", found.bad));
        }
    }
    Ok(RestoreOutcome { id, summary, problems })
}

/// The repository's directory (first) and every directory above it, as (device, inode): what a
/// restore must not remove. Refused when the target lies inside the repository (a restore
/// would write among its files, and `--delete` remove them).
fn guard_repository(repository: &Path, target: &Path) -> Result<Vec<Protected>> {
    let Ok(repository) = repository.canonicalize() else { return Ok(Vec::new()) };
    let protected: Vec<Protected> = repository
        .ancestors()
        .filter_map(id_of)
        .map(|id| Protected { id, why: HOLDS_REPOSITORY })
        .collect();
    let Some(own) = protected.first().map(|p| p.id) else { return Ok(Vec::new()) };
    // The target, or the nearest directory of it that exists (it is made if missing).
    let target_path = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
    let inside = target_path.ancestors().find_map(|dir| {
        let dir = dir.canonicalize().ok()?;
        Some(dir.ancestors().filter_map(id_of).any(|d| d == own))
    });
    if inside == Some(true) {
        return Err(Error::Invalid(format!(
            "{}: lies inside the repository {} restored from; nothing was restored",
            quote_path(target),
            quote_path(&repository)
        )));
    }
    Ok(protected)
}

/// The password file and every directory above it: what a restore must not remove, nor the
/// file replace.
fn guard_password_file(file: &Path) -> Vec<Protected> {
    let Ok(file) = file.canonicalize() else { return Vec::new() };
    let ids = file.ancestors().filter_map(id_of).enumerate();
    ids.map(|(i, id)| Protected {
        id,
        why: if i == 0 { IS_PASSWORD_FILE } else { HOLDS_PASSWORD_FILE },
    })
    .collect()
}

/// The (device, inode) of what `path` names, following symlinks.
fn id_of(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// `SNAPSHOT[:PATH]` split at the first `:`; the snapshot part must be text, the path any bytes.
fn split_spec(spec: &OsStr) -> Result<(&str, &[u8])> {
    let bytes = spec.as_bytes();
    let (snapshot, path) = match bytes.iter().position(|&b| b == b':') {
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
        None => (bytes, &[][..]),
    };
    let snapshot = std::str::from_utf8(snapshot).map_err(|e| {
        Error::Invalid(format!("{}: not a snapshot id: {e}", quote_path(Path::new(spec))))
    })?;
    Ok((snapshot, path))
}

/// Lets the restore hold as many files open as the system allows it: each file of a batch is
/// open from its creation to its rename, and each directory of the walk's path.
fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        // Best effort: with the lower limit the restore only runs smaller batches.
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_splits_at_its_first_colon_and_keeps_the_path_bytes() {
        let spec = OsStr::from_bytes(b"latest:/a:b/\xff");
        assert_eq!(split_spec(spec).unwrap(), ("latest", &b"/a:b/\xff"[..]));
        assert_eq!(split_spec(OsStr::new("abcd")).unwrap(), ("abcd", &b""[..]));
        let bad = split_spec(OsStr::from_bytes(b"\xff:/a")).unwrap_err().to_string();
        assert!(bad.starts_with("\"\\xff:/a\": not a snapshot id: "), "{bad}");
    }
}
